import Bluetide

/// Why a serial link operation failed. Each description says what was wrong and what to try.
public enum SerialLinkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The device has no HM-10 or Nordic UART service (or not the characteristics named);
    /// `services` lists what it has, one "SERVICE [CHARACTERISTIC properties, …]" each.
    case noUARTService(device: String, services: [String])
    /// The link is down (reconnecting) and `queued` bytes already wait for it; taking
    /// `offered` more would pass the bound of `limit` bytes, so they were refused (none taken).
    case linkDown(device: String, queued: Int, offered: Int, limit: Int)
    /// The link is closed for good; `reason` says why.
    case closed(device: String, reason: String)
    /// No device with that name or address was seen; `seen` lists the names that were.
    case deviceNotFound(String, seconds: Double, seen: [String])
    /// `limit` links are open, the most allowed at a time.
    case tooManyLinks(limit: Int)

    public var description: String {
        switch self {
        case let .noUARTService(device, services):
            "\(device) has no UART service (HM-10 FFE0/FFE1 or Nordic UART 6E400001); it has: "
                + (services.isEmpty ? "(no services)" : services.joined(separator: "; "))
                + ". Name the characteristics with --service UUID --write UUID --notify UUID"
        case let .linkDown(device, queued, offered, limit):
            "\(device) is reconnecting: \(queued) bytes already wait for the link, \(offered) more would pass the limit of \(limit) (--outage-buffer); these were not sent"
        case let .closed(device, reason): "the link to \(device) is closed: \(reason)"
        case let .deviceNotFound(target, seconds, seen):
            "no device named \(target) seen within \(Self.format(seconds)) s; "
                + (seen.isEmpty ? "no devices were seen at all: is the transport right (--transport), is the device on?"
                    : "seen: \(seen.joined(separator: ", "))")
        case let .tooManyLinks(limit):
            "already \(limit) link\(limit == 1 ? "" : "s") open, the most allowed; raise --max-connections"
        }
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
