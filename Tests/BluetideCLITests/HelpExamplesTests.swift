import ArgumentParser
import BluetideBase
import BluetideHost
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideCommands

#if canImport(Glibc)
import Glibc
#endif

/// Every example in every command's `--help` (the `Examples:` of each command's discussion, as
/// the golden files in HelpSnapshots/ show them) and in docs/*.md runs: each one that needs no
/// hardware is run by `/bin/sh` as a user would type it, in document order, in one sandbox (a
/// temporary HOME, XDG_CONFIG_HOME, XDG_DATA_HOME and working directory, so examples that
/// build on each other — pair a ring, then read it; record a log, then replay it — do), with a
/// time limit. Each example that cannot run here says why in ``exclusion(of:)``.
@Suite(.serialized, .timeLimit(.minutes(30))) struct HelpExamplesTests {
    /// One example: where it was found and the shell text.
    struct Example: CustomStringConvertible, Sendable {
        /// `bluetide ring --help` or `docs/ring.md`.
        let source: String
        /// The command as a user types it (continuation lines joined).
        let text: String
        var description: String { "\(source): \(text)" }
    }

    // MARK: Finding the examples

    /// The examples of every visible command's help, depth first in declaration order.
    static func helpExamples() -> [Example] {
        var examples: [Example] = []
        func visit(_ command: any ParsableCommand.Type, path: [String]) {
            let name = (["bluetide"] + path).joined(separator: " ") + " --help"
            examples += Self.examples(inDiscussion: command.configuration.discussion).map { Example(source: name, text: $0) }
            for sub in command.configuration.subcommands where sub.configuration.shouldDisplay {
                visit(sub, path: path + [sub._commandName])
            }
        }
        visit(BluetideCommand.self, path: [])
        return examples
    }

    /// The commands of a discussion's `Examples:` block: lines that start a command
    /// (`bluetide …`, or a shell command piping into one), joined with the lines that continue
    /// them (after a trailing `\`, `|` or `&&`); explanation lines and a trailing `(remark)`
    /// are left out.
    static func examples(inDiscussion discussion: String) -> [String] {
        var examples: [String] = []
        var inBlock = false
        var current: String?
        for raw in discussion.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("Examples") { inBlock = true; continue }
            guard inBlock else { continue }
            if var open = current {
                open += " " + line
                current = open
            } else if Self.startsCommand(line) {
                current = line
            } else {
                continue
            }
            if let text = current, !Self.continues(text) {
                examples.append(Self.cleaned(text))
                current = nil
            }
        }
        if let current { examples.append(Self.cleaned(current)) }
        return examples
    }

    /// The shell commands of docs/*.md's code blocks that run bluetide (`swift run bluetide`
    /// written as `bluetide`, as an installed one is run).
    static func docExamples() throws -> [Example] {
        let docs = BumbleEnvironment.repositoryRoot.appendingPathComponent("docs")
        var examples: [Example] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: docs.path).sorted() where name.hasSuffix(".md") {
            let text = try String(contentsOf: docs.appendingPathComponent(name), encoding: .utf8)
            var inCode = false
            var current: String?
            for raw in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
                if raw.hasPrefix("```") {
                    inCode.toggle()
                    current = nil
                    continue
                }
                guard inCode else { continue }
                var line = raw.trimmingCharacters(in: .whitespaces)
                if line.hasPrefix("swift run bluetide ") { line = String(line.dropFirst("swift run ".count)) }
                if let open = current {
                    current = open + " " + line
                } else if line.hasPrefix("bluetide ") {
                    current = line
                } else {
                    continue
                }
                if let text = current, !Self.continues(text) {
                    examples.append(Example(source: "docs/\(name)", text: Self.cleaned(text)))
                    current = nil
                }
            }
        }
        return examples
    }

    static func startsCommand(_ line: String) -> Bool {
        ["bluetide ", "printf ", "echo ", "python3 "].contains { line.hasPrefix($0) }
    }

    /// True when the line goes on on the next one.
    static func continues(_ text: String) -> Bool {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        return trimmed.hasSuffix("\\") || trimmed.hasSuffix("|") || trimmed.hasSuffix("&&")
    }

    /// `a \ b` → `a b`; a trailing `# comment` or `(remark)` after the command is dropped.
    static func cleaned(_ text: String) -> String {
        var text = text.replacingOccurrences(of: #"\s*\\\s+"#, with: " ", options: .regularExpression)
        if let comment = text.range(of: #"\s+#\s.*$"#, options: .regularExpression) { text.removeSubrange(comment) }
        if let remark = text.range(of: #"\s+\([^()']*\)\s*$"#, options: .regularExpression) { text.removeSubrange(remark) }
        return text.trimmingCharacters(in: .whitespaces)
    }

    // MARK: What each example needs

    /// Why an example is not run here, or nil when it is.
    static func exclusion(of example: Example) -> String? {
        let text = example.text
        if text.contains("hci-socket:") { return "needs a Bluetooth adapter (hci-socket)" }
        if text.contains("serial:/dev/") { return "needs a controller on a serial port" }
        if text.contains("--transport bluez") {
            return "needs bluetoothd with a powered adapter on the system bus; BlueZBackendTests runs these commands in the BlueZ guest"
        }
        if text.contains("tcp-client:") {
            return "needs `bluetide controllers` (or Bumble) running in another terminal; the multi-process set-ups are tested with free ports in ControllersAndBenchCommandTests, RideCommandTests and ReadmeExampleTests"
        }
        if text.hasPrefix("bluetide controllers tcp-server:_:9000") {
            return "binds the fixed ports 9000 and 9001 until stopped (the machine's other tests may hold them); the same command on free ports is the next example"
        }
        if text.range(of: #"^bluetide uart (Robot1|Sensor)"#, options: .regularExpression) != nil {
            return "needs a real UART device of that name"
        }
        if text.contains("\"Tacx Neo 2T\"") || text.contains("\"HRM-Pro\"") {
            return "needs a real trainer and sensors"
        }
        if text == "bluetide ring pair" || text == "bluetide ring pair --first" || text.hasPrefix("bluetide ring pair --address C0:12:34") {
            return "scans the radio for a real ring (on plain virtual there is none; the emulated one is `ring pair --first --emulate colmi-r02`)"
        }
        if text.hasPrefix("bluetide clone ") || text.contains("ring-clone/") {
            return "needs a capture a phone or btmon wrote (btsnoop_hci.log, session.btsnoop) and the clone made from it; CloneCommandTests snoops an emulated session, clones it and serves the clone"
        }
        if text.hasPrefix("bluetide gateway") {
            return "needs an MQTT broker on the example's address (127.0.0.1:1883, broker.lan); GatewayBrokerTests and GatewayCommandTests run the gateway against a mosquitto on a free port"
        }
        if text.hasPrefix("bluetide emulate heart-rate --transport tcp-client:127.0.0.1:9000") {
            return "needs the example's `bluetide controllers` on ports 9000-9002; GatewayCommandTests runs that set-up on free ports"
        }
        if text.contains("--mqtt mqtt://") {
            return "needs an MQTT broker on the example's address (127.0.0.1:1883); AppPublishTests run the apps' --mqtt against a mosquitto on a free port"
        }
        if text.hasPrefix("python3 -c 'import pandas") { return "needs pandas, a Python library the reader installs" }
        if text.contains("Interop/json/check_json_output.py") {
            return "needs the Python venv with jsonschema; JSONOutputSchemaTests runs this check"
        }
        return nil
    }

    /// How an example is expected to behave.
    enum Expectation: Equatable {
        /// Exits 0 within the time limit.
        case finishes
        /// Runs until stopped (a server, a live view, a ride, a long --duration): still running
        /// after ``keepsRunningFor`` without having failed (or done, exit 0), then Ctrl-C ends it
        /// cleanly (0 or 130).
        case keepsRunning
    }

    static let keepsRunningFor: Duration = .seconds(6)

    static func expectation(of text: String) -> Expectation {
        // The demo ends by itself after --duration (8 s by default).
        if text.hasPrefix("bluetide demo") { return .finishes }
        let longRunning = [
            "^bluetide reflex device --gpio sim$", "^bluetide ring watch", " serve( |$)",
            "^bluetide emulate heart-rate csc punch$", "--loop", "^bluetide ride --emulate", "^bluetide ride --replay",
            "^bluetide uart --emulate hm10( |$)", "^bluetide uart plot ", " --every ", "^bluetide ring raw( --out [^ ]+)?$",
        ]
        if longRunning.contains(where: { text.range(of: $0, options: .regularExpression) != nil }) && !text.contains("|") {
            // uart with its stdin ended is a pipe: it finishes.
            // `uart serve` waits for a central to send its input to, so it runs until stopped.
            if text.hasPrefix("bluetide uart") && !text.hasPrefix("bluetide uart serve") && !text.hasPrefix("bluetide uart plot") { return .finishes }
            return .keepsRunning
        }
        // A --duration longer than the wait: the start is what is checked.
        if let match = text.range(of: #"--duration [0-9]+"#, options: .regularExpression),
           let seconds = Double(text[match].dropFirst("--duration ".count)), seconds > 8 {
            return .keepsRunning
        }
        return .finishes
    }

    /// The example as run: a serve command listens on a free port (`--port 0` added last, the
    /// last value of an option wins), so a busy 8080 on the test machine changes nothing.
    static func runnable(_ text: String) -> String {
        var text = text
        if text.range(of: #"^bluetide [a-z ]*serve( |$)"#, options: .regularExpression) != nil && !text.hasPrefix("bluetide uart serve")
            || text.hasPrefix("bluetide uart plot ") {
            text += " --port 0"
        }
        // One command: exec it, so Ctrl-C reaches bluetide itself.
        if !text.contains("|") && !text.contains("&&") && !text.contains(">") && !text.contains(";") { text = "exec " + text }
        return text
    }

    /// Standard input for the examples that read it.
    static func stdin(for text: String) -> String {
        text == "bluetide reflex coach password" ? "correct horse battery staple\n" : ""
    }

    // MARK: The sandbox

    /// A temporary home with what a reader of the examples would have: the bluetide
    /// executable on PATH, a workout file, a bond to forget.
    struct Sandbox {
        let root: URL
        let environment: [String: String]

        init() throws {
            let files = FileManager.default
            root = files.temporaryDirectory.appendingPathComponent("help-examples-\(UUID().uuidString)")
            let bin = root.appendingPathComponent("bin")
            for folder in ["bin", "home", "config", "data", "work"] {
                try files.createDirectory(at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
            }
            let binary = try #require(DecodeCommandTests.bluetideBinary(), "bluetide executable not built next to the tests")
            try files.createSymbolicLink(at: bin.appendingPathComponent("bluetide"), withDestinationURL: binary)
            environment = [
                "PATH": bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                "HOME": root.appendingPathComponent("home").path,
                "XDG_CONFIG_HOME": root.appendingPathComponent("config").path,
                "XDG_DATA_HOME": root.appendingPathComponent("data").path,
                "GYM_PASSWORD": "correct horse battery staple",
                "COLUMNS": "80",
            ]
            // The workout the ride examples name.
            try Data("""
                <workout_file><name>Sweet spot</name><workout>
                <Warmup Duration="60" PowerLow="0.5" PowerHigh="0.75"/>
                <SteadyState Duration="120" Power="0.9"/>
                <Cooldown Duration="60" PowerLow="0.7" PowerHigh="0.5"/>
                </workout></workout_file>
                """.utf8).write(to: root.appendingPathComponent("work/sweetspot.zwo"))
            // The bond `bonds remove C0:11:22:33:44:55/R` forgets.
            let keys = SMPKeySet(longTermKey: SMPLongTermKey(key: Array(repeating: 0x22, count: 16)))
            var store = BondStore()
            store.save(Bond(address: try BluetoothAddress("C0:11:22:33:44:55/R"), securityLevel: .encrypted, secureConnections: true,
                            keySize: 16, peerKeys: keys, localKeys: keys))
            try files.createDirectory(at: root.appendingPathComponent("config/bluetide"), withIntermediateDirectories: true)
            try BondFile(path: root.appendingPathComponent("config/bluetide/bonds.json").path).save(store)
        }

        var workingDirectory: URL { root.appendingPathComponent("work") }
    }

    /// What running one example gave: nil when it behaved, else why not.
    static func run(_ example: Example, in sandbox: Sandbox) async throws -> String? {
        let text = runnable(example.text)
        let expectation = expectation(of: example.text)
        let process = try BumbleProcess.launch(
            name: "example", executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", text],
            environment: sandbox.environment, workingDirectory: sandbox.workingDirectory)
        let input = stdin(for: example.text)
        if !input.isEmpty { try await process.writeToStdin(input) }
        await process.closeStdin()
        switch expectation {
        case .finishes:
            let status = await process.waitForCompletion(timeout: .seconds(90))
            await process.stop()
            guard status == 0 else {
                let errors = await process.output(.stderr).suffix(3).joined(separator: " | ")
                return "exit \(status.map { "\($0)" } ?? "none: still running after 90 s"); stderr: \(errors)"
            }
        case .keepsRunning:
            if let status = await process.waitForExit(timeout: keepsRunningFor) {
                await process.stop()
                let errors = await process.output(.stderr).suffix(3).joined(separator: " | ")
                return status == 0 ? nil : "ended early with exit \(status); stderr: \(errors)"
            }
            // On a busy machine 6 s may not be enough to start: Ctrl-C only once it has said
            // something (a command installs its Ctrl-C handling before its first line), so a
            // slow start is not mistaken for a process killed by SIGINT (exit "2").
            _ = try? await process.firstLine(from: .either, timeout: .seconds(60), describing: "a first line") { _ in true }
            // An example that records (`--record ride.jsonl`) makes the file later examples replay:
            // Ctrl-C only once it has shown a value (a line that is not a `#` header), however
            // slowly a loaded machine brought its devices up.
            if example.text.contains("--record ") {
                _ = try? await process.firstLine(from: .stdout, timeout: .seconds(60), describing: "a value line") { !$0.hasPrefix("#") }
            }
            kill(process.pid, SIGINT)
            let status = await process.waitForCompletion(timeout: .seconds(30))
            if await process.endedBySignal == true {
                await process.stop()
                return "Ctrl-C killed it (signal \(status.map { "\($0)" } ?? "?")) instead of ending it"
            }
            await process.stop()
            guard status == 0 || status == 130 else {
                let errors = await process.output(.stderr).suffix(3).joined(separator: " | ")
                return "Ctrl-C ended it with exit \(status.map { "\($0)" } ?? "none"); stderr: \(errors)"
            }
            let output = await process.output(.either)
            if output.isEmpty { return "printed nothing in \(keepsRunningFor)" }
        }
        return nil
    }

    /// The ring commands' examples use the ring `ring pair` remembered; a reader pairs one
    /// first (the ring help's first example), and again after `ring forget`.
    struct PairedRing {
        var paired = false

        mutating func prepare(for example: Example, in sandbox: Sandbox) async throws {
            let text = example.text
            if text.hasPrefix("bluetide ring pair") { paired = true; return }
            if text.hasPrefix("bluetide ring "), !text.hasPrefix("bluetide ring export"), !text.hasPrefix("bluetide ring serve"), !paired {
                let problem = try await HelpExamplesTests.run(Example(source: "setup", text: "bluetide ring pair --first --emulate colmi-r02"), in: sandbox)
                #expect(problem == nil, "pairing the emulated ring: \(problem ?? "")")
                paired = true
            }
            if text.hasPrefix("bluetide ring forget") { paired = false }
        }
    }

    // MARK: The tests

    /// The extraction finds what the help shows: the first example of `bluetide --help`, a
    /// joined continuation, a pipeline, and no explanation line.
    @Test func examplesAreFoundAsTheHelpShowsThem() {
        let all = Self.helpExamples()
        #expect(all.first?.text == "bluetide demo")
        #expect(all.contains { $0.text == #"bluetide subscribe "Bluetide HRM" heart-rate --emulate heart-rate --count 5"# && $0.source == "bluetide --help" })
        #expect(all.contains { $0.text == "bluetide decode csc 03A25E01006D0E4B63967F 03A45E0100D7124B63967F --circumference 2.105" })
        #expect(all.contains { $0.text.hasPrefix("printf 'read battery-level") && $0.text.hasSuffix("bluetide shell \"Bluetide HRM\" --emulate heart-rate --json") })
        #expect(all.contains { $0.text == "bluetide reflex coach serve --emulate" })
        #expect(!all.contains { $0.text.hasPrefix("no hardware") || $0.text.contains("(then open") })
        #expect(all.count > 60, "\(all.count) examples")
        #expect(Self.cleaned("bluetide ring watch (Ctrl-C stops the measurement and disconnects)") == "bluetide ring watch")
    }

    /// Every example of every `--help` that needs no hardware runs.
    @Test func everyHelpExampleRuns() async throws {
        let sandbox = try Sandbox()
        defer { try? FileManager.default.removeItem(at: sandbox.root) }
        var ran = 0
        var paired = PairedRing()
        for example in Self.helpExamples() {
            if Self.exclusion(of: example) != nil { continue }
            try await paired.prepare(for: example, in: sandbox)
            if let problem = try await Self.run(example, in: sandbox) {
                Issue.record("\(example): \(problem)")
            }
            ran += 1
        }
        #expect(ran > 45, "only \(ran) examples ran")
    }

    /// Every example command in docs/*.md that needs no hardware runs.
    @Test func everyDocsExampleRuns() async throws {
        let sandbox = try Sandbox()
        defer { try? FileManager.default.removeItem(at: sandbox.root) }
        let examples = try Self.docExamples()
        #expect(examples.count > 20, "\(examples.count) examples in docs")
        var paired = PairedRing()
        for example in examples where Self.exclusion(of: example) == nil {
            try await paired.prepare(for: example, in: sandbox)
            if let problem = try await Self.run(example, in: sandbox) {
                Issue.record("\(example): \(problem)")
            }
        }
    }
}
