#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How a smart trainer loads the rider.
public enum TrainerMode: Hashable, Sendable {
    /// No target: the rider rides at their own power on the set road (flat until told otherwise).
    case free
    /// ERG: the trainer holds this power whatever the cadence; speed is the virtual speed on a
    /// flat road at that power.
    case targetPower(watts: Double)
    /// Simulation: the rider keeps their own power; speed follows grade, rolling and air
    /// resistance and wind (``RoadConditions``).
    case simulation
    /// Basic resistance as a fraction 0...1 of the maximum; modelled as a climb of up to 10 %.
    case resistance(fraction: Double)
}

/// The physical side of an emulated smart trainer, shared by the FTMS and FE-C models: a rider
/// pedalling at a cadence with a power, a brake following the mode, and a bike on a road.
public struct TrainerEngine: Hashable, Sendable {
    /// Current control mode.
    public var mode: TrainerMode = .free
    /// Road used in free and simulation modes.
    public var road = RoadConditions.flat
    /// Power the rider produces when nothing forces it, watts.
    public var riderPowerWatts: Double
    /// Cadence the rider holds, rpm.
    public var riderCadenceRPM: Double
    /// Whether the rider is pedalling (false after stop/pause).
    public var isPedalling = true
    /// Power currently delivered, watts (converges to the target with a ~1.5 s lag).
    public private(set) var powerWatts: Double
    /// Cadence now, rpm.
    public private(set) var cadenceRPM: Double
    /// The bike on the road.
    public private(set) var physics: RiderPhysics
    /// Seconds spent pedalling.
    public private(set) var elapsedSeconds: Double = 0
    /// Energy delivered, joules.
    public private(set) var energyJoules: Double = 0
    private var lastTime: Double?

    /// Power lag time constant, seconds.
    public static let powerTimeConstant = 1.5

    /// Memberwise initialiser.
    public init(riderPowerWatts: Double, riderCadenceRPM: Double, massKilograms: Double) {
        self.riderPowerWatts = riderPowerWatts
        self.riderCadenceRPM = riderCadenceRPM
        powerWatts = riderPowerWatts
        cadenceRPM = riderCadenceRPM
        physics = RiderPhysics(massKilograms: massKilograms)
        physics.settle(watts: riderPowerWatts)
    }

    /// Speed now, m/s.
    public var speedMetersPerSecond: Double { physics.speedMetersPerSecond }
    /// Distance since start, metres.
    public var distanceMeters: Double { physics.distanceMeters }

    /// The power the mode asks for, watts.
    public var targetPowerWatts: Double {
        guard isPedalling else { return 0 }
        if case let .targetPower(watts) = mode { return max(0, watts) }
        return riderPowerWatts
    }

    /// The road the bike feels in the current mode.
    public var effectiveRoad: RoadConditions {
        switch mode {
        case .free, .simulation: return road
        case .targetPower: return .flat
        case let .resistance(fraction):
            var r = RoadConditions.flat
            r.gradePercent = min(max(fraction, 0), 1) * 10
            return r
        }
    }

    /// Advances to `now` (seconds on the model's clock).
    public mutating func advance(to now: Double) {
        guard let last = lastTime else {
            lastTime = now
            return
        }
        guard now > last else { return }
        lastTime = now
        let dt = now - last
        let target = targetPowerWatts
        powerWatts += (target - powerWatts) * (1 - exp(-dt / Self.powerTimeConstant))
        if abs(powerWatts - target) < 0.01 { powerWatts = target }
        cadenceRPM = isPedalling ? riderCadenceRPM : 0
        physics.road = effectiveRoad
        physics.advance(seconds: dt, watts: powerWatts)
        if isPedalling { elapsedSeconds += dt }
        energyJoules += powerWatts * dt
    }

    /// Sets rider plus bike mass, kg (FE-C page 55).
    public mutating func setMass(_ kilograms: Double) {
        guard kilograms.isFinite, kilograms > 20 else { return }
        physics.massKilograms = kilograms
    }

    /// Back to free riding on a flat road, counters kept.
    public mutating func resetTargets() {
        mode = .free
        road = .flat
    }
}
