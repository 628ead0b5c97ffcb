import BluetideTestSupport
import Foundation
import Testing

/// `bluetide uart` run as a user runs it: a child process with pipes, a pty used by pyserial,
/// and a real terminal in tmux.
@Suite struct UARTCommandTests {
    @Test func pipeModeSendsStdinAndPrintsTheAnswer() async throws {
        let process = try BluetideExecutable.launch(["uart", "HMSoft", "--emulate", "hm10", "--scan-time", "5"])
        try await process.writeToStdin("AT+NAME?\n")
        await process.closeStdin()
        let status = await process.waitForCompletion(timeout: .seconds(60))
        await process.stop()
        let stdout = await process.output(.stdout)
        let stderr = await process.output(.stderr)
        #expect(status == 0, "\(stderr)")
        #expect(stdout == ["OK+NAME:HMSoft"], "stdout \(stdout), stderr \(stderr)")
        #expect(stderr.contains { $0.hasPrefix("HMSoft: connected: HM-10 (FFE0: write FFE1, notify FFE1), 20-byte writes") }, "\(stderr)")
    }

    /// Issue 21 item 12: AT commands piped in at once, with --eol, go one line per write and are
    /// each answered (not merged into 20-byte writes and echoed).
    @Test func pipedATCommandsWithEOLAreAnsweredOneByOne() async throws {
        let run = try await BluetideExecutable.run(
            ["uart", "HMSoft", "--emulate", "hm10", "--scan-time", "5", "--eol", "crlf"], stdin: "AT\nAT+VERS?\nAT+NAME?\nAT+ROLE?")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.joined() == "OKHMSoft V540OK+NAME:HMSoftOK+Get:0", "\(run.stdout)")
    }

    @Test func pipeModeEchoesDataAndPicksTheOnlyDevice() async throws {
        let run = try await BluetideExecutable.run(["uart", "--emulate", "nus", "--scan-time", "1", "--json"], stdin: "hello\nworld\n")
        #expect(run.status == 0, "\(run.stderr)")
        let texts = run.stdout.compactMap { JSONValue(line: $0)?["text"]?.string }.joined()
        #expect(texts == "hello\nworld\n", "\(run.stdout)")
        #expect(run.stderr.contains { JSONValue(line: $0)?["type"]?.string == "connected" }, "\(run.stderr)")
    }

    @Test func twoDevicesPrefixLinesAndBroadcast() async throws {
        let run = try await BluetideExecutable.run(
            ["uart", "HMSoft", "Bluetide UART", "--emulate", "hm10,nus", "--broadcast"], stdin: "ping\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Set(run.stdout) == ["[HMSoft] ping", "[Bluetide UART] ping"], "\(run.stdout)")
        let single = try await BluetideExecutable.run(["uart", "HMSoft", "Bluetide UART", "--emulate", "hm10,nus"], stdin: "only\n")
        #expect(single.stdout == ["[HMSoft] only"], "without --broadcast input goes to the first (selected) device: \(single.stdout)")
    }

    @Test func listIsRankedByRSSIWithJSON() async throws {
        let run = try await BluetideExecutable.run(["uart", "--list", "--json", "--emulate", "hm10@-70,nus@-40,heart-rate@-30", "--scan-time", "1"])
        #expect(run.status == 0, "\(run.stderr)")
        let rows = run.stdout.compactMap { JSONValue(line: $0) }
        #expect(rows.compactMap { $0["device"]?["name"]?.string } == ["Bluetide UART", "HMSoft"], "\(run.stdout)")
        #expect(rows.compactMap { $0["device"]?["rssiDbm"]?.int } == [-40, -70])
        #expect(rows.first?["services"]?.array?.first?["name"]?.string == "Nordic UART")
    }

    @Test func errorsSayWhatWasWrong() async throws {
        let unknown = try await BluetideExecutable.run(["uart", "Robot9", "--emulate", "hm10", "--scan-time", "1"])
        #expect(unknown.status == 1, "a runtime failure")
        #expect(unknown.stderr.contains { $0.contains("no device named Robot9 seen within 1 s; seen: HMSoft") }, "\(unknown.stderr)")
        let noUART = try await BluetideExecutable.run(["uart", "Bluetide HRM", "--emulate", "heart-rate", "--scan-time", "3"])
        #expect(noUART.status == 1)
        #expect(noUART.stderr.contains { $0.contains("Bluetide HRM has no UART service") && $0.contains("180D [") && $0.contains("--service UUID --write UUID --notify UUID") }, "\(noUART.stderr)")
        let badEOL = try await BluetideExecutable.run(["uart", "--eol", "lfcr"])
        #expect(badEOL.status == 2)
        #expect(badEOL.stderr.contains { $0.contains("--eol lfcr: expected one of cr, lf, crlf, none") }, "\(badEOL.stderr)")
        let halfCustom = try await BluetideExecutable.run(["uart", "X", "--service", "FFE0"])
        #expect(halfCustom.stderr.contains { $0.contains("--service, --write and --notify go together") }, "\(halfCustom.stderr)")
    }

    /// pyserial opens the `--pty` link and sends 100 KB of random bytes through the echoing
    /// device: they come back complete and in order (HM-10: 20-byte writes and notifications;
    /// Nordic UART: MTU − 3).
    @Test(arguments: [("hm10", "HMSoft"), ("nus", "Bluetide UART")])
    func ptyRoundTripsOneHundredKilobytesWithPyserial(model: String, name: String) async throws {
        let python = try await BumbleEnvironment.requirePython()  // the interpreter the PyPI packages went into
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("ttyBLE-\(UUID().uuidString.prefix(8))").path
        let bridge = try BluetideExecutable.launch(["uart", name, "--emulate", model, "--pty", link])
        defer { Task { await bridge.stop() } }
        _ = try await bridge.firstLine(from: .stderr, timeout: .seconds(60), describing: "serial port ready") { $0.contains("serial port ready: \(link)") }
        let script = BumbleEnvironment.repositoryRoot.appendingPathComponent("Interop/serial/pty_round_trip.py")
        let check = try BumbleProcess.launch(name: "pyserial", executable: python, arguments: ["-u", script.path, link, "100000", "11"])
        let status = await check.waitForCompletion(timeout: .seconds(180))
        await check.stop()
        let stdout = await check.output(.stdout)
        let stderr = await check.output(.stderr)
        #expect(status == 0, "\(stderr)")
        let result = try #require(stdout.compactMap { JSONValue(line: $0) }.first, "pyserial printed \(stdout) \(stderr)")
        #expect(result["received"]?.int == 100_000, "\(result)")
        #expect(result["equal"]?.bool == true, "\(result)")
        await bridge.stop()
        #expect(!FileManager.default.fileExists(atPath: link), "the symlink is removed at exit")
    }

    /// `--tcp`: a TCP client's bytes go to the device and the echo comes back; a second client
    /// is served after the first leaves.
    @Test func tcpBridgeServesOneClientAtATime() async throws {
        let python = try await BumbleEnvironment.requirePython()
        let bridge = try BluetideExecutable.launch(["uart", "HMSoft", "--emulate", "hm10", "--tcp", "127.0.0.1:0"])
        defer { Task { await bridge.stop() } }
        let ready = try await bridge.firstLine(from: .stderr, timeout: .seconds(60), describing: "listening line") { $0.contains("listening on 127.0.0.1:") }
        let port = try #require(ready.split(separator: ":").last.flatMap { Int(String($0)) }, "\(ready)")
        let client = """
            import socket, sys
            for text in (b"first client\\n", b"second client\\n"):
                s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
                s.sendall(text)
                got = b""
                while len(got) < len(text):
                    got += s.recv(100)
                s.close()
                print(got.decode().strip(), flush=True)
            """
        let run = try BumbleProcess.launch(name: "tcp client", executable: python, arguments: ["-c", client, String(port)])
        let status = await run.waitForCompletion(timeout: .seconds(60))
        await run.stop()
        let stderr = await run.output(.stderr)
        let stdout = await run.output(.stdout)
        #expect(status == 0, "\(stderr)")
        #expect(stdout == ["first client", "second client"])
        await bridge.stop()
    }

    /// A real terminal: tmux runs `bluetide uart --emulate hm10`, keys are typed with send-keys
    /// and the screen read with capture-pane.
    @Test func interactiveSessionInTmux() async throws {
        let binary = try #require(DecodeCommandTests.bluetideBinary())
        let tmux = try #require(Tmux(), "tmux not installed (apt-get install tmux)")
        do {
            try tmux.start("\(binary.path) uart --emulate hm10 --scan-time 1")
            _ = try await tmux.waitForScreen(containing: "Ctrl-] for the menu")
            try await tmux.keys("AT+NAME?", "Enter")
            _ = try await tmux.waitForScreen(containing: "OK+NAME:HMSoft")
            try await tmux.keys("C-]")
            _ = try await tmux.waitForScreen(containing: "menu: q quit")
            try await tmux.keys("h")
            _ = try await tmux.waitForScreen(containing: "hex on")
            try await tmux.keys("hi", "Enter")
            _ = try await tmux.waitForScreen(containing: "68 69 0D 0A")
            try await tmux.keys("C-]")
            try await tmux.keys("r")
            _ = try await tmux.waitForScreen(containing: "HMSoft: RSSI -50 dBm")
            try await tmux.keys("C-]")
            try await tmux.keys("q")
            let screen = try await tmux.waitForScreen(containing: "[exited 0]")
            #expect(screen.contains("searching for UART devices"), "\(screen)")
        } catch {
            await tmux.kill()
            throw error
        }
        await tmux.kill()
    }
}

