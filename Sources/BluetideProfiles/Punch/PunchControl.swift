import BluetideBase

/// Commands written to punchControl: `01` start, `02` stop, `03 <s>` start after an s-second countdown.
public enum PunchControlCommand: GATTCodable, Hashable, Sendable, Encodable {
    /// `01`: run the sequences written before.
    case start
    /// `02`: stop a running sequence.
    case stop
    /// `03 <seconds>`: count down (e.g. `03 03` = 3-2-1), then start.
    case countdownStart(seconds: UInt8)

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let at = reader.offset
        let code = try reader.readUInt8("Punch control.command")
        switch code {
        case 0x01: self = .start
        case 0x02: self = .stop
        case 0x03: self = .countdownStart(seconds: try reader.readUInt8("Punch control.countdown seconds"))
        default: throw .invalid("Punch control.command", expected: "01 start, 02 stop or 03 countdown", found: "0x\([code].hexString)", at: at)
        }
    }

    public func encode(to writer: inout ByteWriter) {
        switch self {
        case .start: writer.write(UInt8(0x01))
        case .stop: writer.write(UInt8(0x02))
        case let .countdownStart(s): writer.write(UInt8(0x03)); writer.write(s)
        }
    }

    /// `start`, `stop`, `start after 3 s countdown`.
    public var summary: String {
        switch self {
        case .start: return "start"
        case .stop: return "stop"
        case let .countdownStart(s): return "start after \(s) s countdown"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        switch self {
        case .start: try c.encode("start", forKey: .command)
        case .stop: try c.encode("stop", forKey: .command)
        case let .countdownStart(s): try c.encode("countdownStart", forKey: .command); try c.encode(s, forKey: .countdownSeconds)
        }
    }
    private enum Keys: String, CodingKey { case command, countdownSeconds }
}

/// Error codes the device notifies after `E0`.
public struct PunchErrorCode: RawRepresentable, Hashable, Sendable, Encodable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// `E0 01`: sequences missing, or their lengths differ.
    public static let sequencesMissing = Self(rawValue: 0x01)
    /// `E0 02`: a target index is out of range.
    public static let targetOutOfRange = Self(rawValue: 0x02)
    /// `E0 03`: a step's time is 0 or above 60 000 ms.
    public static let timeOutOfRange = Self(rawValue: 0x03)

    public var description: String {
        switch self {
        case .sequencesMissing: return "sequences missing or lengths differ"
        case .targetOutOfRange: return "target index out of range"
        case .timeOutOfRange: return "step time is 0 or above 60000 ms"
        default: return "error 0x\([rawValue].hexString)"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}

/// Statuses notified on punchControl: `10` armed, `11` running, `12 <uint16 LE>` finished with steps
/// done, `13` stopped, `E0 <code>` error.
public enum PunchControlStatus: GATTCodable, Hashable, Sendable, Encodable {
    /// `10`: sequences loaded, waiting (e.g. during a countdown).
    case armed
    /// `11`: running.
    case running
    /// `12 <steps>`: finished after this many steps.
    case finished(stepsDone: UInt16)
    /// `13`: stopped by a stop command.
    case stopped
    /// `E0 <code>`: refused or failed.
    case error(PunchErrorCode)

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let at = reader.offset
        let code = try reader.readUInt8("Punch control.status")
        switch code {
        case 0x10: self = .armed
        case 0x11: self = .running
        case 0x12: self = .finished(stepsDone: try reader.read(UInt16.self, "Punch control.steps done"))
        case 0x13: self = .stopped
        case 0xE0: self = .error(PunchErrorCode(rawValue: try reader.readUInt8("Punch control.error code")))
        default:
            throw .invalid("Punch control.status", expected: "10, 11, 12, 13 or E0", found: "0x\([code].hexString)", at: at)
        }
    }

    public func encode(to writer: inout ByteWriter) {
        switch self {
        case .armed: writer.write(UInt8(0x10))
        case .running: writer.write(UInt8(0x11))
        case let .finished(n): writer.write(UInt8(0x12)); writer.write(n)
        case .stopped: writer.write(UInt8(0x13))
        case let .error(code): writer.write(UInt8(0xE0)); writer.write(code.rawValue)
        }
    }

    /// `armed`, `finished after 20 steps`, `error 2: target index out of range`.
    public var summary: String {
        switch self {
        case .armed: return "armed"
        case .running: return "running"
        case let .finished(n): return "finished after \(n) steps"
        case .stopped: return "stopped"
        case let .error(code): return "error \(code.rawValue): \(code)"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        switch self {
        case .armed: try c.encode("armed", forKey: .status)
        case .running: try c.encode("running", forKey: .status)
        case let .finished(n): try c.encode("finished", forKey: .status); try c.encode(n, forKey: .stepsDone)
        case .stopped: try c.encode("stopped", forKey: .status)
        case let .error(code):
            try c.encode("error", forKey: .status)
            try c.encode(code, forKey: .errorCode)
            try c.encode(code.description, forKey: .error)
        }
    }
    private enum Keys: String, CodingKey { case status, stepsDone, errorCode, error }
}

/// A value on punchControl in either direction: commands (first byte 01...03) or statuses (10...13, E0).
public enum PunchControlMessage: GATTCodable, Hashable, Sendable, Encodable {
    /// Written by the coach.
    case command(PunchControlCommand)
    /// Notified by the device.
    case status(PunchControlStatus)

    public init(from reader: inout ByteReader) throws(DecodingError) {
        if let first = reader.peek(), first < 0x10 {
            self = .command(try PunchControlCommand(from: &reader))
        } else {
            self = .status(try PunchControlStatus(from: &reader))
        }
    }

    public func encode(to writer: inout ByteWriter) {
        switch self {
        case let .command(c): c.encode(to: &writer)
        case let .status(s): s.encode(to: &writer)
        }
    }

    /// One readable line.
    public var summary: String {
        switch self {
        case let .command(c): return "command: \(c.summary)"
        case let .status(s): return "status: \(s.summary)"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case let .command(c): try c.encode(to: encoder)
        case let .status(s): try s.encode(to: encoder)
        }
    }
}

/// The punchControl characteristic's value (``PunchControlMessage``): commands written, statuses notified.
public typealias PunchControl = PunchControlMessage
