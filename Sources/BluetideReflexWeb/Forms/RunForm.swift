import BluetideReflex

/// The run page's form: which athlete runs which saved sequence.
public struct RunForm: Sendable, Hashable {
    /// The athlete.
    public var athlete: Athlete
    /// The saved sequence.
    public var sequence: SavedSequence

    /// Reads `athlete` (an id) and `sequence` (a saved name) and looks both up in `store`.
    public static func parse(_ fields: FormFields, store: CoachStore) throws -> RunForm {
        var errors: [FieldError] = []
        let athleteText = fields.trimmed("athlete")
        var athlete: Athlete?
        if athleteText.isEmpty {
            errors.append(FieldError(field: "athlete", label: "Athlete", expected: "an athlete chosen from the list", got: nil))
        } else if let id = Int64(athleteText), let found = try store.athlete(id: id) {
            athlete = found
        } else {
            errors.append(FieldError(field: "athlete", label: "Athlete", expected: "the id of a stored athlete", got: athleteText))
        }
        let sequenceText = fields.trimmed("sequence")
        var sequence: SavedSequence?
        if sequenceText.isEmpty {
            errors.append(FieldError(field: "sequence", label: "Sequence", expected: "a saved sequence chosen from the list", got: nil))
        } else if let found = try store.sequence(named: sequenceText) {
            sequence = found
        } else {
            errors.append(FieldError(field: "sequence", label: "Sequence", expected: "the name of a saved sequence", got: sequenceText))
        }
        guard errors.isEmpty, let athlete, let sequence else { throw FormErrors(errors) }
        return RunForm(athlete: athlete, sequence: sequence)
    }
}
