import BluetideBase

/// Progress of a big-data frame spread over several notifications.
public struct COLMIBigDataProgress: Hashable, Sendable, Encodable {
    /// Bytes of the frame received so far.
    public var receivedBytes: Int
    /// Bytes the whole frame needs (header + payload), when known.
    public var expectedBytes: Int?
}

/// Something the ring sent that completes a multi-packet reply.
public enum COLMIAssembledHistory: Hashable, Sendable, Encodable {
    /// A day's heart-rate log (0x15).
    case heartRateLog(COLMIHeartRateLog)
    /// A day's sport detail (0x43).
    case sportDetail(COLMISportDetail)
    /// Stress or HRV history (0x37 / 0x39).
    case halfHourHistory(COLMIHalfHourHistory)

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case let .heartRateLog(v): try COLMITaggedEncoding.encode(encoder, kind: "heartRateLog", value: v)
        case let .sportDetail(v): try COLMITaggedEncoding.encode(encoder, kind: "sportDetail", value: v)
        case let .halfHourHistory(v): try COLMITaggedEncoding.encode(encoder, kind: v.kind, value: v)
        }
    }
}

/// Decodes what the ring notifies, on either channel, one notification at a time.
///
/// A notification starting with 0xBC (or any chunk while a big-data frame is incomplete) goes to the
/// V2 reassembler; anything else must be one 16-byte V1 packet. Multi-packet replies (HR log, sport
/// detail, stress, HRV) are reassembled across calls; the packet that completes one carries the
/// result as its derived value. Unsolicited packets in between decode on their own and do not
/// disturb the reassembly. A sequence problem (a log packet without its header, a missing packet)
/// does not fail the packet: its summary ends with `[not reassembled: …]`.
public struct COLMINotificationDecoder: PacketDecoder, Hashable {
    private var heartRateLog = COLMIHeartRateLogAssembler()
    private var sportDetail = COLMISportDetailAssembler()
    private var stress = COLMIHalfHourHistoryAssembler(opcode: COLMIOpcode.stressHistory)
    private var hrv = COLMIHalfHourHistoryAssembler(opcode: COLMIOpcode.hrvHistory)
    private var bigData = COLMIBigDataReassembler()

    public init() {}

    public mutating func decode(_ bytes: [UInt8], at time: Double) throws(DecodingError) -> DecodedPacket {
        if bigData.isInProgress || bytes.first == COLMIBigDataFrame.magic {
            return try decodeBigData(bytes)
        }
        let packet = try COLMIPacket(exactly: bytes)
        let response = try COLMIResponse(packet: packet)
        var assembled: COLMIAssembledHistory?
        var note = ""
        do {
            if case let .complete(log) = try heartRateLog.feed(packet) {
                assembled = .heartRateLog(log)
                note = " → HR log of \(COLMIDateTime(secondsSince1970: log.dayStartTimestamp).description.prefix(10)) complete, \(log.measurements.count) measurements"
            }
            if case let .complete(day) = try sportDetail.feed(packet) {
                assembled = .sportDetail(day)
                note = " → sport detail complete: \(day.totalSteps) steps, \(day.totalDistanceMeters) m"
            }
            for progress in [try stress.feed(packet), try hrv.feed(packet)] {
                if case let .complete(history) = progress {
                    assembled = .halfHourHistory(history)
                    note = " → \(history.kind) history complete, \(history.valuesBySlot.filter { $0 != 0 }.count) values"
                }
            }
        } catch {
            // The packet itself is fine; only the sequence around it is not (e.g. a capture that
            // starts mid-reply). Report it on the line rather than losing the packet.
            note = " [not reassembled: \(error)]"
        }
        return DecodedPacket(summary: response.summary + note, value: response, derived: assembled)
    }

    private mutating func decodeBigData(_ bytes: [UInt8]) throws(DecodingError) -> DecodedPacket {
        let frames = try bigData.feed(bytes)
        guard let frame = frames.last else {
            let progress = COLMIBigDataProgress(receivedBytes: bigData.bufferedByteCount, expectedBytes: bigData.expectedFrameSize)
            let of = progress.expectedBytes.map { " of \($0)" } ?? ""
            return DecodedPacket(summary: "big data: \(progress.receivedBytes)\(of) bytes received", value: progress)
        }
        let payload = try COLMIBigDataPayload(frame: frame)
        return DecodedPacket(summary: payload.summary, value: payload, derived: frame)
    }
}
