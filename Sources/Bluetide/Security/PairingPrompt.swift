import BluetideHost

/// A question pairing puts to the user, from ``Bluetooth/pairingPrompts``. Answer it once with
/// ``confirm(_:)``, ``enter(passkey:)`` or ``cancel()``; unanswered, pairing fails at its 30 s
/// SMP timeout.
public struct PairingPrompt: Sendable, CustomStringConvertible {
    /// What the user has to do.
    public enum Kind: Sendable, Hashable {
        /// Numeric comparison: show this six-digit number and ask whether the other device
        /// shows the same one; answer with ``PairingPrompt/confirm(_:)``.
        case confirmNumber(UInt32)
        /// Passkey entry: ask for the six digits the other device shows; answer with
        /// ``PairingPrompt/enter(passkey:)``.
        case enterPasskey
        /// Passkey entry: show this passkey for the user to type on the other device (no
        /// answer needed; ``PairingPrompt/cancel()`` aborts).
        case displayPasskey(UInt32)
    }

    /// What the user has to do.
    public let kind: Kind
    /// The HCI connection handle of the link being paired (0 on a backend that does not say,
    /// such as BlueZ).
    public let handle: UInt16
    /// The address of the device being paired (as it connected), nil when its link has closed
    /// meanwhile: lets an application name the device in the question.
    public let address: BluetoothAddress?
    /// Delivers the answer to whoever asked (the own host's SMP, a backend's agent).
    let respond: @Sendable (Answer) async -> Void

    /// An answer to a prompt, as a backend receives it.
    public enum Answer: Sendable, Hashable {
        /// Numeric comparison: true when both devices show the same number.
        case confirm(Bool)
        /// Passkey entry: the six digits typed, or nil when the user cancelled.
        case passkey(UInt32?)
    }

    /// A prompt asked by a backend's pairing agent (``CentralBackend/pairingPrompts``):
    /// `respond` gets the one answer (``confirm(_:)``, ``enter(passkey:)`` or ``cancel()``).
    public init(
        kind: Kind, address: BluetoothAddress?, handle: UInt16 = 0, respond: @escaping @Sendable (Answer) async -> Void
    ) {
        self.kind = kind
        self.address = address
        self.handle = handle
        self.respond = respond
    }

    init(_ prompt: SMPPrompt, handle: UInt16, address: BluetoothAddress?, stack: HostStack) {
        let kind: Kind = switch prompt {
        case let .confirmNumber(number): .confirmNumber(number)
        case .enterPasskey: .enterPasskey
        case let .displayPasskey(passkey): .displayPasskey(passkey)
        }
        self.init(kind: kind, address: address, handle: handle) { answer in
            switch answer {
            case let .confirm(same): await stack.answerPairing(.confirm(same), on: handle)
            case let .passkey(passkey): await stack.answerPairing(.passkey(passkey), on: handle)
            }
        }
    }

    /// Answers a numeric comparison: true when both devices show the same number.
    public func confirm(_ same: Bool) async {
        await respond(.confirm(same))
    }

    /// Answers a passkey entry with the six digits typed (0…999999). Throws
    /// ``BluetideError/invalidArgument(_:)`` for a larger number, without answering.
    public func enter(passkey: UInt32) async throws {
        guard passkey <= 999_999 else {
            throw BluetideError.invalidArgument("passkey \(passkey) has more than six digits: expected 000000…999999")
        }
        await respond(.passkey(passkey))
    }

    /// Refuses: pairing ends with Pairing Failed (0x01 "Passkey Entry Failed" or 0x0C "Numeric
    /// Comparison Failed").
    public func cancel() async {
        switch kind {
        case .confirmNumber: await respond(.confirm(false))
        case .enterPasskey, .displayPasskey: await respond(.passkey(nil))
        }
    }

    /// The question in one line, with the number zero-padded to six digits.
    public var description: String {
        switch kind {
        case let .confirmNumber(number): "does the other device show \(Self.sixDigits(number))?"
        case .enterPasskey: "enter the six-digit passkey the other device shows"
        case let .displayPasskey(passkey): "type \(Self.sixDigits(passkey)) on the other device"
        }
    }

    /// `number` as six digits, zero-padded ("004711").
    public static func sixDigits(_ number: UInt32) -> String {
        let digits = String(number % 1_000_000)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }
}

/// The one reader of the host's security events: hands pairing prompts to the application in
/// order. Other events (outcomes, levels) are answered by the calls that wait for them.
final class PairingPromptFeed: Sendable {
    /// The prompts, one sequence for the host's life.
    let prompts: AsyncStream<PairingPrompt>
    private let pump: Task<Void, Never>

    init(stack: HostStack) {
        let (prompts, continuation) = AsyncStream<PairingPrompt>.makeStream(bufferingPolicy: .bufferingNewest(64))
        self.prompts = prompts
        pump = Task {
            for await event in stack.securityEvents {
                if case let .prompt(handle, prompt) = event {
                    let address = await stack.openConnections.first { $0.handle == handle }?.peer
                    continuation.yield(PairingPrompt(prompt, handle: handle, address: address, stack: stack))
                }
            }
            continuation.finish()
        }
    }

    deinit { pump.cancel() }
}
