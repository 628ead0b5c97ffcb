import BluetideReflex
import BluetideReflexCoach

/// The run page's game form: mode, athletes (in lane, team or colour order), saved sequence.
public struct GameForm: Sendable {
    /// The game.
    public var mode: GymMode
    /// The athletes, in the order given.
    public var athletes: [Athlete]
    /// The saved sequence.
    public var sequence: SavedSequence

    /// Reads `mode` (`head-to-head`, `first-to`, `relay`, `chase`), every `athletes` value (ids,
    /// in order), `sequence`, `firstTo` (hits) and `teams`, looking athletes and sequence up in `store`.
    public static func parse(_ fields: FormFields, store: CoachStore, seed: UInt64 = UInt64.random(in: 0...UInt64.max)) throws -> GameForm {
        var errors: [FieldError] = []
        let modeText = fields.trimmed("mode")
        var mode: GymMode?
        switch modeText {
        case "head-to-head": mode = .headToHead(.bestMean)
        case "first-to":
            let text = fields.trimmed("firstTo")
            if let hits = Int(text), (1...256).contains(hits) { mode = .headToHead(.firstTo(hits: hits)) } else {
                errors.append(FieldError(field: "firstTo", label: "First to", expected: "a number of hits, 1 to 256", got: text.isEmpty ? nil : text))
            }
        case "relay":
            let text = fields.trimmed("teams")
            if let teams = Int(text), (1...8).contains(teams) { mode = .relay(teams: teams) } else {
                errors.append(FieldError(field: "teams", label: "Teams", expected: "a number of teams, 1 to 8", got: text.isEmpty ? nil : text))
            }
        case "chase": mode = .chase(seed: seed)
        default:
            errors.append(FieldError(field: "mode", label: "Game", expected: "head-to-head, first-to, relay or chase", got: modeText.isEmpty ? nil : modeText))
        }
        var athletes: [Athlete] = []
        for text in fields.all("athletes").map({ $0.trimmingCharacters(in: .whitespaces) }) where !text.isEmpty {
            if let id = Int64(text), let found = try store.athlete(id: id) { athletes.append(found) } else {
                errors.append(FieldError(field: "athletes", label: "Athletes", expected: "ids of stored athletes", got: text))
            }
        }
        if athletes.isEmpty, !errors.contains(where: { $0.field == "athletes" }) {
            errors.append(FieldError(field: "athletes", label: "Athletes", expected: "one or more athletes chosen from the list", got: nil))
        }
        let sequenceText = fields.trimmed("sequence")
        var sequence: SavedSequence?
        if let found = sequenceText.isEmpty ? nil : try store.sequence(named: sequenceText) { sequence = found } else {
            errors.append(FieldError(field: "sequence", label: "Sequence", expected: "a saved sequence chosen from the list",
                                     got: sequenceText.isEmpty ? nil : sequenceText))
        }
        guard errors.isEmpty, let mode, let sequence else { throw FormErrors(errors) }
        return GameForm(mode: mode, athletes: athletes, sequence: sequence)
    }
}
