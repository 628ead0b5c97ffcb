import Bluetide
import Synchronization
import Testing
@testable import BluetideCommands

/// Ctrl-C stays prompt when the controller stopped answering: the polite shutdown step is cut
/// short by the forced one (which, in the commands, closes the host and fails its waits).
@Suite(.timeLimit(.minutes(1))) struct PromptShutdownTests {
    final class Flag: Sendable {
        let value = Mutex(false)
        var isSet: Bool { value.withLock { $0 } }
    }

    @Test func aStuckPoliteStepIsEndedByTheForcedOne() async {
        // The polite step waits for an answer that only the forced step gives (as a command
        // waiting for a silent controller is only failed by closing the host).
        let (answers, answer) = AsyncStream<Void>.makeStream()
        let forced = Flag()
        await PromptShutdown.run(within: .milliseconds(50), {
            for await _ in answers { return }
        }, force: {
            forced.value.withLock { $0 = true }
            answer.finish()
        })
        #expect(forced.isSet)
    }

    @Test func aPromptPoliteStepIsNotForced() async {
        let forced = Flag()
        await PromptShutdown.run(within: .seconds(30), {}, force: { forced.value.withLock { $0 = true } })
        // `run` returns only once its deadline task has ended: a force could not come later.
        #expect(!forced.isSet)
    }
}
