import BluetideReflex
import Foundation

/// The "athlete" form: personal data, checked field by field.
public struct AthleteForm: Sendable, Hashable {
    /// Longest name accepted, characters.
    public static let maxNameLength = 100

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
        let name = fields.trimmed("name")
        if name.isEmpty {
            errors.append(FieldError(field: "name", label: "Name", expected: "the athlete's name", got: nil))
        } else if name.count > maxNameLength {
            errors.append(FieldError(field: "name", label: "Name", expected: "at most \(maxNameLength) characters", got: name))
        }
        var birthDate: CalendarDate?
        let birthText = fields.trimmed("birthDate")
        if !birthText.isEmpty {
            if let date = CalendarDate(iso: birthText), (1900...2100).contains(date.year) {
                birthDate = date
            } else {
                errors.append(FieldError(field: "birthDate", label: "Birth date", expected: "a date YYYY-MM-DD, e.g. 2004-05-17", got: birthText))
            }
        }
        let sex = fields.trimmed("sex")
        if sex.count > 40 {
            errors.append(FieldError(field: "sex", label: "Sex", expected: "at most 40 characters", got: sex))
        }
        let stanceText = fields.trimmed("stance")
        let stance = stanceText.isEmpty ? Stance.orthodox : Stance(rawValue: stanceText.lowercased())
        if stance == nil {
            errors.append(FieldError(field: "stance", label: "Stance", expected: "orthodox, southpaw or switch", got: stanceText))
        }
        let notes = fields["notes"] ?? ""
        if notes.count > 4000 {
            errors.append(FieldError(field: "notes", label: "Notes", expected: "at most 4000 characters", got: String(notes.prefix(40))))
        }
        guard errors.isEmpty, let stance else { throw FormErrors(errors) }
        return AthleteForm(name: name, birthDate: birthDate, sex: sex.isEmpty ? nil : sex, stance: stance, notes: notes)
    }

    /// The record to insert (`created` is when it was added).
    public func athlete(created: Date) -> Athlete {
        Athlete(name: name, birthDate: birthDate, sex: sex, stance: stance, notes: notes, created: created)
    }
}
