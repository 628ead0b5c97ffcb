import Logging

/// The host's loggers, one per layer, for what it drops: malformed events, data on unknown
/// handles, undecodable PDUs. Drops are logged at `debug` (a peer's bad bytes are answered or
/// ignored, not errors of this program); the application sets the level (the CLI's
/// `--log-level`/`-v`).
enum HostLog {
    /// HCI events and ACL data (label `bluetide.hci`).
    static let hci = Logger(label: "bluetide.hci")
    /// L2CAP routing and signalling (label `bluetide.l2cap`).
    static let l2cap = Logger(label: "bluetide.l2cap")
    /// ATT bearers (label `bluetide.att`).
    static let att = Logger(label: "bluetide.att")
    /// GATT client and server (label `bluetide.gatt`).
    static let gatt = Logger(label: "bluetide.gatt")
    /// Connecting, scanning and advertising: what a connect waits for (label `bluetide.gap`).
    static let gap = Logger(label: "bluetide.gap")
}

extension Array where Element == UInt8 {
    /// Hex text of at most the first 32 bytes, for log lines.
    var logHex: String {
        let shown = prefix(32).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
        return count > 32 ? shown + "… (\(count) bytes)" : shown
    }
}
