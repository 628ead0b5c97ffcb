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

    /// The arguments with each negative number made a value: joined to the option before it
    /// (`--grade=-2`), or, after anything else, moved behind `--` at the end (positional
    /// arguments after it keep their order; those before it come first). Nil when there is no
    /// negative number to place, or a `--` already ends the options.
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
