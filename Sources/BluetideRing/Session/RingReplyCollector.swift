import Bluetide

/// What one ring request waits for before it counts as answered.
public enum RingReplyKind: Hashable, Sendable {
    /// The first V1 packet with this opcode (battery, settings, set time, …).
    case packet(opcode: UInt8)
    /// The first V1 packet with this opcode whose payload starts with `prefix`: a setting's read
    /// reply (`16 01 …`), told apart from the echo of an earlier write (`16 02 …`).
    case reply(opcode: UInt8, prefix: [UInt8])
    /// A day's heart-rate log (`15`, header + up to 23 packets, or `15 FF`).
    case heartRateLog
    /// A day's steps (`43`, header + one packet per active quarter hour, or `43 FF`).
    case sportDetail
    /// Stress (`37`) or HRV (`39`) half-hour history.
    case halfHourHistory(opcode: UInt8)
    /// A V2 big-data frame with this data id (sleep `27`, SpO2 `2A`, temperature `25`).
    case bigData(id: UInt8)

    /// The V1 opcode the reply echoes (0xBC for big data).
    public var opcode: UInt8 {
        switch self {
        case let .packet(opcode): opcode
        case let .reply(opcode, _): opcode
        case .heartRateLog: COLMIOpcode.heartRateLog
        case .sportDetail: COLMIOpcode.sportDetail
        case let .halfHourHistory(opcode): opcode
        case .bigData: COLMIOpcode.bigData
        }
    }
}

/// A complete answer to one request.
public enum RingReply: Hashable, Sendable {
    /// A single packet.
    case packet(COLMIPacket)
    /// A heart-rate log; nil when the ring has none for that day.
    case heartRateLog(COLMIHeartRateLog?)
    /// A day's steps; nil when none.
    case sportDetail(COLMISportDetail?)
    /// Stress or HRV history; nil when none.
    case halfHourHistory(COLMIHalfHourHistory?)
    /// A big-data frame (CRC checked).
    case bigData(COLMIBigDataFrame)
}

/// Matches incoming packets to one outstanding request and assembles multi-packet replies.
/// Pure logic: feed it notifications, it says whether they belong to the request and when the
/// reply is complete. Packets of other opcodes (unsolicited `73`, `2F`, real-time readings)
/// are ``Step/notMine``.
public struct RingReplyCollector: Sendable {
    /// Where the reply stands after one more notification.
    public enum Step: Hashable, Sendable {
        /// Not part of this reply.
        case notMine
        /// Part of it; more to come.
        case waiting
        /// The whole reply.
        case done(RingReply)
        /// Part of it, but it cannot be assembled (out of order, bad CRC, …): ask again.
        case failed(String)
    }

    /// What is awaited.
    public let kind: RingReplyKind
    private var heartRate = COLMIHeartRateLogAssembler()
    private var sport = COLMISportDetailAssembler()
    private var halfHour: COLMIHalfHourHistoryAssembler
    private var bigData = COLMIBigDataReassembler()

    public init(_ kind: RingReplyKind) {
        self.kind = kind
        if case let .halfHourHistory(opcode) = kind {
            halfHour = COLMIHalfHourHistoryAssembler(opcode: opcode)
        } else {
            halfHour = COLMIHalfHourHistoryAssembler(opcode: COLMIOpcode.stressHistory)
        }
    }

    /// Starts over (before a retry).
    public mutating func reset() { self = Self(kind) }

    /// Feeds one V1 packet (checksum already checked).
    public mutating func feed(_ packet: COLMIPacket) -> Step {
        guard packet.opcode == kind.opcode else { return .notMine }
        do {
            switch kind {
            case .packet:
                return .done(.packet(packet))
            case let .reply(_, prefix):
                return packet.payload.starts(with: prefix) ? .done(.packet(packet)) : .notMine
            case .heartRateLog:
                return Self.step(try heartRate.feed(packet)) { .heartRateLog($0) }
            case .sportDetail:
                return Self.step(try sport.feed(packet)) { .sportDetail($0) }
            case .halfHourHistory:
                return Self.step(try halfHour.feed(packet)) { .halfHourHistory($0) }
            case .bigData:
                return .notMine
            }
        } catch {
            return .failed("\(error)")
        }
    }

    /// Feeds one V2 (big-data) notification.
    public mutating func feed(bigDataChunk chunk: [UInt8]) -> Step {
        guard case let .bigData(id) = kind else { return .notMine }
        do {
            for frame in try bigData.feed(chunk) where frame.dataID == id {
                return .done(.bigData(frame))
            }
            return bigData.isInProgress ? .waiting : .notMine
        } catch {
            return .failed("\(error)")
        }
    }

    private static func step<T>(_ progress: COLMIAssemblyProgress<T>, _ wrap: (T?) -> RingReply) -> Step {
        switch progress {
        case .ignored: .notMine
        case .noData: .done(wrap(nil))
        case .inProgress: .waiting
        case let .complete(value): .done(wrap(value))
        }
    }
}
