import BluetideReflex
import Foundation

/// The "athlete" form: personal data, checked field by field.
public struct AthleteForm: Sendable, Hashable {
    /// Longest name accepted, characters (``InputRules/maximumNameLength``).
    public static let maxNameLength = InputRules.maximumNameLength

    /// Name, trimmed, not empty.
    public var name: String
    /// Birth date, if given.
    public var birthDate: CalendarDate?
    /// Sex as the coach records it, if given.
    public var sex: String?
    /// Leading foot.
    public var stance: Stance
    /// Notes (may be empty).
    public var notes: String

    /// Reads and checks the submitted fields `name`, `birthDate`, `sex`, `stance`, `notes`.
    public static func parse(_ fields: FormFields) throws(FormErrors) -> AthleteForm {
        var errors: [FieldError] = []
        /// The value `rule` makes of `field`, or nil with the problem recorded under `label`.
        func checked<T>(_ field: String, _ label: String, _ rule: () throws(InputProblem) -> T) -> T? {
            do { return try rule() } catch {
                errors.append(FieldError(field: field, label: label, problem: error))
                return nil
            }
        }
        let name = checked("name", "Name") { () throws(InputProblem) in try InputRules.name(fields["name"] ?? "") }
        let birthText = fields.trimmed("birthDate")
        let birthDate = birthText.isEmpty ? nil : checked("birthDate", "Birth date") { () throws(InputProblem) in try InputRules.date(birthText) }
        let sex = checked("sex", "Sex") { () throws(InputProblem) in try InputRules.text(fields.trimmed("sex"), maximum: InputRules.maximumSexLength) }
        let stanceText = fields.trimmed("stance")
        let stance = stanceText.isEmpty ? Stance.orthodox : Stance(rawValue: stanceText.lowercased())
        if stance == nil {
            errors.append(FieldError(field: "stance", label: "Stance", expected: "orthodox, southpaw or switch", got: stanceText))
        }
        let notes = checked("notes", "Notes") { () throws(InputProblem) in
            try InputRules.text(fields["notes"] ?? "", maximum: InputRules.maximumNotesLength, lineBreaks: true)
        }
        guard errors.isEmpty, let name, let stance, let sex, let notes else { throw FormErrors(errors) }
        return AthleteForm(name: name, birthDate: birthDate, sex: sex.isEmpty ? nil : sex, stance: stance, notes: notes)
    }

    /// The record to insert (`created` is when it was added).
    public func athlete(created: Date) -> Athlete {
        Athlete(name: name, birthDate: birthDate, sex: sex, stance: stance, notes: notes, created: created)
    }
}
