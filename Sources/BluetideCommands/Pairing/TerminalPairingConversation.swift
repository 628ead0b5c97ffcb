import Foundation

/// Pairing questions on the terminal: asked on standard error (standard output stays the
/// command's own, e.g. its JSON), answered by a line of standard input.
enum TerminalPairingConversation {
    /// The terminal conversation when standard input is a terminal, else nil (no one to ask).
    static func make() -> PairingConversation? {
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        return PairingConversation(ask: { question in
            writeToStandardError(question)
            return await readLine()
        }, tell: { writeToStandardError($0 + "\n") })
    }

    /// Asks no one (every question is refused with a line naming `--pairing`); passkeys to
    /// type on the device are still shown on standard error.
    static let tellOnly = PairingConversation(ask: { _ in nil }, tell: { writeToStandardError($0 + "\n") })

    /// One line of standard input, read on a thread of its own (a blocking read must not hold a
    /// thread of the cooperative pool); nil at end of input.
    private static func readLine() async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Swift.readLine(strippingNewline: true)) }
        }
    }

    static func writeToStandardError(_ text: String) {
        StandardStreams.error.write(text)
    }
}
