import Bluetide
import Foundation

/// Finding COLMI rings nearby.
public enum RingDiscovery {
    /// Whether `advertisement` looks like a COLMI ring: it lists the ring's UART service
    /// (6E40FFF0-…), or its name is one the rings use (`R02_…`, `R03_…`, …, `RY02…`, `COLMI R10_…`).
    public static func isRing(_ advertisement: Advertisement) -> Bool {
        if advertisement.serviceUUIDs.contains(COLMIUUID.service) { return true }
        guard let name = advertisement.name else { return false }
        return name.range(of: #"^(R\d\d_|RY\d\d|RT\d\d|COLMI R\d\d)"#, options: .regularExpression) != nil
    }

    /// Scans for `timeout` and returns the rings seen, strongest signal first.
    public static func discover(_ central: Central, timeout: Duration = .seconds(4)) async throws -> [Advertisement] {
        try await central.discover(timeout: timeout).filter(isRing)
    }

    /// Signal strength as 0...4 bars (−90 dBm or weaker is 0, −55 dBm or stronger is 4).
    public static func bars(rssi: Int) -> Int { max(0, min(4, (rssi + 90) * 4 / 35)) }
}
