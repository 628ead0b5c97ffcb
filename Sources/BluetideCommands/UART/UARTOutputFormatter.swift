import Foundation

/// Turns bytes received from one or more devices into what the terminal or pipe shows: the raw
/// bytes, or hex, with a device-name prefix (several devices) and a time stamp at each line's
/// start. A line that one device left unfinished is ended before another device's bytes.
/// Pure logic: bytes and the time in, bytes out.
struct UARTOutputFormatter {
    /// Show bytes as hex pairs (one line per received chunk) instead of as they are.
    var hex: Bool
    /// Prefix each line with the device's name (several devices).
    var prefixNames: Bool
    /// Prefix each line with the local time, HH:MM:SS.mmm.
    var timestamps: Bool

    private var lastDevice: String?
    private var atLineStart = true

    init(hex: Bool = false, prefixNames: Bool = false, timestamps: Bool = false) {
        self.hex = hex
        self.prefixNames = prefixNames
        self.timestamps = timestamps
    }

    /// What to print for `bytes` received from `device` at `time`.
    mutating func format(_ bytes: [UInt8], from device: String, at time: Date) -> [UInt8] {
        var out: [UInt8] = []
        if lastDevice != device, !atLineStart, prefixNames || timestamps {
            out.append(0x0A)
            atLineStart = true
        }
        lastDevice = device
        if hex {
            if !atLineStart { out.append(0x0A) }
            out += Array((prefix(device, time) + bytes.map { String(format: "%02X", $0) }.joined(separator: " ") + "\n").utf8)
            atLineStart = true
            return out
        }
        let decorate = prefixNames || timestamps
        for byte in bytes {
            if atLineStart, decorate { out += Array(prefix(device, time).utf8) }
            out.append(byte)
            atLineStart = byte == 0x0A
        }
        return out
    }

    /// Whether bytes are shown with anything added (hex, names, times).
    var decorates: Bool { hex || prefixNames || timestamps }

    /// Ends an unfinished line (before a status message or at exit); empty when at a line start.
    mutating func endLine() -> [UInt8] {
        guard !atLineStart else { return [] }
        atLineStart = true
        return [0x0A]
    }

    private func prefix(_ device: String, _ time: Date) -> String {
        var text = ""
        if timestamps { text += "[\(Self.clock(time))] " }
        if prefixNames { text += "[\(device)] " }
        return text
    }

    static func clock(_ time: Date) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        return formatter.string(from: time)
    }
}
