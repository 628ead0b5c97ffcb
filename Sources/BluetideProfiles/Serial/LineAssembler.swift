/// One line reassembled from serial chunks.
public struct SerialLine: Hashable, Sendable, Encodable {
    /// The line's bytes, without its terminator.
    public var bytes: [UInt8]
    /// True when the line was cut because it reached the buffer limit (see ``LineAssembler``).
    public var overflowed: Bool

    public init(bytes: [UInt8], overflowed: Bool = false) {
        self.bytes = bytes
        self.overflowed = overflowed
    }

    /// The bytes as text (UTF-8, invalid sequences replaced by U+FFFD).
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    private enum CodingKeys: String, CodingKey { case text, overflowed }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(text, forKey: .text)
        try c.encode(overflowed, forKey: .overflowed)
    }
}

/// Reassembles incoming serial chunks (notifications) into lines.
///
/// - Terminators: by default any of `\n`, `\r\n` or `\r` ends a line (a `\r\n` split across two
///   chunks still counts as one terminator); ``Terminator`` narrows that to one convention.
/// - A partial line is kept until its terminator arrives (``pending``), or handed out by ``flush()``.
/// - The buffer is bounded by ``maxLineLength`` bytes. When a line reaches it without a terminator,
///   ``OverflowPolicy/split`` (the default) hands out those bytes as a line marked `overflowed` and
///   carries on with the rest; ``OverflowPolicy/discard`` drops the line up to the next terminator
///   and then reports it once as an empty line marked `overflowed`.
public struct LineAssembler: Hashable, Sendable {
    /// Which bytes end a line.
    public enum Terminator: Hashable, Sendable, Encodable {
        /// `\n`, `\r\n` or `\r`.
        case any
        /// `\n` only (a `\r` before it is kept in the line).
        case lineFeed
        /// `\r\n` only.
        case carriageReturnLineFeed
        /// `\r` only.
        case carriageReturn
    }

    /// What happens when a line grows past ``maxLineLength``.
    public enum OverflowPolicy: Hashable, Sendable, Encodable {
        /// Emit the first `maxLineLength` bytes as an `overflowed` line and keep going.
        case split
        /// Drop bytes until the next terminator, then emit one empty `overflowed` line.
        case discard
    }

    /// Default bound on a line, in bytes.
    public static let defaultMaxLineLength = 4096

    /// Which terminators end a line.
    public let terminator: Terminator
    /// Most bytes held for one line (at least 1).
    public let maxLineLength: Int
    /// What happens at the bound.
    public let overflowPolicy: OverflowPolicy

    private var buffer: [UInt8] = []
    private var lastWasCarriageReturn = false
    private var discarding = false

    public init(terminator: Terminator = .any, maxLineLength: Int = LineAssembler.defaultMaxLineLength, overflowPolicy: OverflowPolicy = .split) {
        self.terminator = terminator
        self.maxLineLength = max(1, maxLineLength)
        self.overflowPolicy = overflowPolicy
    }

    /// Bytes of the unfinished line.
    public var pending: [UInt8] { buffer }

    /// Adds one chunk; returns the lines it completes, in order.
    public mutating func feed(_ chunk: [UInt8]) -> [SerialLine] {
        var lines: [SerialLine] = []
        for byte in chunk {
            let afterCR = lastWasCarriageReturn
            lastWasCarriageReturn = false
            switch (terminator, byte) {
            case (.any, 0x0A) where afterCR:
                continue  // the \n of a \r\n whose \r already ended the line
            case (.any, 0x0A), (.any, 0x0D), (.lineFeed, 0x0A), (.carriageReturn, 0x0D):
                lastWasCarriageReturn = byte == 0x0D
                lines.append(finishLine())
                continue
            case (.carriageReturnLineFeed, 0x0A) where buffer.last == 0x0D || (discarding && afterCR):
                if !buffer.isEmpty { buffer.removeLast() }
                lines.append(finishLine())
                continue
            default:
                break
            }
            if terminator == .carriageReturnLineFeed, byte == 0x0D { lastWasCarriageReturn = true }
            if discarding { continue }
            buffer.append(byte)
            // A line of exactly maxLineLength bytes fits; in \r\n mode a trailing \r may be the terminator's start.
            let allowance = terminator == .carriageReturnLineFeed && byte == 0x0D ? 1 : 0
            if buffer.count > maxLineLength + allowance {
                switch overflowPolicy {
                case .split:
                    lines.append(SerialLine(bytes: Array(buffer.prefix(maxLineLength)), overflowed: true))
                    buffer = Array(buffer.dropFirst(maxLineLength))
                case .discard:
                    buffer = []
                    discarding = true
                }
            }
        }
        return lines
    }

    /// Hands out the unfinished line (if any) and empties the buffer, e.g. when the link drops.
    public mutating func flush() -> SerialLine? {
        defer { buffer = []; discarding = false; lastWasCarriageReturn = false }
        if discarding { return SerialLine(bytes: [], overflowed: true) }
        return buffer.isEmpty ? nil : SerialLine(bytes: buffer)
    }

    private mutating func finishLine() -> SerialLine {
        defer { buffer = []; discarding = false }
        return discarding ? SerialLine(bytes: [], overflowed: true) : SerialLine(bytes: buffer)
    }
}
