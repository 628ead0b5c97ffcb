import BluetideBase
import BluetideHost
import Foundation
import Synchronization
import Testing

@testable import BluetideCommands

/// A conversation with typed answers given in advance; it records what was asked and shown.
private final class FakeConversation: Sendable {
    private struct State {
        var answers: [String?]
        var asked: [String] = []
        var told: [String] = []
    }

    private let state: Mutex<State>

    init(_ answers: [String?] = []) { state = Mutex(State(answers: answers)) }

    var asked: [String] { state.withLock { $0.asked } }
    var told: [String] { state.withLock { $0.told } }

    var conversation: PairingConversation {
        PairingConversation(ask: { question in
            self.state.withLock { state in
                state.asked.append(question)
                return state.answers.isEmpty ? nil : state.answers.removeFirst()
            }
        }, tell: { line in self.state.withLock { $0.told.append(line) } })
    }
}

@Suite private struct PairingPrompterTests {
    static let address = BluetoothAddress.randomStatic(0x0102_0304_0506)

    static func prompter(_ mode: PairingMode, _ fake: FakeConversation, hint: PairingPrompter.PairingHint = .option) -> PairingPrompter {
        PairingPrompter(mode: mode, hint: hint, conversation: fake.conversation, label: { _ in "Ring" })
    }

    @Test func atATerminalItAsksToConfirmTheNumber() async {
        for (typed, expected) in [("y", true), ("YES", true), ("n", false), ("", false), ("maybe", false)] {
            let fake = FakeConversation([typed])
            let prompter = Self.prompter(.ask, fake)
            #expect(await prompter.reply(to: .confirmNumber(4711), from: Self.address) == .confirm(expected), "\(typed)")
            #expect(fake.asked == ["Confirm that Ring shows 004711 [y/N] "])
            #expect((prompter.refusal(for: Self.address) == nil) == expected, "\(typed)")
        }
        let ended = FakeConversation([nil])
        let prompter = Self.prompter(.ask, ended)
        #expect(await prompter.reply(to: .confirmNumber(1), from: Self.address) == .confirm(false))
        #expect(prompter.refusal(for: Self.address) == "pairing with Ring cancelled: no answer to whether it shows 000001 (input ended)")
    }

