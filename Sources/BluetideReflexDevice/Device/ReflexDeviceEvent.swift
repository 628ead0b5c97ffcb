import Bluetide
import BluetideProfiles

/// Something the device did or saw, for logs and the CLI (one line each, see ``line``).
public enum ReflexDeviceEvent: Sendable, Equatable {
    /// Advertising under `name` from `address`.
    case started(name: String, address: BluetoothAddress)
    /// A coach connected.
    case coachConnected(BluetoothAddress)
    /// A coach disconnected; `stoppedRun` when that stopped the run in progress (it was the last coach).
    case coachDisconnected(BluetoothAddress, stoppedRun: Bool)
    /// A coach wrote a valid punchSequence.
    case sequenceReceived(PunchSequence)
    /// A coach wrote a valid punchTimeSequence.
    case timeSequenceReceived(PunchTimeSequence)
    /// A coach wrote a control command.
    case command(PunchControlCommand)
    /// The device notified a status.
    case status(PunchControlStatus)
    /// The device notified a step result.
    case response(PunchResponse)

    /// One readable line, e.g. `response: step 7: hit target 3 after 0.412 s`.
    public var line: String {
        switch self {
        case let .started(name, address): return "advertising as \(name) (\(address))"
        case let .coachConnected(address): return "coach connected: \(address)"
        case let .coachDisconnected(address, stopped):
            return "coach disconnected: \(address)" + (stopped ? " (run stopped, LEDs off)" : "")
        case let .sequenceReceived(sequence):
            return "sequence received: \(sequence.count) steps, targets \(sequence.targets.map(String.init).joined(separator: " "))"
        case let .timeSequenceReceived(times):
            return "time sequence received: \(times.count) steps, ms \(times.milliseconds.map(String.init).joined(separator: " "))"
        case let .command(command): return "command: \(command.summary)"
        case let .status(status):
            switch status {
            case .running: return "run started"
            case let .finished(steps): return "run finished: \(steps) steps"
            default: return "status: \(status.summary)"
            }
        case let .response(response): return "response: \(response.summary)"
        }
    }
}
