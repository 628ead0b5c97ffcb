import Bluetide
import BluetideBase
import BluetideProfiles
import BluetideSupport

/// Commands a Tacx trainer with ANT+ FE-C pages over BLE (write `6E40FEC3-…`, frames on
/// `6E40FEC2-…`).
///
/// Each command is one acknowledged-data frame with its checksum (page 48 resistance, 49 target
/// power, 50 wind and 51 grade for simulation, 55 user data). It is confirmed by the trainer's
/// following pages: a page 70 request asks for page 71 (command status), whose last command must
/// be ours with status pass; fail, not supported or rejected throw ``TrainerControlError``, and
/// so does no confirmation within ``timeout``.
public actor FECTrainerControl: TrainerControl {
    /// The trainer.
    public nonisolated let device: RideDevice
    /// The trainer's own reports (command status changes).
    public nonisolated let statusUpdates: AsyncStream<TrainerStatusUpdate>
    /// How long a command waits for its confirmation.
    public nonisolated let timeout: Duration
    private let connection: Connection
    private let statusContinuation: AsyncStream<TrainerStatusUpdate>.Continuation
    /// A trainer answers one command at a time: commands go in arrival order.
    private let lock = AsyncLock()
    /// The time base of ``statusUpdates`` (on the connection's clock).
    private let start: BluetideClock.Instant

    /// Control over `connection` (already connected, services discovered).
    public init(connection: Connection, device: RideDevice, timeout: Duration = .seconds(5)) {
        self.connection = connection
        self.device = device
        self.timeout = timeout
        start = connection.clock.now
        (statusUpdates, statusContinuation) = AsyncStream<TrainerStatusUpdate>.makeStream(bufferingPolicy: .bufferingNewest(64))
    }

    /// Ends ``statusUpdates``.
    public func stop() { statusContinuation.finish() }

    /// Writes `page` as a command and waits for the trainer's page 71 confirming it.
    public func send(_ page: FECPage) async throws {
        try await lock.run { try await self.exchange(page) }
    }

    private func exchange(_ page: FECPage) async throws {
        let what = Self.describe(page)
        let frames: AsyncThrowingStream<[UInt8], any Error>
        do {
            frames = try await connection.notifications(of: .tacxFECNotify)
        } catch {
            throw TrainerControlError(request: what, reason: "cannot subscribe to the FE-C frames: \(error)")
        }
        let request = FECPage.requestDataPage(FECRequestDataPage(requestedPageNumber: FECCommandStatus.pageNumber, requestedTransmissionResponse: 2))
        do {
            try await connection.write(FECFrame.command(page), to: .tacxFECWrite)
            try await connection.write(FECFrame.command(request), to: .tacxFECWrite)
        } catch {
            throw TrainerControlError(request: what, reason: "the write failed: \(error)")
        }
        let number = page.pageNumber
        let status = try await firstMatch(in: frames, within: timeout, on: connection.clock) { bytes -> FECCommandStatus? in
            guard let frame = try? FECFrame(bytes: bytes), case let .commandStatus(status) = frame.page,
                  status.lastCommandPage == number, status.status != .pending else { return nil }
            return status
        }
        guard let status else {
            throw TrainerControlError(
                request: what, reason: "the trainer did not confirm it (no page 71 within \(timeout); is it an FE-C trainer?)")
        }
        guard status.status == .pass else {
            throw TrainerControlError(request: what, reason: "the trainer answered \"\(status.status)\" in page 71")
        }
        statusContinuation.yield(TrainerStatusUpdate(time: connection.clock.now.seconds(since: start), text: "\(what): confirmed"))
    }

    static func describe(_ page: FECPage) -> String {
        switch page {
        case let .targetPower(p): "set target power \(RideFormat.fixed(p.watts, 0)) W (page 49)"
        case let .trackResistance(p): "set grade \(RideFormat.fixed(p.gradePercent, 2)) % (page 51)"
        case let .windResistance(p): "set wind \(p.windSpeedKmh) km/h (page 50)"
        case let .basicResistance(p): "set resistance \(RideFormat.fixed(p.resistancePercent, 1)) % (page 48)"
        case .userConfiguration: "set user data (page 55)"
        default: "page \(page.pageNumber)"
        }
    }

    // MARK: TrainerControl

    public func setTargetPower(watts: Int) async throws {
        try await send(.targetPower(FECTargetPower(watts: Double(min(max(watts, 0), 4000)))))
    }

    public func setSimulation(_ p: SimulationParameters) async throws {
        if p.windSpeedMetersPerSecond != 0 || p.windResistanceKgPerMeter != 0.51 {
            try await send(.windResistance(FECWindResistance(
                windResistanceHundredthKgPerMeter: UInt8(clamping: Int((p.windResistanceKgPerMeter * 100).rounded())),
                windSpeedOffsetKmh: UInt8(clamping: Int((p.windSpeedMetersPerSecond * 3.6).rounded()) + 127))))
        }
        try await send(.trackResistance(FECTrackResistance(
            gradePercent: min(max(p.gradePercent, -200), 200),
            rollingResistance5e5: UInt8(clamping: Int((p.rollingResistance / 5e-5).rounded())))))
    }

    public func setResistance(percent: Double) async throws {
        try await send(.basicResistance(FECBasicResistance(
            totalResistanceHalfPercent: UInt8(clamping: Int((min(max(percent, 0), 100) * 2).rounded())))))
    }

    public func setUserData(riderKilograms: Double, bikeKilograms: Double, wheelCircumferenceMeters: Double) async throws {
        try await send(.userConfiguration(FECUserConfiguration(
            userWeightHundredthKg: UInt16(clamping: Int((riderKilograms * 100).rounded())),
            bicycleWeightTwentiethKg: UInt16(clamping: Int((bikeKilograms * 20).rounded())),
            wheelDiameterCentimeters: UInt8(clamping: Int((wheelCircumferenceMeters / Double.pi * 100).rounded())))))
    }

    /// FE-C has no reset: back to a flat road.
    public func reset() async throws {
        try await send(.trackResistance(FECTrackResistance(gradePercent: 0)))
    }
}
