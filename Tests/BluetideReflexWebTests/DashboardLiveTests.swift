import BluetideReflex
import BluetideReflexCoach
import BluetideReflexEmulation
import BluetideTestSupport
import Foundation
import HummingbirdWSClient
import Logging
import Synchronization
import Testing
@testable import BluetideCommands
@testable import BluetideReflexWeb

/// `/live` over a real socket: a page that listens gets each step as the emulated trainer
/// reports it, and a page that connects later catches up on the whole run.
@Suite struct DashboardLiveTests {
    struct Timeout: Error, CustomStringConvertible {
        var description: String { "the live run did not finish in time" }
    }

    @Test func liveResultsArriveOverTheWebSocketAndLatePagesCatchUp() async throws {
        try await withRunTimeLimit(60, onTimeout: { Timeout() }) {
            let store = try CoachStore.inMemory()
            let athlete = try store.addAthlete(Athlete(name: "Ana", created: fixtureNow))
            let targets: [UInt8] = [4, 1, 5, 0, 3]
            let sequence = try store.saveSequence(name: "Five", targets: targets, milliseconds: Array(repeating: 900, count: 5), at: fixtureNow)
            let link = try await CoachBluetooth.open(transport: "virtual", emulate: true, seed: 11) { _ in }
            var coach = ReflexCoach(central: link.bluetooth.central, store: store)
            coach.scanRound = .seconds(1)
            let runs = RunController(coach: coach)
            let running = try await DashboardServer(runs: runs).start(host: "127.0.0.1", port: 0)

            let live = try await Self.listen(port: running.port) { message in
                if message.kind == .idle { try await runs.start(athlete: athlete, sequence: sequence) }
                return message.kind == .ended || message.kind == .failed
            }
            let late = try await Self.listen(port: running.port) { $0.kind == .ended || $0.kind == .failed }
            await running.stop()
            await link.close()

            #expect(live.first?.kind == .idle)
            #expect(live.dropFirst().first?.kind == .started && live.dropFirst().first?.athlete == "Ana")
            let ended = try #require(live.last)
            #expect(ended.kind == .ended && ended.complete == true, "\(ended.text ?? "")")
            let steps = live.filter { $0.kind == .step }
            #expect(steps.map(\.target) == targets.map { Optional($0) })
            #expect(steps.map(\.step) == (0..<5).map { Optional($0) })
            #expect(steps.map(\.colour) == ["white", "blue", "orange", "red", "yellow"])
            let lastStep = try #require(live.lastIndex { $0.kind == .step })
            #expect(live.firstIndex { $0.kind == .ended }! > lastStep, "every step arrives before the end")

            let sessionID = try #require(ended.sessionId)
            let stored = try store.steps(sessionID: sessionID)
            #expect(stored.map(\.reactionMilliseconds) == steps.map { Int64($0.reactionMilliseconds ?? -1) })
            #expect(stored.map(\.hit) == steps.map { $0.hit ?? false })
            #expect(late == Array(live.dropFirst()), "a page that connects later gets the same run, in order")
        }
    }

    /// Connects to `/live`, hands each message to `handle` until it returns true; returns them all.
    static func listen(port: Int, _ handle: @escaping @Sendable (LiveRunMessage) async throws -> Bool) async throws -> [LiveRunMessage] {
        let received = Mutex<[LiveRunMessage]>([])
        var logger = Logger(label: "dashboard-live-test")
        logger.logLevel = .warning
        try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/live", logger: logger) { inbound, outbound, _ in
            for try await message in inbound.messages(maxSize: 1 << 20) {
                guard case let .text(text) = message else { continue }
                let decoded = try JSONDecoder().decode(LiveRunMessage.self, from: Data(text.utf8))
                received.withLock { $0.append(decoded) }
                if try await handle(decoded) { break }
            }
            try await outbound.close(.normalClosure, reason: nil)
        }
        return received.withLock { $0 }
    }
}
