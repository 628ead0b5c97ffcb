import BluetideBase
import BluetideDeviceModels
import BluetideRecording
import Foundation
import Synchronization
import Testing
@testable import BluetideCommands

@Suite struct EmulateReplayCommandTests {
    @Test func emulateListNamesEveryModelWithItsDescription() throws {
        let lines = try EmulateCommand.parse(["--list"]).listLines()
        #expect(lines.count == EmulatorCatalog.all.count)
        for required in ["heart-rate", "battery", "csc", "cycling-power", "ftms-bike", "tacx-fec", "colmi-r02", "hm10", "punch"] {
            let line = try #require(lines.first { $0.hasPrefix(required + " ") }, "missing \(required)")
            #expect(line.count > required.count + 10, "no description for \(required)")
        }
    }

    @Test func emulateRefusesBadArgumentsSayingWhatToTry() throws {
        func failure(_ arguments: [String]) -> String? {
            do {
                _ = try EmulateCommand.parse(arguments).makePlan()
                return nil
            } catch let failure as CommandFailure {
                return failure.message
            } catch {
                return "not a CommandFailure: \(error)"
            }
        }
        #expect(failure(["heart-rat"])?.contains("unknown device model \"heart-rat\"") == true)
        #expect(failure(["heart-rat"])?.contains("--list") == true)
        #expect(failure([])?.contains("no device model") == true)
        #expect(failure(["ftms-bike", "--option", "power=lots"])?.contains("power") == true)
        #expect(failure(["ftms-bike", "--option", "power"])?.contains("key=value") == true)
        #expect(failure(["heart-rate", "csc", "--transport", "tcp-client:localhost:9"])?.contains("only one") == true)
        #expect(failure(["heart-rate", "--address", "12:34:56:78:9A:BC"])?.contains("random static") == true)
        #expect(failure(["heart-rate", "--duration", "0"])?.contains("--duration") == true)
        #expect(failure(["heart-rate", "--transport", "carrier-pigeon"]) != nil)
        let plan = try EmulateCommand.parse(["heart-rate", "csc", "--name", "Lab", "--option", "power=250"]).makePlan()
        #expect(plan.names == ["Lab", "Lab-2"])
        #expect(plan.options.powerWatts == 250)
        #expect(Set(plan.addresses).count == 2)
    }

    @Test func eachEmulatedDeviceGetsItsOwnDefaultAddressStableForASeed() throws {
        func addresses(_ arguments: [String], process: UInt64 = 100) throws -> [BluetoothAddress] {
            try EmulateCommand.parse(arguments).makePlan(process: process).addresses
        }
        // Two processes, one device each (once both took F1:DE:00:00:00:00): different devices
        // differ, with or without a seed; the same device in two processes differs without one.
        #expect(try addresses(["ftms-bike"]) != addresses(["heart-rate"]))
        #expect(try addresses(["ftms-bike", "--seed", "1"]) != addresses(["heart-rate", "--seed", "1"]))
        #expect(try addresses(["heart-rate"], process: 100) != addresses(["heart-rate"], process: 101))
        // With a seed the address is the same in every process, and changes with the seed.
        #expect(try addresses(["heart-rate", "--seed", "9"], process: 100) == addresses(["heart-rate", "--seed", "9"], process: 101))
        #expect(try addresses(["heart-rate", "--seed", "9"]) != addresses(["heart-rate", "--seed", "10"]))
        for address in try addresses(["heart-rate", "csc", "punch"]) {
            #expect(address.type == .random && address.value >> 46 == 0b11, "random static")
        }
    }

