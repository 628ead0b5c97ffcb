import BluetideProfiles
import BluetideReflex

/// Parses the target and time lists a coach types for a sequence (`0,3,5,1`, `900` or `900,1200`).
public enum SequenceInput {
    /// The items of `text`, split at commas and spaces.
    /// - Throws: ``CoachInputError`` `.emptyList` naming `field`.
    public static func items(_ text: String, field: String) throws(CoachInputError) -> [String] {
        let items = text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        guard !items.isEmpty else { throw CoachInputError(field: field, .emptyList) }
        return items
    }

    /// Targets 0…5 from `0,3,5` (or spaces).
    /// - Throws: ``CoachInputError`` naming the first bad item.
    public static func targets(_ text: String, field: String = "--targets") throws(CoachInputError) -> [UInt8] {
        var targets: [UInt8] = []
        for (index, item) in try items(text, field: field).enumerated() {
            guard let value = UInt8(item), value <= PunchSequence.maxTarget else {
                throw CoachInputError(field: field, .badTarget(step: index + 1, item: item))
            }
            targets.append(value)
        }
        return targets
    }

    /// Milliseconds lit, 1…60000, from `900,1200`; a single value is used for every one of `steps`.
    /// - Throws: ``CoachInputError`` naming the first bad item, or a count that is neither 1 nor `steps`.
    public static func times(_ text: String, steps: Int, field: String = "--times") throws(CoachInputError) -> [UInt16] {
        var values: [UInt16] = []
        for (index, item) in try items(text, field: field).enumerated() {
            guard let value = UInt16(item), PunchTimeSequence.timeRange.contains(value) else {
                throw CoachInputError(field: field, .badTime(step: index + 1, item: item))
            }
            values.append(value)
        }
        if values.count == 1 { return Array(repeating: values[0], count: steps) }
        guard values.count == steps else { throw CoachInputError(field: field, .timeCountMismatch(times: values.count, steps: steps)) }
        return values
    }

    /// The generator for a random sequence of `steps` steps over `targets` (a list as for
    /// ``targets(_:field:)``), each lit `minimum`…`maximum` ms, uniformly.
    /// - Throws: ``CoachInputError`` `.stepCount` (field `--steps`), `.timeWindow` (field `--min-time`), or a bad target list.
    public static func randomGenerator(steps: Int, targets: String, minimum: UInt16, maximum: UInt16) throws(CoachInputError) -> RandomSequenceGenerator {
        guard (1...PunchSequence.maxSteps).contains(steps) else {
            throw CoachInputError(field: "--steps", .stepCount(steps: steps, maximum: PunchSequence.maxSteps))
        }
        guard minimum >= 1, minimum <= maximum, maximum <= 60_000 else {
            throw CoachInputError(field: "--min-time", .timeWindow(minimum: minimum, maximum: maximum))
        }
        return RandomSequenceGenerator(stepCount: steps, targets: try Self.targets(targets), times: .uniform(minimum...maximum))
    }
}
