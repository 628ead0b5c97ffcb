import BluetideTestSupport
import Foundation
import Testing

/// The shared process launcher (BluetideTestSupport/Bumble) with small Python programs: both
/// output streams as lines, modules and scripts, stdin, exit status and how the process ended,
/// and the interop folder lookup.
@Suite("Bumble process launcher", .serialized, .bumbleInterop, .timeLimit(.minutes(1)))
struct BumbleProcessTests {
    @Test("The interop folder is found from the support module's location")
    func interopFolder() {
        let scripts = BumbleEnvironment.scriptsDirectory
        for script in BumbleEnvironment.requiredScripts {
            #expect(FileManager.default.fileExists(atPath: scripts.appendingPathComponent(script).path), "\(scripts.path)")
        }
    }

    @Test("A script's stdout and stderr arrive as separate line streams, and in the stderr log")
    func stdoutAndStderr() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("bluetide-process-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("talk.py")
        try """
            import sys
            print("out 1")
            print("err 1", file=sys.stderr)
            print("out 2")
            print("err 2", file=sys.stderr)
            sys.exit(3)
            """.write(to: script, atomically: true, encoding: .utf8)
        let log = directory.appendingPathComponent("talk.stderr.log")

        let process = try await BumbleProcess.launchPython(.script(script), arguments: [], stderrLog: log)
        #expect(process.name == "talk")
        #expect(try await process.nextLine(timeout: .seconds(30)) == "out 1")
        let err = try await process.firstLine(from: .stderr, timeout: .seconds(30), describing: "err 2") {
            $0 == "err 2"
        }
        #expect(err == "err 2")
        #expect(await process.waitForExit(timeout: .seconds(30)) == 3)
        #expect(try await process.nextLine(timeout: .seconds(30)) == "out 2")
        #expect(try await process.nextLine(timeout: .seconds(30)) == nil)
        #expect(try await process.nextLine(from: .stderr, timeout: .seconds(30)) == nil)
        var all: [String] = []
        while let line = try await process.nextLine(from: .either, timeout: .seconds(30)) { all.append(line) }
        #expect(Set(all) == ["out 1", "out 2", "err 1", "err 2"])
        #expect(await process.output(.stderr) == ["err 1", "err 2"])
        #expect(await process.stderrTail() == "err 1\nerr 2")
        #expect((try? String(contentsOf: log, encoding: .utf8)) == "err 1\nerr 2\n")
        let failure = await process.failure("checked")
        #expect(failure.description.contains("exited with status 3"))
        #expect(failure.description.contains("err 2"))
    }

    @Test("A module runs with -m and its arguments; stop() after the exit is harmless")
    func module() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bluetide-\(UUID().uuidString).json")
        try #"{"b": [1, 2], "a": "x"}"#.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }

        let process = try await BumbleProcess.launchPython(
            .module("json.tool"), arguments: ["--compact", "--sort-keys", file.path])
        #expect(process.name == "tool")
        let line = try #require(try await process.nextLine(timeout: .seconds(30)))
        #expect(JSONValue(line: line) == .object(["a": .string("x"), "b": .array([.number(1), .number(2)])]))
        #expect(await process.waitForExit(timeout: .seconds(30)) == 0)
        await process.stop()
    }

    @Test("A missing script is reported before anything starts")
    func missingScript() async {
        await #expect(throws: BumbleHarnessError.self) {
            _ = try await BumbleProcess.launchPython(.interopScript("no-such-script.py"))
        }
    }

    @Test("A process that ignores SIGTERM is killed by PID after the grace period")
    func stopByPID() async throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("bluetide-\(UUID().uuidString).py")
        try """
            import signal, time
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            print("ready", flush=True)
            time.sleep(600)
            """.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }

        let process = try await BumbleProcess.launchPython(.script(script))
        _ = try await process.firstLine(timeout: .seconds(30), describing: "ready") { $0 == "ready" }
        #expect(await process.exitStatus == nil)
        await process.stop(grace: .seconds(1))
        #expect(await process.exitStatus != nil)
    }

    @Test("Lines written to stdin arrive in order; closing stdin gives the process end of file")
    func stdinWritesAndClose() async throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("bluetide-\(UUID().uuidString).py")
        try """
            import sys
            for line in sys.stdin:
                print("echo " + line.strip(), flush=True)
            print("eof", flush=True)
            """.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }

        let process = try await BumbleProcess.launchPython(.script(script))
        try await process.writeToStdin("one\n")
        #expect(try await process.nextLine(timeout: .seconds(30)) == "echo one")
        try await process.writeToStdin("two\nthree\n")
        #expect(try await process.nextLine(timeout: .seconds(30)) == "echo two")
        #expect(try await process.nextLine(timeout: .seconds(30)) == "echo three")
        await process.closeStdin()
        #expect(try await process.nextLine(timeout: .seconds(30)) == "eof")
        #expect(await process.waitForExit(timeout: .seconds(30)) == 0)
        #expect(await process.endedBySignal == false)
        // Writing after stdin was closed is an error, not a crash.
        await #expect(throws: BumbleHarnessError.self) { try await process.writeToStdin("late\n") }
        await process.closeStdin()
    }

    @Test("waitForCompletion returns once the process exited and all of its output was read")
    func completion() async throws {
        let process = try BumbleProcess.launch(
            name: "sh", executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", "i=0; while [ $i -lt 2000 ]; do echo line $i; echo err $i >&2; i=$((i+1)); done; exit 4"])
        #expect(await process.waitForCompletion(timeout: .seconds(30)) == 4)
        let stdout = await process.output(.stdout)
        #expect(stdout.count == 2000 && stdout.last == "line 1999")
        #expect(await process.output(.stderr).count == 2000)
        #expect(await process.output(.either).count == 4000)
    }

    @Test("A process ended by a signal is reported as such")
    func endedBySignal() async throws {
        let process = try BumbleProcess.launch(
            name: "sleep", executable: URL(fileURLWithPath: "/bin/sleep"), arguments: ["600"])
        #expect(await process.endedBySignal == nil)
        // SIGTERM reaches the child (the pool thread's blocked signals are not inherited).
        await process.stop(grace: .seconds(5))
        #expect(await process.exitStatus == SIGTERM)
        #expect(await process.endedBySignal == true)
        // Still running after a short wait: waitForCompletion says so with nil.
        let sleeper = try BumbleProcess.launch(
            name: "sleep", executable: URL(fileURLWithPath: "/bin/sleep"), arguments: ["600"])
        #expect(await sleeper.waitForCompletion(timeout: .milliseconds(200)) == nil)
        await sleeper.stop()
    }
}
