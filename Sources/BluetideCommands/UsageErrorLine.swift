import ArgumentParser

/// Turns an argument parsing error into the one line `bluetide` prints: what was wrong, what
/// to try, and where the help is, instead of ArgumentParser's multi-line usage text.
enum UsageErrorLine {
    /// The line for `error`, raised while parsing `arguments` (without the program name).
    static func describe(_ error: any Error, arguments: [String]) -> String {
        let message = BluetideCommand.message(for: error)
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .first { !$0.isEmpty } ?? "invalid arguments"
        let subcommand = arguments.first { !$0.hasPrefix("-") }.flatMap { name in
            BluetideCommand.configuration.subcommands.first { $0.configuration.commandName == name } != nil ? name : nil
        }
        let help = "see bluetide \(subcommand.map { "\($0) " } ?? "")--help"
        // "--interval -1": ArgumentParser takes "-1" for an option and says the value is missing.
        if message.hasPrefix("Missing value for '"),
           let option = message.dropFirst("Missing value for '".count).split(separator: " ").first.map(String.init),
           let position = arguments.firstIndex(of: option), position + 1 < arguments.count,
           arguments[position + 1].hasPrefix("-") {
            let value = arguments[position + 1]
            return "bluetide: \(option) \(value): \"\(value)\" was read as an option, not a value; write \(option)=\(value) to pass it (\(help))"
        }
        // "decode heart-rate -16": a value that starts with "-" is not an option.
        if message.hasPrefix("Unknown option '") {
            let name = String(message.dropFirst("Unknown option '".count).prefix { $0 != "'" })
            if name.dropFirst().first?.isHexDigit == true {
                return "bluetide: \(name) is not an option; to pass a value that starts with \"-\", put it after -- (\(help))"
            }
            return "bluetide: unknown option \(name) (\(help))"
        }
        return "bluetide: \(message) (\(help))"
    }
}
