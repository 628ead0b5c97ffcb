import BluetideSupport
import BluetideTestSupport
import Foundation
import HummingbirdWSClient
import Logging
import Synchronization
import Testing
@testable import BluetideCommands
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite(.serialized) struct RideCommandTests {
    static func temporary(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("ride-cli-\(UUID().uuidString.prefix(8))-\(name)").path
    }

    static func json(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    /// `lines` checked against docs/json-output.schema.json by Interop/json/check_json_output.py
    /// (Python's jsonschema, as JSONOutputSchemaTests does for the other commands).
    static func expectSchemaValid(_ lines: [String]) async throws {
        let python = try #require(OptionalTool.executable("python3"), "python3 not found")
        let script = BumbleEnvironment.repositoryRoot.appendingPathComponent("Interop/json/check_json_output.py")
        let checker = try BumbleProcess.launch(name: "check_json_output", executable: python, arguments: [script.path])
        try await checker.writeToStdin(lines.enumerated().map { "ride line \($0.offset + 1)\t\($0.element)" }.joined(separator: "\n") + "\n")
        await checker.closeStdin()
        let status = await checker.waitForCompletion(timeout: .seconds(60))
        await checker.stop()
        let report = await checker.output(.stdout)
        let problems = await checker.stderrTail()
        #expect(status == 0, "schema check failed:\n\(report.joined(separator: "\n"))\n\(problems)")
        #expect(report.last == "checked \(lines.count) lines, 0 invalid", "\(report)")
    }

    /// Runs `body` with a fresh manual clock, driven in virtual time: a ride on emulated devices
    /// (its world, its central, its ticks and --duration) then passes in a moment of wall time,
    /// the same way however busy the machine is. Time moves in steps of 1 ms (not 10): the driver
    /// cannot see work in flight on a thread the OS preempted, and a ride's fixed --duration
    /// leaves such work ten times as many quiet windows before its time is up.
    static func inVirtualTime<T: Sendable>(_ body: @escaping @Sendable (BluetideClock) async throws -> T) async throws -> T {
        let clock = ManualClock()
        return try await clock.advancing(step: .milliseconds(1)) { try await body(BluetideClock(clock)) }
    }

    @Test func ergOnAnEmulatedTacxSettlesAndRecordsExportsAndReplays() async throws {
        let log = Self.temporary("ride.jsonl"), tcx = Self.temporary("ride.tcx")
        defer {
            try? FileManager.default.removeItem(atPath: log)
            try? FileManager.default.removeItem(atPath: tcx)
        }
        let collector = LineCollector()
        let ride = try RideCommand.parseAsRoot([
            "--emulate", "tacx-fec,heart-rate", "--transport", privateLink(), "--erg", "150", "--duration", "12", "--timeout", "30",
            "--json", "--record", log,
        ])
        let run = try #require(ride as? RideRunCommand)
        try await withGuard(90) { try await Self.inVirtualTime { try await run.execute(collector.output, clock: $0) } }
        let objects = collector.lines.compactMap(Self.json)
        #expect(objects.contains { $0["type"] as? String == "device" && $0["role"] as? String == "fec-trainer" })
        #expect(objects.contains { $0["type"] as? String == "device" && $0["role"] as? String == "heart-rate" })
        let samples = objects.filter { $0["trigger"] as? String == "tick" }
        #expect(samples.count >= 3, "\(collector.lines)")
        // The emulated rider pushes 200 W; ERG holds the trainer at 150 W.
        let powers = samples.compactMap { $0["powerWatts"] as? Int }
        #expect(powers.suffix(2).allSatisfy { abs($0 - 150) <= 3 }, "\(powers)")
        #expect(samples.last?["heartRateBPM"] as? Int != nil)
        // Every line is a record of the one JSON schema (docs/json-output.md).
        try await Self.expectSchemaValid(collector.lines)

        let export = try RideCommand.parseAsRoot(["export", log, "--format", "tcx", "--output", tcx])
        let exporter = try #require(export as? RideExportCommand)
        let exportLines = LineCollector()
        try await withGuard { try await exporter.execute(exportLines.output) }
        #expect(exportLines.lines == ["wrote \(tcx)"])
        let document = try String(contentsOfFile: tcx, encoding: .utf8)
        #expect(document.contains("<Activity Sport=\"Biking\">"))
        #expect(document.components(separatedBy: "<Trackpoint>").count - 1 >= 3)
        #expect(document.contains("<ns3:Watts>15"))

        // FIT: a whole file (the header's data size plus header and CRC is the file's size).
        let fit = Self.temporary("ride.fit")
        defer { try? FileManager.default.removeItem(atPath: fit) }
        let fitLines = LineCollector()
        let fitExport = try #require(try RideCommand.parseAsRoot(["export", log, "--format", "fit", "--output", fit]) as? RideExportCommand)
        try await withGuard { try await fitExport.execute(fitLines.output) }
        #expect(fitLines.lines == ["wrote \(fit)"])
        let fitBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: fit)))
        #expect(Array(fitBytes.prefix(12).suffix(4)) == Array(".FIT".utf8))
        let dataSize = fitBytes[4..<8].reversed().reduce(0) { $0 << 8 | Int($1) }
        #expect(dataSize + 16 == fitBytes.count)

        let csv = LineCollector()
        let csvExport = try #require(try RideCommand.parseAsRoot(["export", log, "--format", "csv"]) as? RideExportCommand)
        try await withGuard { try await csvExport.execute(csv.output) }
        #expect(csv.lines.first?.hasPrefix("time_s,timestamp,speed_kmh,cadence_rpm,power_w,heart_rate_bpm,distance_m,target") == true)

        let replayed = LineCollector()
        let replay = try #require(try RideCommand.parseAsRoot(["--replay", log, "--pace", "fast"]) as? RideRunCommand)
        try await withGuard { try await replay.execute(replayed.output) }
        #expect(replayed.lines.contains { $0.contains(" W ") || $0.contains(" W") }, "\(replayed.lines)")
        #expect(replayed.lines.filter { $0.contains("km/h") }.count >= samples.count - 2)
    }

    /// FIT is binary: it needs --output; laps from --workout are FIT's only; each refusal names the option.
    @Test func fitExportRefusesStandardOutputAndWorkoutLapsElsewhere() async throws {
        for (arguments, field) in [
            (["export", "ride.jsonl", "--format", "fit"], "--output"),
            (["export", "ride.jsonl", "--format", "csv", "--workout", "w.zwo"], "--workout"),
            (["export", "ride.jsonl", "--format", "gpx"], "--format"),
        ] {
            let command = try #require(try RideCommand.parseAsRoot(arguments) as? RideExportCommand)
            do {
                try await command.execute(LineCollector().output)
                Issue.record("\(arguments) was accepted")
            } catch let failure as CommandFailure {
                #expect(failure.status == .usage, "\(arguments): \(failure)")
                #expect(failure.field == field, "\(failure.message)")
            }
        }
    }

    /// Issue 21 item 8: typed commands change the target mid-ride; the ride ends with a summary
    /// when its workout finishes (no --duration, no Ctrl-C); --keep-riding rides on.
    @Test func commandsChangeTheTargetAndTheRideEndsWithItsWorkout() async throws {
        let plan = Self.temporary("short.zwo")
        defer { try? FileManager.default.removeItem(atPath: plan) }
        try """
            <workout_file><name>Short</name><workout>
            <SteadyState Duration="3" Power="0.6"/><SteadyState Duration="2" Power="0.7"/>
            </workout></workout_file>
            """.write(toFile: plan, atomically: true, encoding: .utf8)
        let collector = LineCollector()
        let ride = try #require(try RideCommand.parseAsRoot([
            "--emulate", "ftms-bike", "--transport", privateLink(), "--scan", "30", "--workout", plan, "--ftp", "200",
        ]) as? RideRunCommand)
        try await withGuard(90) { try await Self.inVirtualTime { try await ride.options.execute(collector.output, clock: $0) } }
        let lines = collector.lines
        #expect(lines.contains { $0.contains("→ 120 W") }, "\(lines)")
        let summary = try #require(lines.last, "\(lines)")
        #expect(summary.hasPrefix("# workout Short done: 0:0"), "\(lines)")
        #expect(summary.contains("W average"))

        // Commands typed during a ride (here: given as a stream), each answered.
        let (commands, typed) = AsyncStream<String>.makeStream()
        let live = LineCollector()
        let free = try #require(try RideCommand.parseAsRoot([
            "--emulate", "ftms-bike", "--transport", privateLink(), "--scan", "30", "--erg", "150", "--duration", "8",
        ]) as? RideRunCommand)
        // The ride runs in virtual time (its 8 s --duration too), so the typing reacts to the
        // ride's own samples, as the ride sees each one before printing it: the first tick at
        // 150 W (the line "→ 150 W") brings `erg 220`, the first tick at 220 W (the line
        // "→ 220 W") the grade commands. (A test task waiting for printed lines is invisible to
        // the manual clock's driver: the ride's 8 s passed before it reacted.)
        let typing = Mutex(0)
        try await withGuard(120) {
            try await Self.inVirtualTime { clock in
                try await free.options.execute(live.output, commands: commands, observe: { sample in
                    guard sample.trigger == .tick else { return }
                    let (step, target) = (typing.withLock { $0 }, sample.target)
                    if step == 0, target == .power(watts: 150) {
                        typing.withLock { $0 = 1 }
                        typed.yield("erg 220")
                    } else if step == 1, target == .power(watts: 220) {
                        typing.withLock { $0 = 2 }
                        typed.yield("grade lots")
                        typed.yield("grade -1.5")
                    }
                }, clock: clock)
            }
        }
        typed.finish()
        #expect(live.lines.contains { $0.contains("→ 150 W") } && live.lines.contains { $0.contains("→ 220 W") }, "\(live.lines)")
        let out = live.lines
        #expect(out.contains("# target 220 W"), "\(out)")
        #expect(out.contains("# grade: expected percent in -40…40, found \"lots\""), "\(out)")
        #expect(out.contains("# target -1.5 %"), "\(out)")
        #expect(out.contains { $0.contains("→ -1.5 %") }, "\(out)")
    }

    @Test func badOptionsSayWhatToTry() async throws {
        let both = try #require(try RideCommand.parseAsRoot(["--erg", "200", "--grade", "3"]) as? RideRunCommand)
        #expect(try await failureMessage { try await both.execute(LineCollector().output) }
            == "choose one of --erg, --grade, --resistance and --workout")
        let erg = try #require(try RideCommand.parseAsRoot(["--erg", "9000"]) as? RideRunCommand)
        #expect(try await failureMessage { try await erg.execute(LineCollector().output) } == "--erg 9000: expected 0…4000 watts")
        let missing = try #require(try RideCommand.parseAsRoot(["export", "/nonexistent/ride.jsonl"]) as? RideExportCommand)
        let message = try await failureMessage { try await missing.execute(LineCollector().output) }
        #expect(message?.hasPrefix("/nonexistent/ride.jsonl: ") == true)
        let format = try #require(try RideCommand.parseAsRoot(["export", "x.jsonl", "--format", "gpx"]) as? RideExportCommand)
        #expect(try await failureMessage { try await format.execute(LineCollector().output) } == "--format gpx: expected fit, tcx or csv")
        let workout = try #require(try RideCommand.parseAsRoot(["--workout", "/nonexistent/plan.zwo"]) as? RideRunCommand)
        #expect(try await failureMessage { try await workout.execute(LineCollector().output) } == "--workout /nonexistent/plan.zwo: cannot read the file")
        let nobody = try #require(try RideCommand.parseAsRoot(["--transport", privateLink(), "--timeout", "1"]) as? RideRunCommand)
        // (On the wall clock: without --emulate the command opens the transport itself, and
        // DeviceSession gives that handle no clock; the 1 s scan finds nothing either way.)
        let none = try await failureMessage { try await nobody.execute(LineCollector().output) }
        #expect(none?.hasPrefix("not found within 1 s: no trainer or sensor (seen: no device at all)") == true, "\(none ?? "")")
    }

    /// On the wall clock: an HTTP and a WebSocket client on real sockets fetch the page while the
    /// ride runs (in virtual time its --duration would pass before they connect).
    @Test func serveShowsTheRideOnAWebPage() async throws {
        let serve = try #require(try RideCommand.parseAsRoot([
            "serve", "--emulate", "tacx-fec,heart-rate", "--transport", privateLink(), "--erg", "150", "--duration", "10",
            "--timeout", "2", "--json", "--port", "0",
        ]) as? RideServeCommand)
        let port = Observed<Int?>(nil)
        let collector = LineCollector()
        let riding = Task { try await serve.execute(collector.output) { bound in port.update { $0 = bound } } }
        // The page's latest sample, once the ride has one with power: the page's feed gets each
        // sample before the terminal prints it, so the printed tick says the page has it too.
        let latestLine = try await withGuard(60) { () -> String in
            let bound = try await port.wait { $0 != nil }
            try await collector.line { Self.json($0)?["trigger"] as? String == "tick" && Self.json($0)?["powerWatts"] != nil }
            let url = try #require(URL(string: "http://127.0.0.1:\(bound ?? 0)/latest.json"))
            let (data, response) = try await URLSession.shared.data(from: url)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            return String(decoding: data, as: UTF8.self)
        }
        let latest = try #require(Self.json(latestLine))
        #expect(latest["powerWatts"] != nil, "\(latestLine)")
        #expect(latest["trigger"] as? String == "tick")
        #expect((latest["target"] as? [String: Any])?["powerWatts"] as? Int == 150)
        #expect((latest["time"] as? [String: Any])?["utc"] as? String != nil)
        // The page's controls reach the ride: its token opens /control, and `erg 180` sets the trainer.
        let bound = try #require(port.value)
        let (pageData, _) = try await URLSession.shared.data(from: try #require(URL(string: "http://127.0.0.1:\(bound)/")))
        let page = String(decoding: pageData, as: UTF8.self)
        let token = try #require(page.range(of: #"data-token="[0-9a-f]{64}""#, options: .regularExpression).map { String(page[$0].dropFirst(12).dropLast()) })
        let replies = Mutex<[String]>([])
        try await withGuard(30) {
            var logger = Logger(label: "ride-serve-test")
            logger.logLevel = .warning
            try await WebSocketClient.connect(url: "ws://127.0.0.1:\(bound)/control?token=\(token)", logger: logger) { inbound, outbound, _ in
                try await outbound.write(.text(#"{"id":7,"command":"erg 180"}"#))
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    if case let .text(text) = message { replies.withLock { $0.append(text) } }
                    break
                }
                try await outbound.close(.normalClosure, reason: nil)
            }
        }
        let replyText = try #require(replies.withLock { $0.first })
        let answer = try #require(Self.json(replyText))
        #expect(answer["ok"] as? Bool == true, "\(replyText)")
        #expect(answer["id"] as? Int == 7)
        #expect(answer["text"] as? String == "target 180 W")
        try await withGuard(60) { try await riding.value }
        #expect(collector.lines.first == "# live page: http://127.0.0.1:\(bound)/")
        #expect(collector.lines.compactMap(Self.json).contains { $0["trigger"] as? String == "tick" }, "the terminal shows the ride too")
        let after = collector.lines.compactMap(Self.json).filter { $0["trigger"] as? String == "tick" }.last
        #expect((after?["target"] as? [String: Any])?["powerWatts"] as? Int == 180, "the ride took the page's target")
        let busy = try #require(try RideCommand.parseAsRoot(["serve", "--port", "70000"]) as? RideServeCommand)
        #expect(try await failureMessage { try await busy.execute(LineCollector().output) } == "--port 70000: expected 0…65535")
    }

    @Test func bridgeRefusesAWrongName() async throws {
        let bridge = try #require(try RideCommand.parseAsRoot(["bridge", "--name", String(repeating: "x", count: 30)]) as? RideBridgeCommand)
        #expect(try await failureMessage { try await bridge.execute(LineCollector().output) }
            == "--name \(String(repeating: "x", count: 30)): expected 1…29 bytes (it must fit in an advertisement)")
    }

    /// `bluetide ride bridge` end to end: a Bumble FE-C trainer read by the bridge, which serves
    /// FTMS on the same controller to a Bumble FTMS app that sets 180 W ERG. (The name is short
    /// enough for the advertisement itself: Bumble's linked controllers answer scans with the
    /// advertising data, so a name moved to the scan response would not be seen.)
    @Test(.bumbleInterop, .timeLimit(.minutes(3))) func bridgeLetsAnFTMSAppRideAnFECTrainer() async throws {
        let (controllers, ports) = try await BumbleLinkedControllers.start(count: 3)
        var processes = [controllers]
        defer { let all = processes; Task { for process in all.reversed() { await process.stop() } } }
        let trainer = try await BumbleProcess.launchPython(
            .interopScript("fec_trainer.py"), arguments: [String(ports[0]), "--name", "Bumble Tacx", "--exit-on-stdin-eof"])
        processes.append(trainer)
        _ = try await trainer.firstJSON("event", "ready", timeout: .seconds(30))
        let bridge = try #require(try RideCommand.parseAsRoot([
            "bridge", "--transport", "tcp-client:127.0.0.1:\(ports[1])", "--trainer", "Bumble Tacx", "--timeout", "20",
            "--name", "Bluetide Tacx", "--duration", "25", "--json",
        ]) as? RideBridgeCommand)
        let collector = LineCollector()
        let bridging = Task { try await bridge.execute(collector.output) }
        let app = try await BumbleProcess.launchPython(
            .interopScript("ftms_app.py"),
            arguments: [String(ports[2]), "--name", "Bluetide Tacx", "--erg", "180", "--scan-timeout", "40", "--exit-on-stdin-eof"])
        processes.append(app)
        let status = await app.waitForExit(timeout: .seconds(90))
        let appOutput = await app.output()
        #expect(status == 0, "\(appOutput.joined(separator: "\n"))")
        try await withGuard(60) { try await bridging.value }
        let objects = collector.lines.compactMap(Self.json)
        #expect(objects.contains { $0["type"] as? String == "device" && $0["role"] as? String == "fec-trainer" })
        let requests = objects.filter { $0["type"] as? String == "bridge-request" }
        #expect(requests.compactMap { $0["result"] as? Int } == [1, 1], "\(collector.lines)")
        #expect(requests.last?["text"] as? String == "app C6:C5:C4:C3:A9:01/R: set target power 180 W → trainer confirmed → success")
        try await Self.expectSchemaValid(collector.lines)
        let page49 = try await trainer.firstLine(timeout: .seconds(10), describing: "page 49") {
            JSONValue(line: $0)?["page"]?.int == 49
        }
        #expect(JSONValue(line: page49)?["target_power_w"]?.double == 180)
    }

    /// Issue 29 item 2: a DIRCON app (Interop/dircon/dircon_app.py, written from the protocol
    /// description) reaches the bridge over TCP on loopback, discovers it, subscribes, requests
    /// control and rides the emulated Tacx at 180 W.
    @Test(.needs("python3", install: "apt-get install python3"), .timeLimit(.minutes(3)))
    func dirconLetsANetworkAppRideAnEmulatedTacx() async throws {
        let bridge = try #require(try RideCommand.parseAsRoot([
            "bridge", "--emulate", "tacx-fec,heart-rate", "--transport", privateLink(), "--timeout", "2",
            "--dircon", "--dircon-host", "127.0.0.1", "--dircon-port", "0", "--duration", "25", "--json",
        ]) as? RideBridgeCommand)
        let collector = LineCollector()
        let bridging = Task { try await bridge.execute(collector.output) }
        let port = try await withGuard(30) { () -> Int in
            let line = try await collector.line { Self.dirconPort($0) != nil }
            return try #require(Self.dirconPort(line))
        }
        let script = BumbleEnvironment.repositoryRoot.appendingPathComponent("Interop/dircon/dircon_app.py")
        let python = try #require(OptionalTool.executable("python3"))
        let (status, appOutput) = try await withGuard(90) {
            try await Self.run(python, [script.path, "--port", "\(port)", "--erg", "180", "--timeout", "40"])
        }
        #expect(status == 0, "\(appOutput.joined(separator: "\n"))")
        #expect(appOutput.contains("control success") && appOutput.contains("erg success"), "\(appOutput)")
        #expect(appOutput.contains { $0.hasPrefix("settled ") }, "\(appOutput)")
        try await withGuard(60) { try await bridging.value }
        let objects = collector.lines.compactMap(Self.json)
        let requests = objects.filter { $0["type"] as? String == "bridge-request" }
        #expect(requests.compactMap { $0["result"] as? Int } == [1, 1], "\(collector.lines)")
        #expect(requests.last?["text"] as? String == "app DIRCON #1: set target power 180 W → trainer confirmed → success")
        #expect(objects.contains { $0["type"] as? String == "bridge-disconnected" })
        try await Self.expectSchemaValid(collector.lines)
    }

    /// The port in a notice line "… DIRCON on 127.0.0.1:PORT …", if `line` is one.
    static func dirconPort(_ line: String) -> Int? {
        guard let text = json(line)?["text"] as? String,
              let range = text.range(of: #"DIRCON on 127\.0\.0\.1:[0-9]+"#, options: .regularExpression) else { return nil }
        return Int(text[range].split(separator: ":").last ?? "")
    }

    /// Runs `executable` to its end (on a thread of its own): its exit status and its output lines
    /// (standard output and error together).
    static func run(_ executable: URL, _ arguments: [String]) async throws -> (Int32, [String]) {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                let process = Process()
                process.executableURL = executable
                process.arguments = arguments
                let pipe = Pipe()
                process.standardOutput = pipe
                process.standardError = pipe
                do {
                    try process.run()
                    let data = pipe.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
                    continuation.resume(returning: (process.terminationStatus, lines))
                } catch {
                    continuation.resume(throwing: error)
                }
            }.start()
        }
    }
}
