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

/// Line endings the user's Enter (or a piped newline) becomes.
enum LineEnding: String, CaseIterable, Sendable {
    case cr, lf, crlf, none

    var bytes: [UInt8] {
        switch self {
        case .cr: [0x0D]
        case .lf: [0x0A]
        case .crlf: [0x0D, 0x0A]
        case .none: []
        }
    }

    /// `bytes` cut after each line end (LF, CRLF or a lone CR), each end replaced by this ending:
    /// the lines to send as one write each; the last piece is an unfinished line (no end yet)
    /// when `bytes` do not end with a line end. `pendingCR` as in ``convert(_:pendingCR:)``.
    func lineWrites(_ bytes: [UInt8], pendingCR: inout Bool) -> [(bytes: [UInt8], complete: Bool)] {
        var pieces: [(bytes: [UInt8], complete: Bool)] = []
        var current: [UInt8] = []
        for byte in bytes {
            if byte == 0x0A, pendingCR { pendingCR = false; continue }
            pendingCR = false
            if byte == 0x0A || byte == 0x0D {
                pieces.append((current + self.bytes, true))
                current = []
                pendingCR = byte == 0x0D
            } else {
                current.append(byte)
            }
        }
        if !current.isEmpty { pieces.append((current, false)) }
        return pieces
    }

    /// `bytes` with each line end (LF, CRLF or a lone CR) replaced by this ending. `pendingCR`
    /// carries a CR that ended the previous chunk so a CRLF split across reads stays one end.
    func convert(_ bytes: [UInt8], pendingCR: inout Bool) -> [UInt8] {
        var out: [UInt8] = []
        for byte in bytes {
            if byte == 0x0A, pendingCR { pendingCR = false; continue }
            pendingCR = false
            if byte == 0x0A || byte == 0x0D {
                out += self.bytes
                pendingCR = byte == 0x0D
            } else {
                out.append(byte)
            }
        }
        return out
    }
}

/// Whole lines out of pieces that may cut a line (reads from a pipe): an unfinished line is held
/// until its end comes (or input ends), so each line goes out as one write. A line longer than
/// 4 KB is let go as it is (a line mode is for commands, not for bulk data).
struct LineWrites {
    private var pending: [UInt8] = []

    /// The complete lines `pieces` finish, in order (empty lines, e.g. with `--eol none`, are left out).
    mutating func feed(_ pieces: [(bytes: [UInt8], complete: Bool)]) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        for piece in pieces {
            pending += piece.bytes
            if piece.complete || pending.count > 4096 {
                if !pending.isEmpty { lines.append(pending) }
                pending = []
            }
        }
        return lines
    }

    /// The unfinished line held, if any (at the end of input).
    mutating func flush() -> [UInt8]? {
        defer { pending = [] }
        return pending.isEmpty ? nil : pending
    }
}
