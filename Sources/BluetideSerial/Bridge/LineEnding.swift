/// Line endings the user's Enter (or a piped newline) becomes: cr, lf, crlf, or none (the line end is dropped).
public enum LineEnding: String, CaseIterable, Sendable {
    case cr, lf, crlf, none

    /// The bytes of the ending.
    public var bytes: [UInt8] {
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
    public func lineWrites(_ bytes: [UInt8], pendingCR: inout Bool) -> [(bytes: [UInt8], complete: Bool)] {
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
    public func convert(_ bytes: [UInt8], pendingCR: inout Bool) -> [UInt8] {
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
public struct LineWrites: Sendable {
    private var pending: [UInt8] = []

    /// Nothing held yet.
    public init() {}

    /// The complete lines `pieces` finish, in order (empty lines, e.g. with `--eol none`, are left out).
    public mutating func feed(_ pieces: [(bytes: [UInt8], complete: Bool)]) -> [[UInt8]] {
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
    public mutating func flush() -> [UInt8]? {
        defer { pending = [] }
        return pending.isEmpty ? nil : pending
    }
}