/// A tmux server of its own (a private socket) with one session of 160×40. Commands run
/// through the test harness's process runner (output read on its own threads, every wait
/// limited), except the one that starts the server, which is left to run detached.
struct Tmux: Sendable {
    let executable: URL
    let socket = "bluetide-uart-\(UUID().uuidString.prefix(8))"
    let session = "uart"

    init?() {
        guard let found = ["/usr/bin/tmux", "/usr/local/bin/tmux"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
        executable = URL(fileURLWithPath: found)
    }

    /// Runs `tmux -L socket arguments…` and returns its standard output.
    @discardableResult
    func run(_ arguments: [String]) async throws -> String {
        let process = try BumbleProcess.launch(name: "tmux", executable: executable, arguments: ["-L", socket] + arguments)
        _ = await process.waitForCompletion(timeout: .seconds(20))
        await process.stop()
        return await process.output(.stdout).joined(separator: "\n")
    }

    /// Starts the session running `command` (with a new private `XDG_CONFIG_HOME`, as every
    /// child of the tests has, so the user's bond file is never read or written); the pane stays
    /// after it exits, showing its status.
    func start(_ command: String) throws {
        let command = "XDG_CONFIG_HOME='\(BumbleProcess.privateConfigHome())' " + command
        let process = Process()
        process.executableURL = executable
        process.arguments = ["-L", socket, "new-session", "-d", "-s", session, "-x", "160", "-y", "40",
                             command + "; echo \"[exited $?]\"; sleep 5"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    func keys(_ keys: String...) async throws { try await run(["send-keys", "-t", session] + keys) }

    func screen() async throws -> String { try await run(["capture-pane", "-p", "-t", session, "-S", "-200"]) }

    /// Waits (every 100 ms, at most about 60 s) until the screen shows `text`; throws with the screen.
    /// (A wall-time wait on an outside program, tmux, which has no event to wait on: allowed.)
    func waitForScreen(containing text: String) async throws -> String {
        var screen = ""
        for _ in 0..<600 {
            screen = (try? await self.screen()) ?? ""
            if screen.contains(text) { return screen }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TmuxTimeout(description: "\"\(text)\" did not appear; the screen:\n\(screen)")
    }

    /// Ends the server (and the session's processes) and removes its socket file, which a
    /// server ended from another mount namespace can leave behind.
    func kill() async {
        _ = try? await run(["kill-server"])
        let directory = ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp"
        try? FileManager.default.removeItem(atPath: "\(directory)/tmux-\(getuid())/\(socket)")
    }
}

struct TmuxTimeout: Error, CustomStringConvertible { let description: String }
