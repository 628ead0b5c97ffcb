import ArgumentParser
import BluetideReflex
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideCommands
import BluetideReflexWeb

/// `bluetide reflex coach serve`: registered, teaches with examples, refuses bad settings clearly.
@Suite struct ReflexCoachServeCommandTests {
    @Test func aNetworkAddressWithoutLanOrLanWithoutAPasswordIsRefused() async throws {
        let db = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: db) }
        for arguments in [["--host", "0.0.0.0"], ["--lan"]] {
            let serve = try #require(try ReflexCoachCommand.parseAsRoot(["serve", "--port", "0", "--db", db] + arguments) as? ReflexCoachServe)
            do {
                _ = try await serve.start { _ in }
                Issue.record("\(arguments) served")
            } catch let failure as CommandFailure {
                #expect(failure.message.contains("--lan"), "\(failure.message)")
            }
        }
    }

    @Test func serveIsACoachSubcommandWithExamples() throws {
        let parsed = try ReflexCoachCommand.parseAsRoot(["serve", "--emulate", "--port", "0"])
        let serve = try #require(parsed as? ReflexCoachServe)
        #expect(serve.emulate && serve.port == 0 && serve.host == nil && !serve.lan, "loopback unless --lan")
        let help = ReflexCoachCommand.helpMessage(for: ReflexCoachServe.self)
        #expect(help.contains("bluetide reflex coach serve --emulate"))
        #expect(help.contains("http://localhost:8080"))
        #expect(help.contains("--transport"))
        #expect(DashboardAddress.urls(host: "127.0.0.1", port: 8080) == ["http://127.0.0.1:8080"])
        #expect(DashboardAddress.urls(host: "0.0.0.0", port: 8080).first == "http://localhost:8080")
    }

    @Test func runsStartedFromTheBrowserAreFollowedInTheTerminal() {
        var started = LiveRunMessage(kind: .started, run: 2)
        started.athlete = "Ana Ruiz"
        started.sequence = "Jab"
        started.stepCount = 4
        #expect(ReflexCoachServe.terminalLine(started) == "run 2: Ana Ruiz, sequence \"Jab\" (4 steps)")
        var hit = LiveRunMessage(kind: .step, run: 2)
        (hit.step, hit.target, hit.colour, hit.hit, hit.reactionMilliseconds) = (0, 3, "yellow", true, 412)
        #expect(ReflexCoachServe.terminalLine(hit) == "run 2: step 1 target 3 (yellow): hit 412 ms")
        var miss = LiveRunMessage(kind: .step, run: 2)
        (miss.step, miss.target, miss.colour, miss.hit, miss.wrongTarget) = (1, 5, "orange", false, true)
        #expect(ReflexCoachServe.terminalLine(miss) == "run 2: step 2 target 5 (orange): miss, wrong target first")
        var ended = LiveRunMessage(kind: .ended, run: 2, text: "link lost")
        (ended.complete, ended.stepsStored) = (false, 3)
        #expect(ReflexCoachServe.terminalLine(ended) == "run 2: incomplete, 3 steps stored (link lost)")
        #expect(ReflexCoachServe.terminalLine(LiveRunMessage(kind: .failed, run: 3, text: "no trainer found")) == "run 3: failed: no trainer found")
        #expect(ReflexCoachServe.terminalLine(LiveRunMessage(kind: .idle, run: 0)) == nil)
    }

    @Test func badPortsAreRefusedWithWhatToTry() async throws {
        let db = NSTemporaryDirectory() + "serve-\(UUID().uuidString).sqlite"
        defer { try? FileManager.default.removeItem(atPath: db) }
        try await withRunTimeLimit(40, onTimeout: { DashboardFixture.Timeout() }) { try await Self.refusals(db: db) }
    }

    static func refusals(db: String) async throws {
        do {
            _ = try await ReflexCoachServe.parse(["--port", "70000", "--db", db]).start { _ in }
            Issue.record("port 70000 was accepted")
        } catch let failure as CommandFailure {
            #expect(failure.message == "--port 70000: expected 0...65535 (0 picks a free port)")
        }

        let first = try await ReflexCoachServe.parse(["--host", "127.0.0.1", "--port", "0", "--emulate", "--db", db]).start { _ in }
        do {
            _ = try await ReflexCoachServe.parse(["--host", "127.0.0.1", "--port", "\(first.dashboard.port)", "--emulate", "--db", db]).start { _ in }
            Issue.record("a port in use was accepted")
        } catch let failure as CommandFailure {
            #expect(failure.message.hasPrefix("cannot listen on 127.0.0.1:\(first.dashboard.port): "))
            #expect(failure.message.contains(": the port is in use") && failure.message.hasSuffix("or --port 0 for any free one"))
            #expect(failure.status == .failure && failure.field == "--port")
        }
        await first.stop()
    }
}
