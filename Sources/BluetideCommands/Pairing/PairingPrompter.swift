import Bluetide
import Synchronization

/// Where pairing questions are asked and answered: a terminal, the shell's console, or a fake
/// in tests. The prompter decides what to ask; this only shows and reads.
struct PairingConversation: Sendable {
    /// Shows `question` (no line break after it) and returns the line typed, without its line
    /// break; nil when input ended.
    var ask: @Sendable (_ question: String) async -> String?
    /// Shows one line (a passkey to type on the device, what was answered).
    var tell: @Sendable (_ line: String) -> Void
}

/// What to do with one pairing question.
enum PairingReply: Sendable, Equatable {
    /// Numeric comparison: the numbers match (true) or not.
    case confirm(Bool)
    /// Passkey entry: these six digits.
    case passkey(UInt32)
    /// Refuse (Pairing Failed 0x01 or 0x0C); the prompter keeps the reason for the error line.
    case cancel
    /// Nothing to answer (a passkey was shown for the user to type on the device).
    case shown
}

/// Answers pairing questions as the command's ``PairingMode`` says: with what `--pairing`
/// gave, or by asking through a ``PairingConversation``. When it cannot answer, it refuses and
/// keeps one line saying why and what to type instead (``refusal(for:)``), so the command's
/// error names `--pairing` rather than a bare "passkey entry failed".
final class PairingPrompter: Sendable {
    private struct State {
        var mode: PairingMode
        /// How the mode is given, for the hints: "--pairing" or "pair" (the shell's command).
        var hint: PairingHint
        var refusals: [BluetoothAddress: String] = [:]
        var lastRefusal: String?
    }

    /// How to tell the user to give an answer in advance.
    enum PairingHint: Sendable {
        /// A command line: `--pairing passkey:NNNNNN`.
        case option
        /// The shell: `pair passkey:NNNNNN`.
        case shellCommand

        func passkey() -> String {
            switch self {
            case .option: "give it with --pairing passkey:NNNNNN, or run at a terminal to be asked"
            case .shellCommand: "type pair passkey:NNNNNN with the six digits it shows"
            }
        }

        func confirm() -> String {
            switch self {
            case .option: "give --pairing confirm if the numbers match, or run at a terminal to be asked"
            case .shellCommand: "type pair confirm if the numbers match"
            }
        }
    }

    private let state: Mutex<State>
    private let conversation: PairingConversation
    /// The device's name for the questions ("Bluetide HRM (C0:…/R)"); the address otherwise.
    private let label: @Sendable (BluetoothAddress?) -> String

    /// A prompter answering as `mode` says; questions go through `conversation` (only `.ask`
    /// reads from it; every mode tells passkeys to type on it).
    init(
        mode: PairingMode, hint: PairingHint = .option, conversation: PairingConversation,
        label: @escaping @Sendable (BluetoothAddress?) -> String = { $0.map { "\($0)" } ?? "the device" }
    ) {
        state = Mutex(State(mode: mode, hint: hint))
        self.conversation = conversation
        self.label = label
    }

    /// The mode questions are answered with now.
    var mode: PairingMode { state.withLock { $0.mode } }

    /// Answers with `mode` until the next call (the shell's `pair MODE`).
    func use(_ mode: PairingMode) { state.withLock { $0.mode = mode } }

    /// Answers every prompt of `prompts` (the host's one sequence) until it ends.
    func answer(_ prompts: AsyncStream<PairingPrompt>) async {
        for await prompt in prompts {
            switch await reply(to: prompt.kind, from: prompt.address) {
            case let .confirm(same): await prompt.confirm(same)
            case let .passkey(passkey): try? await prompt.enter(passkey: passkey)
            case .cancel: await prompt.cancel()
            case .shown: break
            }
        }
    }

    /// What to answer to `kind` from the device at `address`: decided by the mode, asked when
    /// the mode is `.ask`.
    func reply(to kind: PairingPrompt.Kind, from address: BluetoothAddress?) async -> PairingReply {
        let device = label(address)
        let (mode, hint) = state.withLock { state in
            if let address { state.refusals[address] = nil }
            state.lastRefusal = nil
            return (state.mode, state.hint)
        }
        switch (kind, mode) {
        case let (.displayPasskey(passkey), _):
            conversation.tell("Type \(PairingPrompt.sixDigits(passkey)) on \(device)")
            return .shown
        case let (.confirmNumber(number), .confirm):
            appLogger.notice("pairing: \(device) should show \(PairingPrompt.sixDigits(number)); accepted (pairing mode confirm)")
            return .confirm(true)
        case let (.confirmNumber(number), .ask):
            let answer = await conversation.ask("Confirm that \(device) shows \(PairingPrompt.sixDigits(number)) [y/N] ")
            let said = answer?.trimmingCharacters(in: .whitespaces).lowercased()
            if said == "y" || said == "yes" { return .confirm(true) }
            refuse(answer == nil
                ? "pairing with \(device) cancelled: no answer to whether it shows \(PairingPrompt.sixDigits(number)) (input ended)"
                : "pairing with \(device) cancelled: you said it does not show \(PairingPrompt.sixDigits(number)) (numeric comparison failed, 0x0C)",
                address: address)
            return .confirm(false)
        case let (.confirmNumber(number), _):
            refuse("\(device) asks to confirm that it shows \(PairingPrompt.sixDigits(number)) (numeric comparison): \(hint.confirm())", address: address)
            return .confirm(false)
        case let (.enterPasskey, .passkey(passkey)):
            appLogger.notice("pairing: entering passkey \(PairingPrompt.sixDigits(passkey)) for \(device)")
            return .passkey(passkey)
        case (.enterPasskey, .ask):
            for attempt in 1...3 {
                guard let line = await conversation.ask("Enter the 6-digit passkey \(device) shows: ") else {
                    refuse("pairing with \(device) cancelled: no passkey typed (input ended)", address: address)
                    return .cancel
                }
                let digits = line.filter { $0 != " " }
                if digits.count == 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let passkey = UInt32(digits) {
                    return .passkey(passkey)
                }
                if digits.isEmpty { break }
                if attempt < 3 { conversation.tell("\"\(line)\" is not six digits; type the number \(device) shows, e.g. 123456") }
            }
            refuse("pairing with \(device) cancelled: no six-digit passkey typed (passkey entry failed, 0x01)", address: address)
            return .cancel
        case (.enterPasskey, _):
            refuse("\(device) asks for the passkey it shows: \(hint.passkey())", address: address)
            return .cancel
        }
    }

    /// Why the last question from `address` was refused, if it was (one line for the user).
    func refusal(for address: BluetoothAddress?) -> String? {
        state.withLock { state in address.flatMap { state.refusals[$0] } ?? state.lastRefusal }
    }

    private func refuse(_ reason: String, address: BluetoothAddress?) {
        state.withLock { state in
            if let address { state.refusals[address] = reason }
            state.lastRefusal = reason
        }
    }
}
