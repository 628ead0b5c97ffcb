import BluetideProfiles
import BluetideReflex
import Foundation

/// The sequence editor's form: a name, the targets in order, the time each stays lit and the
/// maximum interval between punches.
public struct SequenceForm: Sendable, Hashable {
    /// Longest name accepted, characters.
    public static let maxNameLength = InputRules.maximumSequenceNameLength

    /// Name to save under (trimmed, not empty).
    public var name: String
    /// Target 0...5 per step.
    public var targets: [UInt8]
    /// Milliseconds lit per step, 1...60 000.
    public var milliseconds: [UInt16]
    /// Longest pause allowed between punches, ms, if set.
    public var maxIntervalMilliseconds: Int?

    /// Reads `name`, `targets` (`0,3,5,1`), `times` (one value for every step, or one per step)
    /// and `maxInterval` (optional).
    public static func parse(_ fields: FormFields) throws(FormErrors) -> SequenceForm {
        var errors: [FieldError] = []
        var name = ""
        do { name = try InputRules.name(fields["name"] ?? "", maximum: InputRules.maximumSequenceNameLength) } catch {
            errors.append(FieldError(field: "name", label: "Name", problem: error))
        }

        var targets: [UInt8] = []
        let targetText = fields.trimmed("targets")
        let targetItems = items(targetText)
        if targetItems.isEmpty {
            errors.append(FieldError(field: "targets", label: "Targets", expected: "at least one target: tap the coloured buttons", got: nil))
        } else if targetItems.count > PunchSequence.maxSteps {
            errors.append(FieldError(field: "targets", label: "Targets", expected: "at most \(PunchSequence.maxSteps) steps",
                                     got: "\(targetItems.count) steps"))
        } else {
            for (index, item) in targetItems.enumerated() {
                guard let value = UInt8(item), value <= PunchSequence.maxTarget else {
                    errors.append(FieldError(field: "targets", label: "Targets", expected: "a target 0–5 at step \(index + 1)", got: item))
                    break
                }
                targets.append(value)
            }
        }

        var milliseconds: [UInt16] = []
        let timeText = fields.trimmed("times")
        let timeItems = items(timeText)
        if timeItems.isEmpty {
            errors.append(FieldError(field: "times", label: "Times", expected: "milliseconds each target stays lit, e.g. 900", got: nil))
        } else {
            for (index, item) in timeItems.enumerated() {
                guard let value = UInt16(item), PunchTimeSequence.timeRange.contains(value) else {
                    let position = timeItems.count == 1 ? "" : " at step \(index + 1)"
                    errors.append(FieldError(field: "times", label: "Times", expected: "a time of 1–60000 ms\(position)", got: item))
                    break
                }
                milliseconds.append(value)
            }
            if milliseconds.count == timeItems.count, !targets.isEmpty, targets.count == targetItems.count {
                if milliseconds.count == 1 {
                    milliseconds = Array(repeating: milliseconds[0], count: targets.count)
                } else if milliseconds.count != targets.count {
                    errors.append(FieldError(field: "times", label: "Times",
                                             expected: "one time for all steps or one per step (\(targets.count) steps)",
                                             got: "\(milliseconds.count) times"))
                }
            }
        }

        var maxInterval: Int?
        let maxText = fields.trimmed("maxInterval")
        if !maxText.isEmpty {
            if let value = Int(maxText), (1...60_000).contains(value) {
                maxInterval = value
            } else {
                errors.append(FieldError(field: "maxInterval", label: "Max interval", expected: "empty, or 1–60000 ms", got: maxText))
            }
        }
        guard errors.isEmpty else { throw FormErrors(errors) }
        return SequenceForm(name: name, targets: targets, milliseconds: milliseconds, maxIntervalMilliseconds: maxInterval)
    }

    /// Items separated by commas, semicolons or white space.
    static func items(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0 == ";" || $0.isWhitespace }).map(String.init)
    }
}
