import BluetideReflex
import Foundation

/// The "weigh-in" form: a day and kilograms.
public struct WeightForm: Sendable, Hashable {
    /// Day of the weigh-in.
    public var date: CalendarDate
    /// Body mass, kg (0 < kg < 500).
    public var kilograms: Double

    /// Reads `date` (YYYY-MM-DD; empty means `today`) and `kilograms` (a decimal number with a
    /// point or a comma), by ``InputRules``.
    public static func parse(_ fields: FormFields, today: CalendarDate) throws(FormErrors) -> WeightForm {
        var errors: [FieldError] = []
        let dateText = fields.trimmed("date")
        var date: CalendarDate? = today
        if !dateText.isEmpty {
            do { date = try InputRules.date(dateText) } catch {
                date = nil
                errors.append(FieldError(field: "date", label: "Date", problem: error))
            }
        }
        var kilograms: Double?
        do { kilograms = try InputRules.kilograms(fields.trimmed("kilograms")) } catch {
            errors.append(FieldError(field: "kilograms", label: "Weight", problem: error))
        }
        guard errors.isEmpty, let date, let kilograms else { throw FormErrors(errors) }
        return WeightForm(date: date, kilograms: kilograms)
    }
}
