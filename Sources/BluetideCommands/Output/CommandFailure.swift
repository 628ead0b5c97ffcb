import Bluetide

/// A user-facing failure: one line on standard error (a JSON `error` object with `--json`) and
/// exit status 1, or 2 when it is bad input.
///
/// A message that starts with the option it refuses (`--count 0: expected at least 1`) is bad
/// input and names that option as the error's `field`, so throw sites that validate options need
/// say nothing more; other input errors say so with ``usage(_:field:)``.
struct CommandFailure: Error, CustomStringConvertible {
    let message: String
    /// True when the failure only follows from the peer's side ending the link (so a command
    /// running both sides reports the other side's failure, the cause, instead).
    var isLinkLoss = false
    /// Exit status: ``ExitStatus/failure`` or ``ExitStatus/usage``.
    var status: ExitStatus
    /// The option or argument that was wrong, e.g. `--count` or `DEVICE`, when one was.
    var field: String?

    init(_ message: String, isLinkLoss: Bool = false) {
        self.message = message
        self.isLinkLoss = isLinkLoss
        let option = Self.leadingOption(of: message)
        self.status = option == nil ? .failure : .usage
        self.field = option
    }

    /// Bad input (exit status 2): a value the user typed that cannot be used.
    static func usage(_ message: String, field: String? = nil) -> CommandFailure {
        var failure = CommandFailure(message)
        failure.status = .usage
        failure.field = field ?? failure.field
        return failure
    }

    var description: String { message }

    /// "cannot open transport SPEC: WHY" — once: the library's own error says "cannot open
    /// transport" too, so only its reason is kept.
    static func cannotOpenTransport(_ spec: String, _ error: any Error) -> CommandFailure {
        if case let .transportUnavailable(_, reason) = error as? BluetideError {
            return CommandFailure("cannot open transport \(spec): \(reason)")
        }
        return CommandFailure("cannot open transport \(spec): \(error)")
    }

    /// `--count` in "--count 0: …" or "--emulate: …"; nil when the message does not start with an option.
    static func leadingOption(of message: String) -> String? {
        guard message.hasPrefix("--") else { return nil }
        let name = message.prefix(while: { $0 == "-" || $0.isLetter || $0.isNumber })
        return name.count > 2 ? String(name) : nil
    }
}
