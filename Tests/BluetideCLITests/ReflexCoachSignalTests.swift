import Foundation
import Testing

/// `bluetide reflex coach run` stopped by SIGINT or SIGTERM: the session is ended and stored
/// with the signal as its reason, the summary is printed, and the status says it was interrupted.
@Suite struct ReflexCoachSignalTests {
    @Test(arguments: [(SIGINT, "SIGINT", Int32(130)), (SIGTERM, "SIGTERM", Int32(143)), (SIGHUP, "SIGHUP", Int32(129))])
    func aSignalEndsTheSessionAndSaysSo(signal: Int32, name: String, status: Int32) async throws {
        let db = FileManager.default.temporaryDirectory.appendingPathComponent("coach-signal-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: db) }
        #expect(try await BluetideExecutable.run(["reflex", "coach", "athletes", "add", "Ana", "--db", db]).status == 0)
        #expect(try await BluetideExecutable.run([
            "reflex", "coach", "sequences", "save", "Long", "--targets", Array(repeating: "0,1,2,3,4,5", count: 20).joined(separator: ","),
            "--times", "2000", "--db", db,
        ]).status == 0)
        let process = try BluetideExecutable.launch(["reflex", "coach", "run", "--athlete", "Ana", "--sequence", "Long", "--emulate", "--db", db])
        do {
            // Output reaches the pipe line by line: the session's start is seen before the end.
            var seenStart = false
            while !seenStart, let line = try await process.nextLine(timeout: BluetideExecutable.runTimeout) {
                seenStart = line.contains("started")  && line.hasPrefix("session ")
            }
            try #require(seenStart, "no session start line")
            kill(process.pid, signal)
            if await process.waitForExit(timeout: .seconds(20)) == nil {
                kill(process.pid, SIGKILL)
                _ = await process.waitForExit(timeout: .seconds(10))
            }
            #expect(await process.exitStatus == status)
            let output = await process.output(.stdout)
            #expect(output.contains { $0.hasPrefix("summary: ") }, "\(output)")
            #expect(output.contains { $0.hasPrefix("interrupted (\(name)): session ") }, "\(output)")
        } catch {
            await process.stop()
            throw error
        }
        await process.stop()
        let history = try await BluetideExecutable.run(["reflex", "coach", "history", "--athlete", "Ana", "--db", db])
        #expect(history.stdout.contains { $0.contains("incomplete (stopped: \(name))") }, "\(history.stdout)")
    }

    /// `bluetide reflex device` stops the orderly way on a signal and says which in its status:
    /// 130 for SIGINT, 143 for SIGTERM, as every command does.
    @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func reflexDeviceStopsOnASignalWithItsStatus(signal: Int32, expected: Int32) async throws {
        let status = try await Self.exitStatus(of: ["reflex", "device", "--gpio", "sim"], signalled: signal, after: "advertising as")
        #expect(status == expected, "signal \(signal) ends the device with status \(expected)")
    }

    /// `bluetide replay --as-peripheral` stops on the first signal, not the second: status 130
    /// for SIGINT, 143 for SIGTERM.
    @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func replayAsPeripheralStopsOnTheFirstSignal(signal: Int32, expected: Int32) async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("replay-signal-\(UUID().uuidString).jsonl")
        try JSONOutputSchemaTests.replayLog.write(to: log, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: log) }
        let status = try await Self.exitStatus(of: ["replay", log.path, "--as-peripheral"], signalled: signal, after: "replay: advertising as")
        #expect(status == expected, "one signal \(signal) ends the replay with status \(expected)")
    }

    /// Runs `bluetide ARGUMENTS`, sends it one `signal` once it printed a line starting with
    /// `ready`, and returns its exit status (nil when it did not exit within 20 s: then killed).
    static func exitStatus(of arguments: [String], signalled signal: Int32, after ready: String) async throws -> Int32? {
        let process = try BluetideExecutable.launch(arguments)
        do {
            var seen = false
            while !seen, let line = try await process.nextLine(timeout: BluetideExecutable.runTimeout) {
                seen = line.hasPrefix(ready)
            }
            try #require(seen, "no line starting \"\(ready)\"")
            kill(process.pid, signal)
            let status = await process.waitForExit(timeout: .seconds(20))
            if status == nil {
                kill(process.pid, SIGKILL)
                _ = await process.waitForExit(timeout: .seconds(10))
            }
            await process.stop()
            return status
        } catch {
            await process.stop()
            throw error
        }
    }
}
