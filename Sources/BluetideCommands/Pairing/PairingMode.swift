import Bluetide

/// How a command answers pairing questions: what `--pairing` says, or asking at the terminal.
/// The mode also decides what this side tells the device it can show and type (its IO
/// capability), which decides the method the two devices pair with.
enum PairingMode: Sendable, Equatable, CustomStringConvertible {
    /// No questions: Just Works (encrypted, not protected against a man in the middle).
    case justWorks
    /// Type these six digits when the device shows a passkey.
    case passkey(UInt32)
    /// Accept numeric comparison (the number is printed).
    case confirm
    /// Ask the user each question (a terminal, or the shell's console).
    case ask

    /// The accepted spellings, for messages.
    static let syntax = "just-works, passkey:NNNNNN (six digits, e.g. passkey:123456) or confirm"

    /// Parses `just-works`, `passkey:NNNNNN` or `confirm`; nil for anything else.
    init?(parsing text: String) {
        switch text.lowercased() {
        case "just-works", "justworks": self = .justWorks
        case "confirm": self = .confirm
        default:
            let lowered = text.lowercased()
            guard lowered.hasPrefix("passkey:"), case let digits = lowered.dropFirst("passkey:".count),
                  digits.count == 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let passkey = UInt32(digits) else {
                return nil
            }
            self = .passkey(passkey)
        }
    }

    /// The mode for a command: `option` (the `--pairing` text) when given, else asking when
    /// someone can be asked, else Just Works. Throws a usage failure naming `--pairing`.
    static func choose(_ option: String?, canAsk: Bool) throws -> PairingMode {
        guard let option else { return canAsk ? .ask : .justWorks }
        guard let mode = PairingMode(parsing: option) else {
            throw CommandFailure.usage("--pairing \(option): expected \(syntax)", field: "--pairing")
        }
        return mode
    }

    /// What this side says it can do: nothing for Just Works, a keyboard for a passkey given in
    /// advance, a display with yes/no for `confirm`, both when asking (so every method works).
    var ioCapability: IOCapability {
        switch self {
        case .justWorks: .noInputNoOutput
        case .passkey: .keyboardOnly
        case .confirm: .displayYesNo
        case .ask: .keyboardDisplay
        }
    }

    /// The host's pairing policy for this mode: bonding, pairing by itself when a value needs it.
    var policy: PairingPolicy { PairingPolicy(ioCapability: ioCapability) }

    /// `just-works`, `passkey:123456`, `confirm` or `ask`.
    var description: String {
        switch self {
        case .justWorks: "just-works"
        case let .passkey(passkey): "passkey:\(PairingPrompt.sixDigits(passkey))"
        case .confirm: "confirm"
        case .ask: "ask"
        }
    }
}
