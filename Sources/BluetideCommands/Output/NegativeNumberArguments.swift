import ArgumentParser

/// Lets negative numbers be typed as values the way people type them (`--grade -2`,
/// `athletes weight Ana -3`): ArgumentParser reads a word starting with `-` as an option, so
/// such a command line fails to parse. Only then, ``repaired(_:)`` rewrites it once —
/// `--grade -2` → `--grade=-2`; a negative number standing alone → after `--` at the end — and
/// the command is parsed again, so the value reaches the command's own check and its message
/// (`--grade -50: expected −40…40 percent`, `KILOGRAMS: expected kilograms above 0 …`). When
/// that parse fails too, the first error stands.
enum NegativeNumberArguments {
    /// `-2`, `-0.5`, `-3,5`: a minus sign and a decimal number.
    static func isNegativeNumber(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word.count > 1 else { return false }
        let digits = word.dropFirst()
        return digits.first?.isNumber == true && digits.allSatisfy { $0.isNumber || $0 == "." || $0 == "," }
    }

    /// The arguments rewritten for the parser's `error`: a value missing after an option
    /// (`Missing value for '--grade …'`) or a missing argument (`Missing expected argument`)
    /// while negative numbers stand in the line. Each negative number is joined to the option
    /// before it (`--grade=-2`) or, after anything else, moved behind `--` at the end
    /// (positional arguments after it keep their order; those before it come first). Nil for
    /// any other error (`decode heart-rate -16` keeps its "not an option" line), when there is
    /// no negative number, or when a `--` already ends the options.
    static func repaired(_ arguments: [String], after error: any Error) -> [String]? {
        let message = BluetideCommand.message(for: error)
        guard message.hasPrefix("Missing value for '") || message.hasPrefix("Missing expected argument") else { return nil }
        return repaired(arguments)
    }

    /// ``repaired(_:after:)`` whatever the error was.
    static func repaired(_ arguments: [String]) -> [String]? {
        guard !arguments.contains("--"), arguments.contains(where: isNegativeNumber) else { return nil }
        var kept: [String] = []
        var moved: [String] = []
        for word in arguments {
            if isNegativeNumber(word) {
                if let last = kept.last, last.hasPrefix("--"), !last.contains("=") {
                    kept[kept.count - 1] = "\(last)=\(word)"
                } else {
                    moved.append(word)
                }
            } else {
                kept.append(word)
            }
        }
        return moved.isEmpty ? kept : kept + ["--"] + moved
    }
}
