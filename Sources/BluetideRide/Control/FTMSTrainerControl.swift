import Bluetide
import BluetideBase
import BluetideProfiles
import BluetideSupport

/// Commands an FTMS trainer through its Fitness Machine Control Point (0x2AD9).
///
/// FTMS sequencing: control is requested (`00`) before the first command and again after the
/// trainer reports losing it; every write is answered by an indication `80 op result`, awaited
/// within ``timeout``. A result other than success throws ``TrainerControlError`` naming the
/// request and the result. Fitness Machine Status (0x2ADA) notifications become
/// ``statusUpdates``.
public actor FTMSTrainerControl: TrainerControl {
    /// The trainer.
    public nonisolated let device: RideDevice
    /// The trainer's own reports.
    public nonisolated let statusUpdates: AsyncStream<TrainerStatusUpdate>
    /// How long a command waits for its indication.
    public nonisolated let timeout: Duration
    private let connection: Connection
    private let statusContinuation: AsyncStream<TrainerStatusUpdate>.Continuation
    /// A trainer answers one command at a time: commands go in arrival order.
    private let lock = AsyncLock()
    /// The time base of ``statusUpdates`` (on the connection's clock).
    private let start: BluetideClock.Instant
    private var hasControl = false
    private var resistanceRange: SupportedResistanceLevelRange?
    private var watcher: Task<Void, Never>?
    private var indications: AsyncThrowingStream<[UInt8], any Error>?

    /// Control over `connection` (already connected, services discovered). Call ``start()``.
    public init(connection: Connection, device: RideDevice, timeout: Duration = .seconds(5)) {
        self.connection = connection
        self.device = device
        self.timeout = timeout
        start = connection.clock.now
        (statusUpdates, statusContinuation) = AsyncStream<TrainerStatusUpdate>.makeStream(bufferingPolicy: .bufferingNewest(64))
    }

    /// Subscribes to the control point's indications and to Fitness Machine Status, and reads the
    /// supported resistance range (when served).
    public func start() async throws {
        indications = try await connection.notifications(of: .fitnessMachineControlPoint)
        resistanceRange = try? await connection.read(.supportedResistanceLevelRange, as: SupportedResistanceLevelRange.self)
        let status = try? await connection.notifications(of: .fitnessMachineStatus, as: FitnessMachineStatus.self)
        let continuation = statusContinuation
        let origin = start, clock = connection.clock
        watcher = Task { [weak self] in
            guard let status else { return }
            do {
                for try await change in status {
                    let lost = change == .controlPermissionLost
                    if lost { await self?.forgetControl() }
                    continuation.yield(TrainerStatusUpdate(
                        time: clock.now.seconds(since: origin), text: Self.describe(change), controlLost: lost))
                }
            } catch {}
            continuation.finish()
        }
    }

    private func forgetControl() { hasControl = false }

    /// The trainer's supported resistance range (read at ``start()``), when it serves one.
    public var supportedResistanceRange: SupportedResistanceLevelRange? { resistanceRange }

    /// Stops watching the status.
    public func stop() {
        watcher?.cancel()
        statusContinuation.finish()
    }

    /// Writes `request` (asking for control first when needed) and returns once the trainer
    /// answered success.
    public func send(_ request: FitnessMachineControlPointRequest) async throws {
        try await lock.run { try await self.exchange(request) }
    }

    private func exchange(_ request: FitnessMachineControlPointRequest) async throws {
        if request != .requestControl, !hasControl {
            try await writeAndAwait(.requestControl)
            hasControl = true
        }
        try await writeAndAwait(request)
        switch request {
        case .requestControl: hasControl = true
        case .reset: hasControl = false
        default: break
        }
    }

    private func writeAndAwait(_ request: FitnessMachineControlPointRequest) async throws {
        let what = Self.describe(request)
        // A sequence of our own, made before the write so the answer cannot slip past.
        let answers: AsyncThrowingStream<[UInt8], any Error>
        do {
            answers = try await connection.notifications(of: .fitnessMachineControlPoint)
        } catch {
            throw TrainerControlError(request: what, reason: "cannot subscribe to the control point: \(error)")
        }
        do {
            try await connection.write(request, to: .fitnessMachineControlPoint)
        } catch {
            throw TrainerControlError(request: what, reason: "the write failed: \(error)")
        }
        let opcode = request.opcode
        let response = try await firstMatch(in: answers, within: timeout, on: connection.clock) { bytes -> FitnessMachineControlPointResponse? in
            guard let response = try? FitnessMachineControlPointResponse(bytes: bytes), response.requestOpcode == opcode else {
                return nil
            }
            return response
        }
        guard let response else {
            throw TrainerControlError(
                request: what, reason: "no answer on the control point within \(timeout) (is the trainer on and in range?)")
        }
        guard response.result == .success else {
            throw TrainerControlError(request: what, reason: Self.explain(response.result))
        }
    }

    /// Why a result code is not success, with what to try.
    static func explain(_ result: FTMSResultCode) -> String {
        let code = String(result.rawValue, radix: 16, uppercase: true)
        let hint: String
        switch result {
        case .opCodeNotSupported: hint = "this trainer does not support it"
        case .invalidParameter: hint = "the value is outside the trainer's supported range"
        case .operationFailed: hint = "the trainer could not do it now; try again"
        case .controlNotPermitted: hint = "another app holds control; close it, or reset the trainer"
        default: hint = "unknown result code"
        }
        return "the trainer answered \"\(result)\" (0x\(code.count < 2 ? "0" + code : code)): \(hint)"
    }

    static func describe(_ request: FitnessMachineControlPointRequest) -> String {
        switch request {
        case .requestControl: "request control"
        case .reset: "reset"
        case let .setTargetPower(watts): "set target power \(watts) W"
        case let .setTargetResistanceLevel(tenths): "set resistance level \(RideFormat.fixed(Double(tenths) / 10, 1))"
        case let .setIndoorBikeSimulation(p): "set simulation (grade \(RideFormat.fixed(p.gradePercent, 2)) %)"
        case let .setWheelCircumference(tenths): "set wheel circumference \(RideFormat.fixed(Double(tenths) / 10, 1)) mm"
        default: "\(request)"
        }
    }

    static func describe(_ status: FitnessMachineStatus) -> String {
        switch status {
        case let .targetPowerChanged(watts): "target power changed to \(watts) W"
        case let .indoorBikeSimulationParametersChanged(p): "simulation changed: grade \(RideFormat.fixed(p.gradePercent, 2)) %"
        case let .targetResistanceLevelChanged(tenths): "resistance level changed to \(RideFormat.fixed(Double(tenths) / 10, 1))"
        case .controlPermissionLost: "control lost (another app or the trainer took it)"
        case .reset: "trainer reset"
        default: "\(status)"
        }
    }

    // MARK: TrainerControl

    public func setTargetPower(watts: Int) async throws {
        try await send(.setTargetPower(watts: Int16(clamping: watts)))
    }

    public func setSimulation(_ p: SimulationParameters) async throws {
        try await send(.setIndoorBikeSimulation(parameters: IndoorBikeSimulationParameters(
            windSpeedMillimetersPerSecond: Int16(clamping: Int((p.windSpeedMetersPerSecond * 1000).rounded())),
            gradeHundredthPercent: Int16(clamping: Int((p.gradePercent * 100).rounded())),
            rollingResistanceTenThousandths: UInt8(clamping: Int((p.rollingResistance * 10_000).rounded())),
            windResistanceHundredthKgPerMeter: UInt8(clamping: Int((p.windResistanceKgPerMeter * 100).rounded())))))
    }

    public func setResistance(percent: Double) async throws {
        let fraction = min(max(percent, 0), 100) / 100
        // The trainer's own range when it serves one (0.1 units), else 0…100 % as 0…100.0.
        let low = Double(resistanceRange?.minimumRaw ?? 0), high = Double(resistanceRange?.maximumRaw ?? 1000)
        let raw = low + (high - low) * fraction
        try await send(.setTargetResistanceLevel(tenths: UInt8(clamping: Int(raw.rounded()))))
    }

    public func setUserData(riderKilograms: Double, bikeKilograms: Double, wheelCircumferenceMeters: Double) async throws {
        try await send(.setWheelCircumference(tenthMillimeters: UInt16(clamping: Int((wheelCircumferenceMeters * 10_000).rounded()))))
    }

    public func reset() async throws { try await send(.reset) }
}