    @Test func atATerminalItAsksForThePasskeyUntilSixDigitsAreTyped() async {
        let fake = FakeConversation(["12345", "12a456", "123 456"])
        let prompter = Self.prompter(.ask, fake)
        #expect(await prompter.reply(to: .enterPasskey, from: Self.address) == .passkey(123_456))
        #expect(fake.asked == Array(repeating: "Enter the 6-digit passkey Ring shows: ", count: 3))
        #expect(fake.told == [
            "\"12345\" is not six digits; type the number Ring shows, e.g. 123456",
            "\"12a456\" is not six digits; type the number Ring shows, e.g. 123456",
        ])

        let wrongThrice = FakeConversation(["1", "2", "3", "123456"])
        let giving = Self.prompter(.ask, wrongThrice)
        #expect(await giving.reply(to: .enterPasskey, from: Self.address) == .cancel)
        #expect(wrongThrice.asked.count == 3)
        #expect(giving.refusal(for: Self.address) == "pairing with Ring cancelled: no six-digit passkey typed (passkey entry failed, 0x01)")

        let empty = FakeConversation([""])
        let cancelled = Self.prompter(.ask, empty)
        #expect(await cancelled.reply(to: .enterPasskey, from: Self.address) == .cancel, "an empty line cancels at once")
        #expect(empty.asked.count == 1)
    }

    @Test func aPasskeyToTypeOnTheDeviceIsShownInEveryMode() async {
        for mode in [PairingMode.ask, .justWorks, .confirm, .passkey(1)] {
            let fake = FakeConversation()
            #expect(await Self.prompter(mode, fake).reply(to: .displayPasskey(42), from: nil) == .shown)
            #expect(fake.told == ["Type 000042 on Ring"])
            #expect(fake.asked.isEmpty)
        }
    }

    @Test func modesGivenInAdvanceAnswerWithoutAsking() async {
        let fake = FakeConversation(["n"])
        #expect(await Self.prompter(.passkey(654_321), fake).reply(to: .enterPasskey, from: Self.address) == .passkey(654_321))
        #expect(await Self.prompter(.confirm, fake).reply(to: .confirmNumber(5), from: Self.address) == .confirm(true))
        #expect(fake.asked.isEmpty)
    }

    @Test func whatAModeCannotAnswerIsRefusedWithALineNamingWhatToGive() async {
        let fake = FakeConversation(["123456"])
        let justWorks = Self.prompter(.justWorks, fake)
        #expect(await justWorks.reply(to: .enterPasskey, from: Self.address) == .cancel)
        #expect(justWorks.refusal(for: Self.address) == "Ring asks for the passkey it shows: give it with --pairing passkey:NNNNNN, or run at a terminal to be asked")
        let passkey = Self.prompter(.passkey(1), fake)
        #expect(await passkey.reply(to: .confirmNumber(7), from: Self.address) == .confirm(false))
        #expect(passkey.refusal(for: Self.address)?.contains("--pairing confirm") == true)
        let shell = Self.prompter(.justWorks, fake, hint: .shellCommand)
        #expect(await shell.reply(to: .enterPasskey, from: Self.address) == .cancel)
        #expect(shell.refusal(for: Self.address) == "Ring asks for the passkey it shows: type pair passkey:NNNNNN with the six digits it shows")
        #expect(fake.asked.isEmpty, "no mode but ask reads an answer")
        // The refused pairing then ends with that line, not "passkey entry failed".
        #expect(PairingFailureLine.text(.localFailure(.passkeyEntryFailed), device: "Ring", refusal: shell.refusal(for: Self.address))
            == shell.refusal(for: Self.address))
    }

    @Test func theShellsPairModeAppliesUntilChangedBack() async {
        let fake = FakeConversation()
        let prompter = Self.prompter(.justWorks, fake)
        prompter.use(.passkey(111_111))
        #expect(prompter.mode == .passkey(111_111))
        #expect(await prompter.reply(to: .enterPasskey, from: nil) == .passkey(111_111))
    }

    @Test func pairingModesParseAndChooseTheirIOCapability() throws {
        #expect(PairingMode(parsing: "just-works") == .justWorks)
        #expect(PairingMode(parsing: "confirm") == .confirm)
        #expect(PairingMode(parsing: "passkey:004711") == .passkey(4711))
        for bad in ["passkey:12345", "passkey:1234567", "passkey:12a456", "passkey:", "yes", ""] {
            #expect(PairingMode(parsing: bad) == nil, "\(bad)")
        }
        #expect(try PairingMode.choose(nil, canAsk: true) == .ask)
        #expect(try PairingMode.choose(nil, canAsk: false) == .justWorks)
        #expect(try PairingMode.choose("confirm", canAsk: true) == .confirm)
        let failure = try #require(throws: CommandFailure.self) { try PairingMode.choose("pin:1234", canAsk: false) }
        #expect(failure.status == .usage)
        #expect(failure.field == "--pairing")
        #expect(PairingMode.ask.ioCapability == .keyboardDisplay)
        #expect(PairingMode.justWorks.ioCapability == .noInputNoOutput)
        #expect(PairingMode.passkey(1).ioCapability == .keyboardOnly)
        #expect(PairingMode.confirm.ioCapability == .displayYesNo)
        #expect(PairingMode.passkey(42).description == "passkey:000042")
    }

    @Test func everyPairingOutcomeIsOneLineSayingWhatToDo() {
        let cases: [(SMPPairingError, String)] = [
            (.localFailure(.confirmValueFailed), "pairing with Ring failed: the passkey did not match (confirm value failed, 0x04); check the six digits Ring shows and pair again"),
            (.peerFailure(.confirmValueFailed), "pairing with Ring failed: it says the passkey did not match (confirm value failed, 0x04); check the six digits it shows and pair again"),
            (.peerFailure(.pairingNotSupported), "Ring refused to pair (pairing not supported, 0x05): it does not pair, or not now; put it in pairing mode and try again"),
            (.peerFailure(.authenticationRequirements), "pairing with Ring failed: it needs a pairing method this side did not offer (authentication requirements, 0x03); run at a terminal to be asked, or give --pairing passkey:NNNNNN or --pairing confirm"),
            (.peerFailure(.repeatedAttempts), "Ring refuses pairing for now after repeated attempts (0x09); wait a minute, then pair again"),
            (.timeout, "pairing with Ring failed: it stopped answering for 30 s (SMP timeout); reconnect and pair again"),
            (.localFailure(.passkeyEntryFailed), "pairing with Ring cancelled: no passkey was entered (passkey entry failed, 0x01)"),
            (.peerFailure(.numericComparisonFailed), "pairing with Ring failed: the numbers were not confirmed on it (numeric comparison failed, 0x0C)"),
            (.encryptionFailed(status: 0x06), "encrypting the link to Ring failed: it has no key for our bond (PIN or key missing, 0x06), it probably forgot it; remove ours with `bluetide bonds remove \(Self.address)` and pair again"),
        ]
        for (error, line) in cases {
            let text = PairingFailureLine.text(error, device: "Ring", address: Self.address)
            #expect(text == line)
            #expect(!text.contains("\n"))
            #expect(CommandFailure(text).status == .failure, "a pairing failure is not a usage error: \(text)")
        }
        // (`explain`, which unwraps the public API's error, runs in GATTPairingBumbleTests.)
    }
}
