import BluetideReflex

/// One problem with one submitted field, worded for the person who typed it: which field, what
/// was expected, what came — e.g. `Birth date: expected a date YYYY-MM-DD, got "17/05/2004"`.
public struct FieldError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The form field's name (`birthDate`), used to mark the input.
    public var field: String
    /// The field's label as shown (`Birth date`).
    public var label: String
    /// What the field must hold (`a date YYYY-MM-DD`).
    public var expected: String
    /// What was received, as typed; nil when the field was empty or missing.
    public var got: String?

    /// A problem with `field`.
    public init(field: String, label: String, expected: String, got: String?) {
        self.field = field
        self.label = label
        self.expected = expected
        self.got = got
    }

    /// A problem with `field` found by one of ``InputRules``.
    public init(field: String, label: String, problem: InputProblem) {
        self.init(field: field, label: label, expected: problem.expected, got: problem.got)
    }

    /// `Label: expected …, got "…"` (or `got nothing`).
    public var description: String {
        let received = got.map { "got \"\($0.count > 80 ? String($0.prefix(80)) + "…" : $0)\"" } ?? "got nothing"
        return "\(label): expected \(expected), \(received)"
    }
}

/// The problems found in one submitted form (never empty when thrown): problems with fields, or
/// a `notice` about the whole form (e.g. the database could not store it).
public struct FormErrors: Error, Sendable, Hashable, CustomStringConvertible {
    /// Each problem, in the order of the form's fields.
    public var errors: [FieldError]
    /// A problem with the submission as a whole, shown above the form (its values kept).
    public var notice: String?

    /// Wraps the problems found.
    public init(_ errors: [FieldError], notice: String? = nil) {
        self.errors = errors
        self.notice = notice
    }

    /// The problem with `field`, if any.
    public func error(for field: String) -> FieldError? { errors.first { $0.field == field } }

    /// All problems, one per line.
    public var description: String { ((notice.map { [$0] } ?? []) + errors.map(\.description)).joined(separator: "\n") }
}
