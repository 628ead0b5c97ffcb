import BluetideReflex
import Foundation

/// The "weigh-in" form: a day and kilograms.
public struct WeightForm: Sendable, Hashable {
    /// Day of the weigh-in.
    public var date: CalendarDate
    /// Body mass, kg (0 < kg < 500).
    public var kilograms: Double

    /// Reads `date` (YYYY-MM-DD; empty means `today`) and `kilograms` (a point or a comma as
    /// decimal separator).
    public static func parse(_ fields: FormFields, today: CalendarDate) throws(FormErrors) -> WeightForm {
        var errors: [FieldError] = []
        let dateText = fields.trimmed("date")
        var date = today
        if !dateText.isEmpty {
            if let parsed = CalendarDate(iso: dateText), (1900...2100).contains(parsed.year) {
                date = parsed
            } else {
                errors.append(FieldError(field: "date", label: "Date", expected: "a date YYYY-MM-DD, e.g. 2026-11-21", got: dateText))
            }
        }
        let kgText = fields.trimmed("kilograms")
        let kilograms = Double(kgText.replacingOccurrences(of: ",", with: "."))
        if kgText.isEmpty {
            errors.append(FieldError(field: "kilograms", label: "Weight", expected: "kilograms, e.g. 63.5", got: nil))
        } else if let kg = kilograms, !(kg.isFinite && kg > 0 && kg < 500) {
            errors.append(FieldError(field: "kilograms", label: "Weight", expected: "kilograms above 0 and below 500", got: kgText))
        } else if kilograms == nil {
            errors.append(FieldError(field: "kilograms", label: "Weight", expected: "a number of kilograms, e.g. 63.5", got: kgText))
        }
        guard errors.isEmpty, let kilograms else { throw FormErrors(errors) }
        return WeightForm(date: date, kilograms: kilograms)
    }
}
