#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The road a simulated rider rides on: grade, rolling resistance, air drag and wind.
public struct RoadConditions: Hashable, Sendable {
    /// Grade in percent (positive uphill).
    public var gradePercent: Double
    /// Rolling resistance coefficient Crr (e.g. 0.004).
    public var rollingResistance: Double
    /// Wind resistance coefficient Cw in kg/m (½·ρ·CdA, e.g. 0.51).
    public var windResistanceKgPerMeter: Double
    /// Head wind speed in m/s (negative = tail wind).
    public var windSpeedMetersPerSecond: Double

    /// Memberwise initialiser.
    public init(
        gradePercent: Double = 0, rollingResistance: Double = 0.004, windResistanceKgPerMeter: Double = 0.51,
        windSpeedMetersPerSecond: Double = 0
    ) {
        self.gradePercent = gradePercent
        self.rollingResistance = rollingResistance
        self.windResistanceKgPerMeter = windResistanceKgPerMeter
        self.windSpeedMetersPerSecond = windSpeedMetersPerSecond
    }

    /// A flat road with default coefficients.
    public static let flat = RoadConditions()
}

/// A rider and bike on a road: given the power at the pedals, speed follows Newton's law
/// `m·dv/dt = P/v − m·g·(Crr·cos θ + sin θ) − Cw·(v + w)·|v + w|`.
public struct RiderPhysics: Hashable, Sendable {
    /// Rider plus bike mass, kg.
    public var massKilograms: Double
    /// Current road.
    public var road: RoadConditions
    /// Current speed, m/s.
    public private(set) var speedMetersPerSecond: Double
    /// Distance covered, metres.
    public private(set) var distanceMeters: Double = 0

    /// Memberwise initialiser.
    public init(massKilograms: Double = 83, road: RoadConditions = .flat, speedMetersPerSecond: Double = 0) {
        self.massKilograms = massKilograms
        self.road = road
        self.speedMetersPerSecond = speedMetersPerSecond
    }

    /// Resisting force at speed `v` on the current road, newtons.
    public func resistingForce(atSpeed v: Double) -> Double {
        let theta = atan(road.gradePercent / 100)
        let gravity = massKilograms * 9.81 * (road.rollingResistance * cos(theta) + sin(theta))
        let air = v + road.windSpeedMetersPerSecond
        return gravity + road.windResistanceKgPerMeter * air * abs(air)
    }

    /// The steady speed at which `watts` balances the resistance (bisection; 0 when the power
    /// cannot move the bike, e.g. 0 W on the flat).
    public func steadySpeed(forPower watts: Double) -> Double {
        var low = 0.0, high = 40.0
        for _ in 0..<60 {
            let mid = (low + high) / 2
            if watts - resistingForce(atSpeed: mid) * mid > 0 { low = mid } else { high = mid }
        }
        return low
    }

    /// Integrates `seconds` of riding at `watts` (in steps of at most 50 ms).
    public mutating func advance(seconds: Double, watts: Double) {
        guard seconds > 0, seconds.isFinite else { return }
        var left = seconds
        while left > 0 {
            let dt = min(left, 0.05)
            let v = speedMetersPerSecond
            let drive = max(watts, 0) / max(v, 0.5)
            let accel = (drive - resistingForce(atSpeed: v)) / massKilograms
            var next = v + accel * dt
            if !next.isFinite || next < 0 { next = 0 }
            next = min(next, 40)
            distanceMeters += (v + next) / 2 * dt
            speedMetersPerSecond = next
            left -= dt
        }
    }

    /// Jumps straight to the steady speed for `watts` (used at start-up).
    public mutating func settle(watts: Double) { speedMetersPerSecond = steadySpeed(forPower: watts) }
}
