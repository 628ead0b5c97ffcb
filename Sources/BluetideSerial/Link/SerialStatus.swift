import Bluetide

/// What happens to a ``SerialLink``, in order.
public enum SerialStatus: Sendable, Equatable, CustomStringConvertible {
    /// The link is up, speaking `profile` with writes of `chunkSize` bytes.
    case connected(profile: SerialProfile, chunkSize: Int)
    /// The link went down; `reason` says why (HCI reason in words).
    case disconnected(reason: String)
    /// Reconnect attempt `attempt` of `of` is starting.
    case reconnecting(attempt: Int, of: Int)
    /// The link is back (services found again, notifications restored); queued bytes go out now.
    case reconnected
    /// Reconnecting failed every attempt, the link stayed down past its outage limit
    /// (``SerialLinkOptions/outageLimit``), or it was lost with reconnection off; the link is
    /// closed.
    case gaveUp(reason: String)
    /// The link's signal strength, dBm.
    case rssi(Int)
    /// The link was closed by ``SerialLink/close()``.
    case closed

    /// A short name for JSON: connected, disconnected, reconnecting, reconnected, gave-up, rssi, closed.
    public var name: String {
        switch self {
        case .connected: "connected"
        case .disconnected: "disconnected"
        case .reconnecting: "reconnecting"
        case .reconnected: "reconnected"
        case .gaveUp: "gave-up"
        case .rssi: "rssi"
        case .closed: "closed"
        }
    }

    /// The event's details as JSON-ready fields (besides its name).
    public var fields: [String: String] {
        switch self {
        case let .connected(profile, chunk): ["profile": profile.kind.rawValue, "chunk": String(chunk)]
        case let .disconnected(reason): ["reason": reason]
        case let .reconnecting(attempt, of): ["attempt": String(attempt), "of": String(of)]
        case let .gaveUp(reason): ["reason": reason]
        case let .rssi(dBm): ["rssi": String(dBm)]
        case .reconnected, .closed: [:]
        }
    }

    /// The event in words.
    public var description: String {
        switch self {
        case let .connected(profile, chunk): "connected: \(profile), \(chunk)-byte writes"
        case let .disconnected(reason): "link lost: \(reason)"
        case let .reconnecting(attempt, of): "reconnecting (attempt \(attempt) of \(of))…"
        case .reconnected: "reconnected"
        case let .gaveUp(reason): "gave up: \(reason)"
        case let .rssi(dBm): "RSSI \(dBm) dBm"
        case .closed: "closed"
        }
    }
}
