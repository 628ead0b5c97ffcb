import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideCommands

/// `bluetide shell`: its line parser and line editor as pure logic, then the whole shell on one
/// connection to an emulated strap, from a script (in process and as the executable) and at a
/// terminal (tmux gives it a pseudo-terminal; keys are sent and the screen read back).
@Suite(.timeLimit(.minutes(2))) struct ShellTests {
    @Test func linesParseIntoRequests() throws {
        #expect(try ShellRequest.parse("read battery-level") == .read(characteristic: "battery-level"))
        #expect(try ShellRequest.parse("  write 2A39 01 ") == .write(characteristic: "2A39", value: "01", withResponse: true))
        #expect(try ShellRequest.parse("write FFE1 \"hi there\" --without-response")
            == .write(characteristic: "FFE1", value: "\"hi there\"", withResponse: false))
        #expect(try ShellRequest.parse("read \"Battery Level\"") == .read(characteristic: "Battery Level"))
        #expect(try ShellRequest.parse("sub heart-rate") == .subscribe(characteristic: "heart-rate"))
        #expect(try ShellRequest.parse("mtu") == .mtu(request: nil))
        #expect(try ShellRequest.parse("mtu 247") == .mtu(request: 247))
        #expect(try ShellRequest.parse("wait 3 --timeout 2") == .wait(count: 3, timeout: 2))
        #expect(try ShellRequest.parse("wait") == .wait(count: 1, timeout: 10))
        #expect(try ShellRequest.parse("") == nil)
        #expect(try ShellRequest.parse("# a comment") == nil)
        #expect(try ShellRequest.parse("  # the central's side, a lone quote") == nil)
        #expect(try ShellRequest.parse("EXIT") == .quit)
        #expect(try ShellRequest.parse("pair") == .pair(mode: nil))
        #expect(try ShellRequest.parse("pair passkey:123456") == .pair(mode: .passkey(123_456)))
        #expect(try ShellRequest.parse("pair just-works") == .pair(mode: .justWorks))
        #expect(try ShellRequest.parse("pair confirm") == .pair(mode: .confirm))
    }

    @Test func badLinesSayWhatToType() {
        let cases: [(String, String)] = [
            ("frobnicate", "unknown command \"frobnicate\"; commands: services, read"),
            ("read", "read: expected one characteristic; usage: read CHAR"),
            ("write 2A39", "usage: write CHAR VALUE"),
            ("mtu 10", "mtu: expected octets from 23 to 517"),
            ("wait 0", "wait: expected a count ≥ 1"),
            ("rssi now", "rssi: takes no arguments"),
            ("read \"Battery", "unterminated quote"),
            ("pair passkey:12", "pair: expected just-works, passkey:NNNNNN (six digits, e.g. passkey:123456) or confirm; usage: pair [just-works|passkey:NNNNNN|confirm]"),
            ("pair confirm now", "pair: expected one pairing mode"),
        ]
        for (line, expected) in cases {
            #expect(throws: ShellRequest.SyntaxError.self) { try ShellRequest.parse(line) }
            do { _ = try ShellRequest.parse(line) } catch { #expect(error.message.contains(expected), "\(line): \(error.message)") }
        }
    }

    @Test func writeValuesAreHexTextOrTypedNumbers() throws {
        #expect(try ShellValue.bytes("01FF") == [0x01, 0xFF])
        #expect(try ShellValue.bytes("0x0102") == [0x01, 0x02])
        #expect(try ShellValue.bytes("\"Hi\"") == [0x48, 0x69])
        #expect(try ShellValue.bytes("text:AT") == [0x41, 0x54])
        #expect(try ShellValue.bytes("u8:255") == [0xFF])
        #expect(try ShellValue.bytes("u16:500") == [0xF4, 0x01])
        #expect(try ShellValue.bytes("s16:-2") == [0xFE, 0xFF])
        #expect(try ShellValue.bytes("u32:70000") == [0x70, 0x11, 0x01, 0x00])
        #expect(try ShellValue.bytes("s32:-1") == [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: ShellRequest.SyntaxError.self) { try ShellValue.bytes("u8:256") }
        #expect(throws: ShellRequest.SyntaxError.self) { try ShellValue.bytes("s8:-129") }
        #expect(throws: ShellRequest.SyntaxError.self) { try ShellValue.bytes("zz") }
    }

    @Test func theLineEditorEditsWalksHistoryAndCompletes() {
        var editor = LineEditor(complete: { words, _ in
            words.isEmpty ? ShellRequest.commands.map(\.name) : ["battery-level", "body-sensor-location", "2A19"]
        })
        var keys = KeyDecoder()
        func type(_ text: String) -> [LineEditor.Action] { keys.keys(Array(text.utf8)).map { editor.handle($0) } }

        #expect(type("rea\t").last == .redraw)
        #expect(editor.line == "read ")
        #expect(type("b\t").last == .showCompletions(["battery-level", "body-sensor-location"]))
        #expect(type("a\t").last == .redraw)
        #expect(editor.line == "read battery-level ")
        // Backspace, ← twice, Backspace: edits at the cursor (the "v" before "el" goes).
        #expect(type("\u{7F}\u{1B}[D\u{1B}[D\u{7F}").last == .redraw)
        #expect(editor.line == "read battery-leel")
        #expect(type("\u{1B}[F\r") == [.redraw, .submit("read battery-leel")])
        #expect(type("rssi\r") == [.redraw, .redraw, .redraw, .redraw, .submit("rssi")])
        // ↑ recalls the newest entry, ↑ again the one before, ↓ comes back; Ctrl-W deletes a word.
        #expect(type("\u{1B}[A").last == .redraw)
        #expect(editor.line == "rssi")
        _ = type("\u{1B}[A")
        #expect(editor.line == "read battery-leel")
        #expect(type("\u{1B}[A").last == .bell)
        _ = type("\u{17}")
        #expect(editor.line == "read ")
        _ = type("\u{1B}[B\u{1B}[B")
        #expect(editor.line == "")
        // Ctrl-C abandons the line; Ctrl-D leaves only on an empty line.
        _ = type("info")
        #expect(type("\u{03}") == [.cancel])
        #expect(editor.line == "")
        #expect(type("\u{04}") == [.endOfInput])
        // A UTF-8 character split across reads waits for its last byte.
        #expect(keys.keys([0xC2]).isEmpty)
        #expect(keys.keys([0xB5]) == [.character("µ")])
        #expect(keys.keys(Array("\u{1B}[3~".utf8)) == [.delete])
    }

    /// The commands a script gives, on one connection: read, write, subscribe, wait, unsubscribe.
    static let script = """
        services
        read battery-level
        write 2A39 01
        subscribe heart-rate
        wait 2
        unsubscribe heart-rate
        mtu
        rssi
        info
        disconnect
        reconnect
        read body-sensor-location
        quit
        """

    @Test func aScriptReadsWritesAndSubscribesOnOneConnection() async throws {
        let command = try ShellCommand.parse(["Bluetide HRM", "--emulate", "heart-rate", "--json"])
        let collector = LineCollector()
        let (input, sink) = AsyncStream<[UInt8]>.makeStream()
        sink.yield(Array((Self.script + "\n").utf8))
        sink.finish()
        try await inVirtualTime { try await command.execute(input: input, interactive: false, output: collector.output, clock: $0) }
        let objects = try collector.lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
        }
        let types = objects.compactMap { $0["type"] as? String }
        #expect(types.count == objects.count)
        #expect(types.filter { $0 == "connected" }.count == 2, "\(types)")
        #expect(types.filter { $0 == "notification" }.count >= 2, "\(types)")
        for expected in ["characteristic", "read", "written", "subscribed", "unsubscribed", "mtu", "rssi", "info", "disconnected"] {
            #expect(types.contains(expected), "no \(expected) reply in \(types)")
        }
        let battery = try #require(objects.first { $0["type"] as? String == "read" })
        let value = try #require(battery["value"] as? [String: Any])
        #expect(value["hex"] as? String == "64")
        let notification = try #require(objects.first { $0["type"] as? String == "notification" })
        let decoded = try #require((notification["value"] as? [String: Any])?["decoded"] as? [String: Any])
        #expect(decoded["beatsPerMinute"] != nil, "\(decoded)")
        let device = try #require(notification["device"] as? [String: Any])
        #expect(device["name"] as? String == "Bluetide HRM")
        #expect((device["address"] as? String)?.hasSuffix("/R") == true)
        #expect(device["addressType"] as? String == "random")
        // After `unsubscribe`, no notification comes before the MTU reply.
        let unsubscribed = try #require(types.firstIndex(of: "unsubscribed"))
        #expect(types[unsubscribed + 1] == "mtu")
    }

    @Test func tabCompletesPairingModes() {
        let completions = ShellCompletions()
        #expect(completions.candidates(previousWords: ["pair"], word: "") == ["just-works", "passkey:", "confirm"])
        #expect(completions.candidates(previousWords: ["pair", "confirm"], word: "").isEmpty)
        #expect(completions.candidates(previousWords: [], word: "pa").contains("pair"))
        var editor = LineEditor(complete: { completions.candidates(previousWords: $0, word: $1) })
        var keys = KeyDecoder()
        for key in keys.keys(Array("pair pas\t123456".utf8)) { _ = editor.handle(key) }
        #expect(editor.line == "pair passkey:123456", "no space after passkey:")
    }

    /// `pair` on the shell's connection: Just Works with the emulated strap (its host pairs
    /// and bonds), then once more on the encrypted link; one `paired` record each.
    @Test func pairSecuresTheShellsConnection() async throws {
        let command = try ShellCommand.parse(["Bluetide HRM", "--emulate", "heart-rate", "--json"])
        let collector = LineCollector()
        let (input, sink) = AsyncStream<[UInt8]>.makeStream()
        sink.yield(Array("pair just-works\npair\nread battery-level\nquit\n".utf8))
        sink.finish()
        try await inVirtualTime { try await command.execute(input: input, interactive: false, output: collector.output, clock: $0) }
        let objects = try collector.lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
        }
        let paired = objects.filter { $0["type"] as? String == "paired" }
        try #require(paired.count == 2, "\(collector.lines)")
        #expect(paired[0]["outcome"] as? String == "paired")
        #expect(paired[0]["securityLevel"] as? Int == 2)
        #expect(paired[0]["security"] as? String == "encrypted (unauthenticated)")
        #expect(paired[0]["bonded"] as? Bool == true)
        #expect((paired[0]["device"] as? [String: Any])?["name"] as? String == "Bluetide HRM")
        #expect(paired[1]["outcome"] as? String == "already-secure")
        #expect(objects.contains { $0["type"] as? String == "read" })

        let readable = try ShellCommand.parse(["Bluetide HRM", "--emulate", "heart-rate"])
        let lines = LineCollector()
        let (text, textSink) = AsyncStream<[UInt8]>.makeStream()
        textSink.yield(Array("pair\n".utf8))
        textSink.finish()
        try await inVirtualTime { try await readable.execute(input: text, interactive: false, output: lines.output, clock: $0) }
        #expect(lines.lines.contains { $0.hasPrefix("paired with Bluetide HRM (") && $0.hasSuffix("): encrypted (unauthenticated), bonded for this run only (bonds with emulated devices are not kept)") }, "\(lines.lines)")
    }

    /// `handle:0x…` names a characteristic by its value handle (the scripts `bluetide clone`
    /// writes use it); a handle that is no value, or no hex, fails that line only.
    @Test func characteristicsAreNamedByValueHandle() async throws {
        let command = try ShellCommand.parse(["Bluetide HRM", "--emulate", "heart-rate", "--json"])
        let collector = LineCollector()
        let (input, sink) = AsyncStream<[UInt8]>.makeStream()
        // The host lays out GAP first: the Device Name's value is at 0x0003.
        sink.yield(Array("read handle:0x0003\nread handle:0x0002\nread handle:zz\nquit\n".utf8))
        sink.finish()
        await #expect(throws: (any Error).self) {
            try await inVirtualTime { try await command.execute(input: input, interactive: false, output: collector.output, clock: $0) }
        }
        let reads = collector.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["type"] as? String == "read" }
        #expect(reads.count == 1, "\(collector.lines)")
        #expect((reads.first?["value"] as? [String: Any])?["hex"] as? String == Array("Bluetide HRM".utf8).map { String(format: "%02x", $0) }.joined())
    }

    @Test func theExecutableRunsAScriptFromStandardInputAndExitsOneWhenALineFailed() async throws {
        let process = try BluetideExecutable.launch(["shell", "Bluetide HRM", "--emulate", "heart-rate"])
        try await process.writeToStdin("read battery-level\nread no-such-thing\nsubscribe heart-rate\nwait 1\n")
        await process.closeStdin()
        let status = await process.waitForCompletion(timeout: .seconds(60))
        await process.stop()
        let stdout = await process.output(.stdout)
        let stderr = await process.output(.stderr)
        #expect(status == 1, "stdout \(stdout), stderr \(stderr)")
        #expect(stdout.contains("2A19 Battery Level: 100 %  [64]"), "\(stdout)")
        #expect(stdout.contains { $0.hasPrefix("← 2A37 Heart Rate Measurement: ") && $0.contains(" bpm") }, "\(stdout)")
        #expect(stderr.first?.hasPrefix("bluetide shell: characteristic no-such-thing not found on Bluetide HRM") == true, "\(stderr)")
        #expect(stderr.last == "bluetide: 1 command failed")
    }

    @Test(.needs("tmux", install: "apt-get install tmux"))
    func atATerminalItEditsCompletesAndPrintsNotificationsAbovePrompt() async throws {
        let binary = try #require(DecodeCommandTests.bluetideBinary())
        let tmux = try #require(Tmux(), "tmux is not installed: apt-get install tmux (.ci/run does)")
        try tmux.start("'\(binary.path)' shell 'Bluetide HRM' --emulate heart-rate")
        do {
            try await Self.drive(tmux)
        } catch {
            await tmux.kill()
            throw error
        }
        await tmux.kill()
    }

    /// Types at the shell's prompt and reads the screen back (the UART tests' tmux helper).
    static func drive(_ tmux: Tmux) async throws {
        _ = try await tmux.waitForScreen(containing: "Bluetide HRM>")  // capture-pane drops trailing spaces
        try await tmux.keys("rea", "Tab", "battery-l", "Tab", "Enter")
        let read = try await tmux.waitForScreen(containing: "2A19 Battery Level: 100 %")
        #expect(read.contains("Bluetide HRM> read battery-level"), "Tab completed the command and the name: \(read)")
        try await tmux.keys("subscribe heart-rate", "Enter")
        _ = try await tmux.waitForScreen(containing: "← 2A37 Heart Rate Measurement")
        // A half-typed line stays below the notifications printed while typing.
        try await tmux.keys("unsub")
        try await waitUntil(tmux) { screen in
            let lines = screen.split(separator: "\n").map(String.init)
            guard let typed = lines.lastIndex(where: { $0.hasPrefix("Bluetide HRM> unsub") }) else { return false }
            return lines[..<typed].filter { $0.hasPrefix("← 2A37") }.count >= 2
        }
        // History: ↑ ↑ recalls the read; Ctrl-D leaves with status 0.
        try await tmux.keys("C-u", "Up", "Up", "Enter")
        try await waitUntil(tmux) { $0.components(separatedBy: "2A19 Battery Level: 100 %").count == 3 }
        // Tab completes a typed form of the characteristic's profile.
        try await tmux.keys("write 2A39 re", "Tab", "Enter")
        let written = try await tmux.waitForScreen(containing: "wrote 1 byte to 2A39 Heart Rate Control Point: reset energy expended")
        #expect(written.contains("Bluetide HRM> write 2A39 reset"), "\(written)")
        try await tmux.keys("C-d")
        _ = try await tmux.waitForScreen(containing: "[exited 0]")
    }

    /// Waits (every 100 ms, at most about 60 s) until the screen satisfies `condition`.
    static func waitUntil(_ tmux: Tmux, _ condition: (String) -> Bool) async throws {
        var screen = ""
        for _ in 0..<600 {
            screen = (try? await tmux.screen()) ?? ""
            if condition(screen) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TmuxTimeout(description: "the screen never showed what was expected:\n\(screen)")
    }
}
