import BluetideProfiles
import BluetideReflex

/// The random generator's form: name, number of steps, targets to use, time range, seed.
public struct RandomSequenceForm: Sendable, Hashable {
    /// Name to save under.
    public var name: String
    /// The generator's settings.
    public var generator: RandomSequenceGenerator
    /// The seed, if the coach gave one (else a random one is drawn).
    public var seed: UInt64?

    /// Reads `name`, `steps`, `target` (checkboxes, one value per target), `minTime`,
    /// `maxTime`, `seed` (optional) and `repeats` (present = allow a target twice in a row).
    public static func parse(_ fields: FormFields) throws(FormErrors) -> RandomSequenceForm {
        var errors: [FieldError] = []
        var name = ""
        do { name = try InputRules.name(fields["name"] ?? "", maximum: InputRules.maximumSequenceNameLength) } catch {
            errors.append(FieldError(field: "name", label: "Name", problem: error))
        }
        let stepText = fields.trimmed("steps")
        let steps = Int(stepText)
        if steps == nil || !(1...PunchSequence.maxSteps).contains(steps ?? 0) {
            errors.append(FieldError(field: "steps", label: "Steps", expected: "a whole number 1–\(PunchSequence.maxSteps)", got: stepText.isEmpty ? nil : stepText))
        }
        var targets: [UInt8] = []
        for item in fields.all("target") {
            guard let value = UInt8(item), value <= PunchSequence.maxTarget else {
                errors.append(FieldError(field: "target", label: "Targets", expected: "targets 0–5", got: item))
                break
            }
            if !targets.contains(value) { targets.append(value) }
        }
        let allowRepeats = fields["repeats"] != nil
        if targets.isEmpty {
            errors.append(FieldError(field: "target", label: "Targets", expected: "at least one target ticked", got: nil))
        } else if targets.count == 1, !allowRepeats, (steps ?? 0) > 1 {
            errors.append(FieldError(field: "target", label: "Targets",
                                     expected: "two or more targets, or \"allow repeats\" ticked (one target cannot avoid repeats)",
                                     got: "only \(DisplayText.targetName(targets[0]))"))
        }
        let minText = fields.trimmed("minTime"), maxText = fields.trimmed("maxTime")
        let minTime = UInt16(minText), maxTime = UInt16(maxText)
        if minTime == nil || !PunchTimeSequence.timeRange.contains(minTime ?? 0) {
            errors.append(FieldError(field: "minTime", label: "Shortest time", expected: "1–60000 ms", got: minText.isEmpty ? nil : minText))
        }
        if maxTime == nil || !PunchTimeSequence.timeRange.contains(maxTime ?? 0) {
            errors.append(FieldError(field: "maxTime", label: "Longest time", expected: "1–60000 ms", got: maxText.isEmpty ? nil : maxText))
        } else if let minTime, let maxTime, minTime > maxTime {
            errors.append(FieldError(field: "maxTime", label: "Longest time", expected: "at least the shortest time (\(minTime) ms)", got: maxText))
        }
        let seedText = fields.trimmed("seed")
        var seed: UInt64?
        if !seedText.isEmpty {
            seed = UInt64(seedText)
            if seed == nil {
                errors.append(FieldError(field: "seed", label: "Seed", expected: "empty, or a whole number ≥ 0", got: seedText))
            }
        }
        guard errors.isEmpty, let steps, let minTime, let maxTime else { throw FormErrors(errors) }
        return RandomSequenceForm(
            name: name,
            generator: RandomSequenceGenerator(stepCount: steps, targets: targets, avoidImmediateRepeats: !allowRepeats,
                                               times: .uniform(minTime...maxTime)),
            seed: seed)
    }
}
