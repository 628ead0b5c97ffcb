/// Road conditions for a trainer's simulation mode.
public struct SimulationParameters: Sendable, Hashable, Codable {
    /// Grade, % (positive uphill).
    public var gradePercent: Double
    /// Head wind, m/s (negative: tail wind).
    public var windSpeedMetersPerSecond: Double
    /// Rolling resistance coefficient Crr (0.004 on a good road).
    public var rollingResistance: Double
    /// Wind resistance coefficient Cw, kg/m (½·ρ·CdA; 0.51 for a rider on the hoods).
    public var windResistanceKgPerMeter: Double

    /// Parameters; only the grade is usually changed.
    public init(
        gradePercent: Double, windSpeedMetersPerSecond: Double = 0, rollingResistance: Double = 0.004,
        windResistanceKgPerMeter: Double = 0.51
    ) {
        self.gradePercent = gradePercent
        self.windSpeedMetersPerSecond = windSpeedMetersPerSecond
        self.rollingResistance = rollingResistance
        self.windResistanceKgPerMeter = windResistanceKgPerMeter
    }
}

/// A trainer that refused or did not answer a command: which request, and why.
public struct TrainerControlError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request, e.g. `set target power 200 W`.
    public var request: String
    /// Why it failed, e.g. `the trainer answered "control not permitted" (05)`.
    public var reason: String

    /// An error with these parts.
    public init(request: String, reason: String) {
        self.request = request
        self.reason = reason
    }

    /// `trainer refused set target power 200 W: …`.
    public var description: String { "trainer: \(request) failed: \(reason)" }
}

/// Something a trainer reported about its own state (FTMS Fitness Machine Status, FE-C command
/// status), in words.
public struct TrainerStatusUpdate: Sendable, Hashable, CustomStringConvertible {
    /// Seconds since the control started.
    public var time: Double
    /// What changed, e.g. `target power changed to 200 W`.
    public var text: String
    /// Whether the app lost control and must ask again (FTMS 0xFF).
    public var controlLost: Bool

    /// An update with these parts.
    public init(time: Double, text: String, controlLost: Bool = false) {
        self.time = time
        self.text = text
        self.controlLost = controlLost
    }

    /// The text.
    public var description: String { text }
}

/// One way to command a smart trainer, whether it speaks FTMS or FE-C: ERG, simulation and
/// resistance. Each call returns once the trainer confirmed the command, and throws
/// ``TrainerControlError`` naming the request when it refused or did not answer in time.
public protocol TrainerControl: Sendable {
    /// The trainer.
    var device: RideDevice { get }
    /// ERG: hold `watts` whatever the cadence.
    func setTargetPower(watts: Int) async throws
    /// Simulation: grade, wind and resistance coefficients; the rider's effort decides the power.
    func setSimulation(_ parameters: SimulationParameters) async throws
    /// Basic resistance, 0…100 % of the trainer's range.
    func setResistance(percent: Double) async throws
    /// Rider and bike masses (kg) and wheel circumference (m), for the trainer's physics.
    func setUserData(riderKilograms: Double, bikeKilograms: Double, wheelCircumferenceMeters: Double) async throws
    /// Back to free riding (FTMS Reset releases control).
    func reset() async throws
    /// The trainer's own reports, as they come; ends when the control stops. One consumer (a
    /// ``RideSession`` relays them as its notices).
    var statusUpdates: AsyncStream<TrainerStatusUpdate> { get }
}

extension TrainerControl {
    /// Applies `target`: ERG power, a grade, or a resistance.
    public func apply(_ target: RideTarget) async throws {
        switch target {
        case let .power(watts): try await setTargetPower(watts: watts)
        case let .grade(percent): try await setSimulation(SimulationParameters(gradePercent: percent))
        case let .resistance(percent): try await setResistance(percent: percent)
        }
    }
}
