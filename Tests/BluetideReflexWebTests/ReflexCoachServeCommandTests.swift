import ArgumentParser
import BluetideReflex
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideCommands

/// `bluetide reflex coach serve`: registered, teaches with examples, refuses bad settings clearly.
@Suite struct ReflexCoachServeCommandTests {
    @Test func serveIsACoachSubcommandWithExamples() throws {
        let parsed = try ReflexCoachCommand.parseAsRoot(["serve", "--emulate", "--port", "0"])
        let serve = try #require(parsed as? ReflexCoachServe)
        #expect(serve.emulate && serve.port == 0 && serve.host == "0.0.0.0")
        let help = ReflexCoachCommand.helpMessage(for: ReflexCoachServe.self)
        #expect(help.contains("bluetide reflex coach serve --emulate"))
        #expect(help.contains("http://localhost:8080"))
        #expect(help.contains("--transport"))
        #expect(ReflexCoachServe.urls(host: "127.0.0.1", port: 8080) == ["http://127.0.0.1:8080"])
        #expect(ReflexCoachServe.urls(host: "0.0.0.0", port: 8080).first == "http://localhost:8080")
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
            #expect(failure.message.hasSuffix("(try another --port, or --port 0)"))
        }
        await first.stop()
    }
}
