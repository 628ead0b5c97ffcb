import BluetideTestSupport
import Foundation
import Testing
import BluetideDeviceModels
@testable import BluetideRing

/// The `bluetide` executable, each ring command in its own process, on `bluetide controllers`
/// (virtual controllers over TCP, a clean controller per host), against a ring in another
/// process: Bumble playing a ring with captured packets, and our emulated ring.
@Suite(.bumbleInterop, .serialized, .timeLimit(.minutes(4))) struct RingInteropTests {
    static func binary() throws -> URL {
        var directory = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("bluetide")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw RingTestTimeout(what: "finding the bluetide executable next to the tests")
    }

    struct Run {
        let status: Int32?
        let stdout: [String]
        let stderr: [String]
    }

    /// Runs `bluetide ARGS` to completion with the remembered ring kept in `scratch`.
    static func bluetide(_ arguments: [String], scratch: Scratch) async throws -> Run {
        let process = try BumbleProcess.launch(
            name: "bluetide \(arguments.prefix(2).joined(separator: " "))", executable: try binary(), arguments: arguments,
            environment: ["XDG_DATA_HOME": scratch.url.path, "TZ": "UTC"])
        let status = await process.waitForCompletion(timeout: .seconds(90))
        let run = Run(status: status, stdout: await process.output(.stdout), stderr: await process.output(.stderr))
        await process.stop()
        return run
    }

    /// `bluetide controllers` with two controllers; returns the process and the ports.
    static func controllers() async throws -> (BumbleProcess, [Int]) {
        let process = try BumbleProcess.launch(
            name: "controllers", executable: try binary(),
            arguments: ["controllers", "tcp-server:127.0.0.1:0", "tcp-server:127.0.0.1:0", "--exit-on-stdin-eof"])
        do {
            let ready = try await process.firstLine(timeout: .seconds(30), describing: "READY") { $0.hasPrefix("READY ") }
            return (process, ready.split(separator: " ").dropFirst().compactMap { Int($0) })
        } catch {
            await process.stop()
            throw error
        }
    }

    @Test func pairBatterySyncExportAgainstABumbleRingThatTakesOneConnection() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let (controllers, ports) = try await Self.controllers()
        let peer: BumbleProcess
        do {
            peer = try await BumbleProcess.launchPython(
                .interopScript("ring_peer.py"), arguments: ["\(ports[1])", "--connections", "3", "--exit-on-stdin-eof"], name: "ring-peer")
        } catch {
            await controllers.stop()
            throw error
        }
        do {
            _ = try await peer.firstJSON("event", "ready", timeout: .seconds(30))
            let transport = "tcp-client:127.0.0.1:\(ports[0])"
            let pair = try await Self.bluetide(["ring", "pair", "--first", "--transport", transport], scratch: scratch)
            #expect(pair.status == 0, "\(pair.stderr)")
            #expect(pair.stdout.last?.hasPrefix("paired R02_341C (C2:41:0D:D0:34:1C/R)") == true, "\(pair.stdout)")

            let battery = try await Self.bluetide(["ring", "battery"], scratch: scratch)
            #expect(battery.status == 0, "\(battery.stderr)")
            #expect(battery.stdout == ["R02_341C (C2:41:0D:D0:34:1C/R): battery 64 %"] || battery.stdout.first?.hasSuffix("battery 64 %") == true, "\(battery.stdout)")

            let info = try await Self.bluetide(["ring", "info", "--json"], scratch: scratch)
            #expect(info.status == 0, "\(info.stderr)")
            #expect(info.stdout.first?.contains("\"firmware\":\"R02_3.00.06_240523\"") == true, "\(info.stdout)")
            #expect(info.stdout.first?.contains("\"heartRateLogIntervalMinutes\":60") == true, "\(info.stdout)")

            // The captured HR log is of 2024-08-10: sync as if it were that day, noon UTC.
            let sync = try await Self.bluetide(
                ["ring", "sync", "--now", "2024-08-10T12:00:00Z", "--days", "2", "--db", scratch.db, "--json"], scratch: scratch)
            #expect(sync.status == 0, "\(sync.stderr)")
            let report = try JSONDecoder().decode(RingSyncReport.self, from: Data((sync.stdout.first ?? "").utf8))
            #expect(report.days == ["2024-08-09", "2024-08-10"])

            let export = try await Self.bluetide(["ring", "export", "--db", scratch.db, "--out", scratch.out], scratch: scratch)
            #expect(export.status == 0, "\(export.stderr)")
            let csv = try String(contentsOfFile: scratch.out + "/samples.csv", encoding: .utf8).split(separator: "\n").map(String.init)
            // The ring's hourly values from 15:00 (colmi-r02.md §8) and its captured night.
            for row in [
                "2024-08-10T15:00:00Z,heart_rate,89,bpm", "2024-08-10T16:00:00Z,heart_rate,107,bpm", "2024-08-10T17:00:00Z,heart_rate,96,bpm",
                "2024-08-10T18:00:00Z,heart_rate,107,bpm", "2024-08-10T20:00:00Z,heart_rate,80,bpm", "2024-08-10T21:00:00Z,heart_rate,70,bpm",
                "2024-08-09T22:23:00Z,sleep_light,54,min", "2024-08-09T23:17:00Z,sleep_deep,17,min",
            ] {
                #expect(csv.contains(row), "\(row) missing")
            }
            #expect(csv.filter { $0.contains(",heart_rate,") }.count == 6)

            // pandas reads the values the ring sent.
            let code = """
                import pandas as pd
                s = pd.read_csv("samples.csv", parse_dates=["time"])
                h = s[s.kind == "heart_rate"]
                print(",".join(f"{t:%H:%M}={int(v)}" for t, v in zip(h.time, h.value)))
                print(int(s[s.kind.str.startswith("sleep_")].value.sum()))
                """
            let (status, printed, errors) = try await runPython(["-c", code], in: scratch.out)
            #expect(status == 0, "\(errors)")
            #expect(printed == ["15:00=89,16:00=107,17:00=96,18:00=107,20:00=80,21:00=70", "639"])

            // One connection at a time: each command connected, and disconnected before the next.
            var events: [String] = []
            while events.filter({ $0 == "disconnected" }).count < 3, let line = try await peer.nextLine(timeout: .seconds(30)) {
                if let event = JSONValue(line: line)?["event"]?.string, event == "connected" || event == "disconnected" { events.append(event) }
            }
            #expect(events == ["connected", "disconnected", "connected", "disconnected", "connected", "disconnected"])
        } catch {
            await peer.stop()
            await controllers.stop()
            throw error
        }
        await peer.stop()
        await controllers.stop()
    }

    @Test func theEmulatedRingInAnotherProcessPairsSyncsAndExports() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let (controllers, ports) = try await Self.controllers()
        let ring: BumbleProcess
        do {
            ring = try BumbleProcess.launch(
                name: "emulate", executable: try Self.binary(),
                arguments: ["emulate", "colmi-r02", "--transport", "tcp-client:127.0.0.1:\(ports[1])", "--address", "C3:11:22:33:44:55"])
        } catch {
            await controllers.stop()
            throw error
        }
        do {
            _ = try await ring.firstLine(timeout: .seconds(30), describing: "the emulated ring's address") { $0.contains("C3:11:22:33:44:55") }
            let transport = "tcp-client:127.0.0.1:\(ports[0])"
            let pair = try await Self.bluetide(["ring", "pair", "--first", "--transport", transport, "--json"], scratch: scratch)
            #expect(pair.status == 0, "\(pair.stderr)")
            #expect(pair.stdout.last?.contains("\"address\":\"C3:11:22:33:44:55") == true, "\(pair.stdout)")
            let battery = try await Self.bluetide(["ring", "battery", "--json"], scratch: scratch)
            #expect(battery.status == 0, "\(battery.stderr)")
            let sync = try await Self.bluetide(["ring", "sync", "--db", scratch.db], scratch: scratch)
            #expect(sync.status == 0, "\(sync.stderr)")
            #expect(sync.stdout.first?.hasPrefix("synced ") == true, "\(sync.stdout)")
            let export = try await Self.bluetide(["ring", "export", "--db", scratch.db, "--out", scratch.out, "--format", "jsonl"], scratch: scratch)
            #expect(export.status == 0, "\(export.stderr)")
            let lines = try String(contentsOfFile: scratch.out + "/samples.jsonl", encoding: .utf8).split(separator: "\n")
            #expect(lines.count > 500)
            #expect(lines.allSatisfy { JSONValue(line: String($0))?["kind"]?.string != nil })
        } catch {
            await ring.stop()
            await controllers.stop()
            throw error
        }
        await ring.stop()
        await controllers.stop()
    }
}

