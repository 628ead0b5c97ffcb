/// Where a ride's values come from: live devices or a recording. The session neither knows nor
/// cares which (the article's pattern: develop the game without the bike).
public protocol RideDataSource: Sendable {
    /// Starts the source and returns its events, which end when the source does (a recording
    /// played once, or ``stop()``).
    func start() async throws -> AsyncStream<RideEvent>
    /// The devices the source gives values of (known after ``start()``).
    var devices: [RideDevice] { get async }
    /// The trainer's control, when a live trainer is connected.
    var trainer: (any TrainerControl)? { get async }
    /// The live trainer's Device Information (manufacturer, model, …), when it serves it.
    var trainerInformation: RideDeviceInformation? { get async }
    /// Stops the source: disconnects devices or ends the replay. Idempotent.
    func stop() async
}

extension RideDataSource {
    /// No trainer information, unless the source reads it (live trainers).
    public var trainerInformation: RideDeviceInformation? { get async { nil } }
}
