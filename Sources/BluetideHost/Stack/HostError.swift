import BluetideBase
import BluetideHCI

/// Why a host stack operation failed. Descriptions say what happened and what to try.
public enum HostError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stack was never started, or has been closed.
    case notRunning
    /// The transport failed; the stack stopped. The text is the transport's error.
    case transportFailed(String)
    /// A connection attempt did not complete in time.
    case connectTimedOut(BluetoothAddress, seconds: Double)
    /// The controller refused or failed to establish the connection.
    case connectFailed(BluetoothAddress, status: HCIStatus)
    /// Another connection attempt is still in progress (controllers allow one at a time).
    case connectInProgress
    /// No open connection has this handle (it was closed, or never existed).
    case noSuchConnection(UInt16)
    /// The link went down while the operation waited; `reason` is the HCI disconnection reason.
    case disconnected(UInt16, reason: HCIStatus)
    /// An HCI command failed or was not answered.
    case command(String)
    /// A controller answer could not be decoded.
    case malformed(String)
    /// A wait ran out of time.
    case timedOut(String, seconds: Double)

    public var description: String {
        switch self {
        case .notRunning: "the host stack is not running (start it first, or it was closed)"
        case let .transportFailed(text): "transport failed: \(text)"
        case let .connectTimedOut(address, seconds):
            "no connection to \(address) within \(formatSeconds(seconds)) s: is it advertising and connectable, and is the address type (/P public, /R random) right?"
        case let .connectFailed(address, status): "connection to \(address) failed: \(status)"
        case .connectInProgress: "another connection attempt is in progress; wait for it or cancel it"
        case let .noSuchConnection(handle): "no open connection with handle 0x\(String(handle, radix: 16))"
        case let .disconnected(handle, reason):
            "connection 0x\(String(handle, radix: 16)) closed (\(reason)) before the operation finished"
        case let .command(text): text
        case let .malformed(text): text
        case let .timedOut(what, seconds): "\(what): no answer within \(formatSeconds(seconds)) s"
        }
    }
}

func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
}