    @Test func replayPrintsTheDecodedLinesOfTheDocumentationExample() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("replay-\(UUID().uuidString).jsonl").path
        try Data(Self.exampleLog.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let command = try ReplayCommand.parse([path, "--as-fast-as-possible"])
        let (log, pace, decoder) = try command.prepare()
        var lines: [String] = []
        await command.play(log, pace: pace, decoder: decoder) { lines.append($0) }
        #expect(lines.count == 4)
        #expect(lines[1].contains("2A5B") && lines[1].contains("13.73 km/h"), "line was \(lines[1])")
        #expect(lines[2].contains("95 %"))
        #expect(lines[3].contains("write"))

        let json = try ReplayCommand.parse([path, "--pace", "100", "--json"])
        let (log2, pace2, decoder2) = try json.prepare()
        var objects: [[String: Any]] = []
        await json.play(log2, pace: pace2, decoder: decoder2) { line in
            if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] { objects.append(object) }
        }
        #expect(objects.count == 4)
        // One schema (docs/json-output.md): characteristic and value are objects.
        #expect((objects[0]["characteristic"] as? [String: Any])?["uuid"] as? String == "2A5B")
        #expect((objects[0]["value"] as? [String: Any])?["hex"] as? String == "03a25e01006d0e4b63967f")
        #expect((objects[1]["value"] as? [String: Any])?["derived"] is [String: Any])
    }

    /// `replay` reads the log as a stream: a record whose time runs backwards and a last line cut
    /// short are played past with a warning naming the line; `--strict` stops at the first one.
    @Test func replayStreamsADamagedLogWithWarningsAndStrictStopsAtTheFirstDamagedLine() async throws {
        let lines = Self.exampleLog.split(separator: "\n").map(String.init)
        // Header, record 1, record 3 moved before record 2 (t 2.0 then 1.515), record 4, and a cut copy of record 4.
        let damaged = [lines[0], lines[1], lines[3], lines[2], lines[4], String(lines[4].prefix(40))].joined(separator: "\n")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("replay-damaged-\(UUID().uuidString).jsonl").path
        try Data(damaged.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }

        let command = try ReplayCommand.parse([path, "--as-fast-as-possible"])
        let (pace, decoder) = try command.settings()
        var played: [String] = []
        let warnings = Mutex<[ValueLogWarning]>([])
        try await command.playStreamed(pace: pace, decoder: decoder, emit: { played.append($0) }, warn: { warning in
            warnings.withLock { $0.append(warning) }
        })
        #expect(played.count == 4, "every whole record is played: \(played)")
        #expect(played[1].contains("95 %"), "in file order: \(played)")
        let found = warnings.withLock { $0 }
        #expect(found.map(\.kind) == [.outOfOrder, .truncatedLastLine], "\(found)")
        #expect(found.map(\.problem.line) == [4, 6], "the warnings name the lines: \(found)")

        let strict = try ReplayCommand.parse([path, "--as-fast-as-possible", "--strict"])
        var strictPlayed: [String] = []
        do {
            try await strict.playStreamed(pace: pace, decoder: decoder, emit: { strictPlayed.append($0) }, warn: { _ in })
            Issue.record("--strict played past a record out of order")
        } catch let failure as CommandFailure {
            #expect(failure.status == .failure)
            #expect(failure.message.contains("line 4"), "\(failure.message)")
            #expect(failure.message.contains("--strict"), "\(failure.message)")
            #expect(!failure.message.contains("\n"), "one line")
        }
        #expect(strictPlayed.count == 2, "what came before the damaged line was played: \(strictPlayed)")
    }

    @Test func replayRefusesBadInput() throws {
        #expect(throws: CommandFailure.self) { try ReplayCommand.parse(["/no/such/file.jsonl"]).prepare() }
        #expect(throws: CommandFailure.self) { try ReplayCommand.parse(["x", "--speed", "0"]).prepare() }
        #expect(throws: CommandFailure.self) { try ReplayCommand.parse(["x", "--speed", "2", "--as-fast-as-possible"]).prepare() }
        #expect(throws: CommandFailure.self) { try ReplayCommand.parse(["x", "--pace", "0"]).prepare() }
        #expect(throws: CommandFailure.self) { try ReplayCommand.parse(["x", "--pace", "2", "--speed", "2"]).prepare() }
        #expect(throws: CommandFailure.self) { try ReplayCommand.parse(["x", "--profile", "nope"]).prepare() }
    }

    @Test func executableExitsWithStatusTwoForAnUnknownModel() async throws {
        let run = try await BluetideExecutable.run(["emulate", "no-such-device"])
        #expect(run.status == 2)
        let text = run.stderr.joined(separator: "\n")
        #expect(text.split(separator: "\n").count == 1)
        #expect(text.hasPrefix("bluetide: unknown device model \"no-such-device\""))
    }

    @Test func emulatePrintsTheNameAndAddressOfEveryDeviceOnStart() async throws {
        let run = try await BluetideExecutable.run(["emulate", "heart-rate", "punch", "--duration", "0.5", "--seed", "7", "--json"])
        #expect(run.status == 0)
        let started = run.stdout.compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }.filter { $0["type"] as? String == "started" }
        #expect(started.map { $0["model"] as? String } == ["heart-rate", "punch"])
        for object in started {
            let device = try #require(object["device"] as? [String: Any])
            #expect((device["name"] as? String)?.isEmpty == false)
            let address = try #require(device["address"] as? String)
            #expect(address.split(separator: ":").count == 6)
            #expect(address.hasSuffix("/R"), "random addresses say so: \(address)")
        }
    }

    static let exampleLog = """
        {"format":"bluetide-values","version":1,"started_at":"2026-11-21T12:26:23.000Z","tool":"bluetide","tool_version":"0.1.0"}
        {"t":0.412,"wall_time":"2026-11-21T12:26:23.412Z","device":"C6:C5:C4:C3:C2:C1","device_name":"KICKR CORE 1234","service":"1816","characteristic":"2A5B","operation":"notify","value":"03a25e01006d0e4b63967f","profile":"csc"}
        {"t":1.515,"wall_time":"2026-11-21T12:26:24.515Z","device":"C6:C5:C4:C3:C2:C1","device_name":"KICKR CORE 1234","service":"1816","characteristic":"2A5B","operation":"notify","value":"03a45e0100d7124b63967f","profile":"csc"}
        {"t":2.0,"device":"C6:C5:C4:C3:C2:C1","service":"180F","characteristic":"2A19","operation":"read","value":"5f","profile":"battery"}
        {"t":2.25,"device":"C6:C5:C4:C3:C2:C1","service":"1816","characteristic":"2A55","operation":"write","value":"0100000000"}

        """
}
