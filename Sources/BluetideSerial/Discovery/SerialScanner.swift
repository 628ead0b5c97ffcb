import Bluetide
import Foundation

/// Finding serial devices: a timed search for UART-capable devices ranked by RSSI, and looking
/// a device up by name or address.
public struct SerialScanner: Sendable {
    /// The central scanning.
    public let central: Central

    /// A scanner on `central`.
    public init(central: Central) { self.central = central }

    /// Scans for `timeout` and returns the devices that advertise an HM-10 or Nordic UART service
    /// (or, with `everything`, every device), strongest first, each once.
    public func discover(timeout: Duration = .seconds(5), everything: Bool = false) async throws -> [Advertisement] {
        let all = try await central.discover(filter: ScanFilter(), timeout: timeout)
        return everything ? all : all.filter(Self.isUART)
    }

    /// Whether `advertisement` names a UART service (FFE0 or 6E400001).
    public static func isUART(_ advertisement: Advertisement) -> Bool {
        !Set(advertisement.serviceUUIDs).isDisjoint(with: SerialProfile.advertisedServices)
    }

    /// The UART services an advertisement names, as words ("HM-10", "Nordic UART").
    public static func serviceNames(_ advertisement: Advertisement) -> [String] {
        var names: [String] = []
        if advertisement.serviceUUIDs.contains(SerialUUID.hm10Service) { names.append("HM-10") }
        if advertisement.serviceUUIDs.contains(SerialUUID.nordicUARTService) { names.append("Nordic UART") }
        return names
    }

    /// Finds the device `target` names: an advertised name, or an address (`AA:BB:…`, optionally
    /// with `/P` public or `/R` random). Scans at most `timeout` (``Central/find(_:within:round:)``);
    /// the error lists the names seen. With `minimumRSSI` (dBm), the device is taken only from an
    /// advertisement at least that strong.
    public func find(_ target: String, timeout: Duration = .seconds(10), minimumRSSI: Int? = nil) async throws -> Advertisement {
        var query = DeviceQuery(parsing: target)
        query.minimumRSSI = minimumRSSI
        do {
            return try await central.find(query, within: timeout)
        } catch let notFound as DeviceNotFound {
            throw SerialLinkError.deviceNotFound(
                target.trimmingCharacters(in: .whitespaces), seconds: notFound.seconds, seen: notFound.seen)
        }
    }
}
