import BluetideBase

/// The result of one step, notified on punchResponse.
///
/// ```
/// 0  4  reaction time, uint32 LE, milliseconds
/// 4  1  target index 0-5 (the lit target)
/// 5  1  flags: bit0 hit (0 = missed: timed out), bit1 wrong target hit first
/// 6  2  step index, uint16 LE
/// ```
/// The device's original 5-byte form (time + target) still decodes: hit is then `time > 0` and the
/// step is unknown (nil); such a value encodes back to 5 bytes.
public struct PunchResponse: GATTCodable, Hashable, Sendable, Encodable {
    /// Reaction time in milliseconds (for a miss, the step's whole interval).
    public var reactionTimeMilliseconds: UInt32
    /// The lit target, 0...5.
    public var target: UInt8
    /// The athlete hit the lit target before the step timed out.
    public var hit: Bool
    /// Another target was hit first.
    public var wrongTargetFirst: Bool
    /// Step index in the sequence; nil in the legacy 5-byte form.
    public var step: UInt16?

    public init(reactionTimeMilliseconds: UInt32, target: UInt8, hit: Bool, wrongTargetFirst: Bool = false, step: UInt16?) {
        self.reactionTimeMilliseconds = reactionTimeMilliseconds
        self.target = target
        self.hit = hit
        self.wrongTargetFirst = wrongTargetFirst
        self.step = step
    }

    /// Reaction time in seconds.
    public var reactionTimeSeconds: Double { Double(reactionTimeMilliseconds) / 1000 }
    /// True for a value in the original 5-byte form.
    public var isLegacyFormat: Bool { step == nil }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        reactionTimeMilliseconds = try reader.read(UInt32.self, "PunchResponse.reaction time")
        let targetAt = reader.offset
        target = try reader.readUInt8("PunchResponse.target")
        guard target <= PunchSequence.maxTarget else {
            throw .invalid("PunchResponse.target", expected: "0...5", found: "\(target)", at: targetAt)
        }
        if reader.isAtEnd {
            hit = reactionTimeMilliseconds > 0
            wrongTargetFirst = false
            step = nil
            return
        }
        let flags = try reader.readUInt8("PunchResponse.flags")
        hit = flags & 0x01 != 0
        wrongTargetFirst = flags & 0x02 != 0
        step = try reader.read(UInt16.self, "PunchResponse.step")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(reactionTimeMilliseconds)
        writer.write(target)
        guard let step else { return }
        writer.write(UInt8((hit ? 0x01 : 0) | (wrongTargetFirst ? 0x02 : 0)))
        writer.write(step)
    }

    /// `step 7: hit target 3 after 0.412 s`.
    public var summary: String {
        let stepText = step.map { "step \($0)" } ?? "step ?"
        let wrong = wrongTargetFirst ? " (wrong target first)" : ""
        return hit
            ? "\(stepText): hit target \(target) after \(reactionTimeSeconds) s\(wrong)"
            : "\(stepText): missed target \(target) (\(reactionTimeSeconds) s)\(wrong)"
    }

    private enum CodingKeys: String, CodingKey { case reactionTimeMilliseconds, reactionTimeSeconds, target, hit, wrongTargetFirst, step, legacyFormat }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(reactionTimeMilliseconds, forKey: .reactionTimeMilliseconds)
        try c.encode(reactionTimeSeconds, forKey: .reactionTimeSeconds)
        try c.encode(target, forKey: .target)
        try c.encode(hit, forKey: .hit)
        try c.encode(wrongTargetFirst, forKey: .wrongTargetFirst)
        try c.encodeIfPresent(step, forKey: .step)
        try c.encode(isLegacyFormat, forKey: .legacyFormat)
    }
}
