import Bluetide
import BluetideProfiles

/// The reflex trainer's Punch service (reflex-trainer.md), as the device serves it:
///
/// | characteristic | properties | value |
/// |---|---|---|
/// | punchResponse | read, notify | ``PunchResponse``, assigned once per step |
/// | punchTimeSequence | read, write | ``PunchTimeSequence`` (empty until a coach writes one) |
/// | punchSequence | read, write | ``PunchSequence`` (empty until a coach writes one) |
/// | punchControl | write, notify | commands written, ``PunchControlStatus`` notified |
///
/// An invalid sequence or time sequence (empty, target above 5, time 0 or above 60 000 ms, an
/// odd number of time bytes, more than `PunchSequence.maxSteps` (256) steps) is refused with
/// ATT error 0x80 and the previous value stays. Values longer than MTU − 3 arrive as long
/// (prepared) writes; ATT caps an attribute at 512 octets, which is why a program has at most
/// 256 steps (2 octets of time each); a longer time sequence is refused with 0x0D by the server.
/// On punchControl only commands (`01`, `02`, `03 n`) may be written; anything else is 0x80.
public final class PunchService: GATTService, Sendable {
    /// The Punch service UUID.
    public static let uuid = PunchUUID.service

    /// The latest step result; assigning its `value` notifies subscribed coaches.
    public let response = Characteristic(
        PunchUUID.response, [.read, .notify], value: PunchResponse(reactionTimeMilliseconds: 0, target: 0, hit: false, step: 0),
        description: "Punch response")

    /// Milliseconds per step, as last written by a coach.
    public let timeSequence = Characteristic(
        PunchUUID.timeSequence, [.read, .write], value: StoredPunchValue<PunchTimeSequence>(), description: "Punch time sequence")

    /// Target per step, as last written by a coach.
    public let sequence = Characteristic(
        PunchUUID.sequence, [.read, .write], value: StoredPunchValue<PunchSequence>(), description: "Punch sequence")

    /// Commands written by coaches; statuses assigned to its `value` are notified.
    public let control = Characteristic(
        PunchUUID.control, [.write, .notify], value: PunchControlMessage.status(.stopped), description: "Punch control",
        validate: { message in
            if case .command = message { return nil }
            return ATTErrorCode(PunchUUID.invalidSequenceATTError)
        })

    /// A service with no sequences yet.
    public init() {}
}


/// A sequence characteristic's value: nothing until a coach writes a valid one.
///
/// Decoding (a coach's write) requires a valid `Value`: invalid content and, for time
/// sequences, a byte count that is not a multiple of two are refused as invalid values (ATT
/// error 0x80). Encoding a missing value gives no bytes.
public struct StoredPunchValue<Value: GATTCodable & Hashable & Sendable>: GATTCodable, Hashable, Sendable {
    /// The value, nil before the first valid write.
    public var value: Value?

    /// A stored value (nil for none).
    public init(_ value: Value? = nil) { self.value = value }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let start = reader.offset
        let bytes = reader.readRemaining()
        var inner = ByteReader(bytes)
        do {
            value = try Value(from: &inner)
        } catch {
            // Whatever is wrong with a sequence (also an odd number of time bytes, which the
            // codec reports as truncated) makes it an invalid sequence: 0x80.
            if case .invalidValue = error.kind { throw error }
            throw .invalid("Punch sequence", expected: "a valid sequence", found: "\(error)", at: start)
        }
    }

    public func encode(to writer: inout ByteWriter) {
        value?.encode(to: &writer)
    }
}
