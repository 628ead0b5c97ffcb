import BluetideBase

/// Why a sequence or time sequence is refused, naming the step (0-based) and the problem.
/// The device refuses such writes with ATT error 0x80 and reports the matching ``controlErrorCode``.
public struct PunchValidationError: Error, Hashable, Sendable, Encodable, CustomStringConvertible {
    /// The offending step (0-based), or nil for a problem with the whole sequence.
    public var step: Int?
    /// What is wrong, e.g. `target 7 is outside 0...5`.
    public var problem: String
    /// The error the device notifies on punchControl for this problem.
    public var controlErrorCode: PunchErrorCode

    public init(step: Int?, problem: String, controlErrorCode: PunchErrorCode) {
        self.step = step
        self.problem = problem
        self.controlErrorCode = controlErrorCode
    }

    public var description: String { step.map { "step \($0): \(problem)" } ?? problem }
}

/// The targets to light, one per step (punchSequence): N × uint8, each 0...5, 1...``maxSteps`` (256) steps.
public struct PunchSequence: GATTCodable, Hashable, Sendable, Encodable {
    /// Highest target index (six targets).
    public static let maxTarget: UInt8 = 5
    /// Most steps in a program, for both the sequence and the time sequence: the one limit the
    /// coach (CLI, web editor, random generator, store) and the device check. ATT caps an
    /// attribute value at 512 octets and a time sequence takes 2 octets a step, so a trainer
    /// holds at most 256 steps.
    public static let maxSteps = 256

    /// Target index per step.
    public let targets: [UInt8]

    /// Validates 1...``maxSteps`` steps and every target in 0...5.
    public init(targets: [UInt8]) throws(PunchValidationError) {
        guard !targets.isEmpty else {
            throw PunchValidationError(step: nil, problem: "sequence is empty", controlErrorCode: .sequencesMissing)
        }
        guard targets.count <= Self.maxSteps else {
            throw PunchValidationError(
                step: Self.maxSteps, problem: "\(targets.count) steps, at most \(Self.maxSteps) allowed", controlErrorCode: .sequencesMissing)
        }
        if let bad = targets.firstIndex(where: { $0 > Self.maxTarget }) {
            throw PunchValidationError(
                step: bad, problem: "target \(targets[bad]) is outside 0...\(Self.maxTarget)", controlErrorCode: .targetOutOfRange)
        }
        self.targets = targets
    }

    /// Reads every byte as a step; invalid content throws ``DecodingError`` naming the step.
    public init(from reader: inout ByteReader) throws(DecodingError) {
        let start = reader.offset
        let raw = reader.readRemaining()
        do { try self.init(targets: raw) } catch {
            throw .invalid(
                "Punch sequence" + (error.step.map { ".step \($0)" } ?? ""), expected: Self.expected(for: error),
                found: error.problem, at: error.step.map { start + min($0, raw.count) } ?? start)
        }
    }

    static func expected(for error: PunchValidationError) -> String {
        switch error.controlErrorCode {
        case .targetOutOfRange: return "target 0...5"
        case .timeOutOfRange: return "time 1...60000 ms"
        default: return "1...\(maxSteps) steps"
        }
    }

    public func encode(to writer: inout ByteWriter) { writer.write(bytes: targets) }

    /// Number of steps.
    public var count: Int { targets.count }
}

/// How long each step's target stays lit (punchTimeSequence): N × uint16 LE milliseconds, each
/// 1...60 000, 1...``PunchSequence/maxSteps`` (256) steps. The time is also the most the athlete has to hit it.
public struct PunchTimeSequence: GATTCodable, Hashable, Sendable, Encodable {
    /// Allowed time per step, milliseconds.
    public static let timeRange: ClosedRange<UInt16> = 1...60_000

    /// Milliseconds per step.
    public let milliseconds: [UInt16]

    /// Validates 1...``PunchSequence/maxSteps`` steps and every time in 1...60 000 ms.
    public init(milliseconds: [UInt16]) throws(PunchValidationError) {
        guard !milliseconds.isEmpty else {
            throw PunchValidationError(step: nil, problem: "time sequence is empty", controlErrorCode: .sequencesMissing)
        }
        guard milliseconds.count <= PunchSequence.maxSteps else {
            throw PunchValidationError(
                step: PunchSequence.maxSteps, problem: "\(milliseconds.count) steps, at most \(PunchSequence.maxSteps) allowed",
                controlErrorCode: .sequencesMissing)
        }
        if let bad = milliseconds.firstIndex(where: { !Self.timeRange.contains($0) }) {
            throw PunchValidationError(
                step: bad, problem: "time \(milliseconds[bad]) ms is outside 1...60000 ms", controlErrorCode: .timeOutOfRange)
        }
        self.milliseconds = milliseconds
    }

    /// Reads uint16 LE values to the end; an odd trailing byte throws truncated for that step.
    public init(from reader: inout ByteReader) throws(DecodingError) {
        let start = reader.offset
        var values: [UInt16] = []
        while !reader.isAtEnd { values.append(try reader.read(UInt16.self, "Punch time sequence.step \(values.count)")) }
        do { try self.init(milliseconds: values) } catch {
            throw .invalid(
                "Punch time sequence" + (error.step.map { ".step \($0)" } ?? ""), expected: PunchSequence.expected(for: error),
                found: error.problem, at: error.step.map { start + 2 * min($0, values.count) } ?? start)
        }
    }

    public func encode(to writer: inout ByteWriter) {
        for v in milliseconds { writer.write(v) }
    }

    /// Number of steps.
    public var count: Int { milliseconds.count }
}

/// One step of a program: which target, and for how long.
public struct PunchStep: Hashable, Sendable, Encodable {
    /// Target index 0...5.
    public var target: UInt8
    /// Time lit (and allowed to hit it), milliseconds.
    public var milliseconds: UInt16
}

/// A sequence and a time sequence that belong together (same length), as the device runs them.
public struct PunchProgram: Hashable, Sendable, Encodable {
    /// The targets.
    public let sequence: PunchSequence
    /// The times.
    public let timeSequence: PunchTimeSequence

    /// Throws when the two lengths differ (device error `E0 01`).
    public init(sequence: PunchSequence, timeSequence: PunchTimeSequence) throws(PunchValidationError) {
        guard sequence.count == timeSequence.count else {
            throw PunchValidationError(
                step: min(sequence.count, timeSequence.count),
                problem: "sequence has \(sequence.count) steps but time sequence has \(timeSequence.count)",
                controlErrorCode: .sequencesMissing)
        }
        self.sequence = sequence
        self.timeSequence = timeSequence
    }

    /// Builds both sequences from steps, validating everything.
    public init(steps: [PunchStep]) throws(PunchValidationError) {
        try self.init(
            sequence: try PunchSequence(targets: steps.map(\.target)),
            timeSequence: try PunchTimeSequence(milliseconds: steps.map(\.milliseconds)))
    }

    /// The steps in order.
    public var steps: [PunchStep] {
        zip(sequence.targets, timeSequence.milliseconds).map { PunchStep(target: $0, milliseconds: $1) }
    }
}