/// The "done when", literally: four commands in four processes on a fresh data folder,
/// the emulated ring remembered by `pair`, and pandas reading back the values the ring sent.
@Suite(.bumbleInterop, .timeLimit(.minutes(4))) struct RingDoneWhenTests {
    @Test func pairBatterySyncExportInFourProcessesThenPandasReadsTheRingsValues() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(at: scratch.url, withIntermediateDirectories: true)
        let pair = try await RingInteropTests.bluetide(["ring", "pair", "--first", "--emulate", "colmi-r02"], scratch: scratch)
        #expect(pair.status == 0, "\(pair.stderr)")
        let battery = try await RingInteropTests.bluetide(["ring", "battery"], scratch: scratch)
        #expect(battery.status == 0, "\(battery.stderr)")
        #expect(battery.stdout.first?.contains("battery ") == true, "\(battery.stdout)")
        let sync = try await RingInteropTests.bluetide(["ring", "sync"], scratch: scratch)
        #expect(sync.status == 0, "\(sync.stderr)")
        let db = scratch.url.appendingPathComponent("bluetide/ring.sqlite").path
        #expect(sync.stdout.first?.hasSuffix("into \(db)") == true, "\(sync.stdout)")
        let export = try await RingInteropTests.bluetide(["ring", "export", "--out", scratch.out], scratch: scratch)
        #expect(export.status == 0, "\(export.stderr)")

        // Yesterday's heart rate as pandas reads it equals the emulated ring's (seed 0, UTC clock).
        let person = COLMISyntheticData(seed: 0)
        let yesterday = Int(Date().timeIntervalSince1970 / 86_400) - 1
        let label = RingCalendar.label(day: yesterday)
        let code = """
            import pandas as pd
            s = pd.read_csv("samples.csv", parse_dates=["time"])
            h = s[(s.kind == "heart_rate") & (s.time.dt.strftime("%Y-%m-%d") == "\(label)")]
            print(" ".join(f"{t.hour * 60 + t.minute}={int(v)}" for t, v in zip(h.time, h.value)))
            """
        let (status, printed, errors) = try await runPython(["-c", code], in: scratch.out)
        #expect(status == 0, "\(errors)")
        let expected = stride(from: 0, to: 1440, by: 30).map { "\($0)=\(person.heartRate(day: yesterday, minute: $0))" }.joined(separator: " ")
        #expect(printed == [expected])
    }
}
