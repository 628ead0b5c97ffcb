import Bluetide
import BluetideTestSupport
import Foundation
import Synchronization
import Testing
@testable import BluetideCommands

/// The apps' `--mqtt`: each publishes the records it would print with `--json` to a real
/// Mosquitto broker on a free port; `mosquitto_sub` is the other side.
@Suite(.needsMosquitto, .timeLimit(.minutes(3)))
struct AppPublishTests {
    /// `TOPIC|RETAIN|PAYLOAD` lines of `sub` up to and including the first that `last` matches.
    static func lines(_ sub: BumbleProcess, seconds: Int = 60, through last: (String) -> Bool) async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var lines: [String] = []
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, let line = try await sub.lines.next(timeout: left) else {
                throw MosquittoBrokerError("no end line within \(seconds) s after \(lines.count) lines: \(lines.suffix(3))")
            }
            lines.append(line)
            if last(line) { return lines }
        }
    }

    /// The payloads of `lines` on `topic`, parsed.
    static func payloads(_ lines: [String], topic: String) -> [[String: Any]] {
        lines.compactMap { line in
            let parts = line.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == topic else { return nil }
            return try? JSONSerialization.jsonObject(with: Data(parts[2].utf8)) as? [String: Any]
        }
    }

    static func records(_ lines: [String], prefix: String) -> [String] {
        lines.compactMap { line in
            let parts = line.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].hasPrefix(prefix), !parts[0].hasSuffix("/availability") else { return nil }
            return "\(parts[0])\t\(parts[2])"
        }
    }

    @Test func ringSyncPublishesEachNewSampleOnceWithItsOwnTime() async throws {
        try await MosquittoBroker.run { broker in
            let folder = broker.directory.path
            let db = folder + "/ring.sqlite"
            var seen: Set<String> = []
            var schemaLines: [String] = []
            // Ring commands remember the paired ring under XDG_DATA_HOME: a private one.
            let paired = try await BluetideExecutable.run(["ring", "pair", "--first", "--emulate", "colmi-r02"], environment: ["XDG_DATA_HOME": folder])
            try #require(paired.status == 0, "ring pair: \(paired.stderr)")
            for round in 1...2 {
                let sub = try await MosquittoClients.subscribe(broker, topics: ["bluetide/app/ring-sync/#"])
                let run = try await BluetideExecutable.run(
                    ["ring", "sync", "--days", "1", "--db", db, "--emulate", "colmi-r02", "--json", "--mqtt", broker.url],
                    timeout: .seconds(90), environment: ["XDG_DATA_HOME": folder])
                try #require(run.status == 0, "round \(round): \(run.stderr)")
                let synced = try #require(run.stdout.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                    .first { $0["type"] as? String == "synced" })
                let added = try #require(synced["added"] as? Int)
                // The app's last word is its `offline`, after every sample.
                let lines = try await Self.lines(sub) { $0 == "bluetide/app/ring-sync/availability|0|offline" }
                await sub.stop()
                let samples = Self.payloads(lines, topic: "bluetide/app/ring-sync/ring-sample")
                #expect(samples.count == added, "round \(round): \(samples.count) published, \(added) added")
                if round == 1 { #expect(added > 10, "the emulated ring has a day of history") }
                for sample in samples {
                    let key = "\(sample["kind"] ?? "") \(sample["measuredAt"] ?? "")"
                    #expect(seen.insert(key).inserted, "published twice: \(key)")
                    #expect((sample["device"] as? [String: Any])?["address"] != nil)
                    #expect(sample["reading"] is Double || sample["reading"] is Int)
                }
                // Each with its own time: the samples of a day, not the moment of the sync.
                #expect(Set(samples.compactMap { $0["measuredAt"] as? String }).count > (round == 1 ? 5 : -1))
                schemaLines += Self.records(lines, prefix: "bluetide/app/ring-sync/")
            }
            try await JSONOutputSchemaTests.expectValid(schemaLines)
        }
    }

    @Test func rideAndCoachAndDevicePublishTheirRecords() async throws {
        try await MosquittoBroker.run { broker in
            let sub = try await MosquittoClients.subscribe(broker, topics: ["bluetide/app/#"])
            let ride = try await BluetideExecutable.run(
                ["ride", "--emulate", "ftms-bike", "--erg", "150", "--duration", "3", "--mqtt", broker.url, "--mqtt-id", "bike1"])
            try #require(ride.status == 0, "\(ride.stderr)")
            let rideLines = try await Self.lines(sub) { $0 == "bluetide/app/bike1/availability|0|offline" }
            let samples = Self.payloads(rideLines, topic: "bluetide/app/bike1/sample")
            #expect(samples.count >= 2, "\(rideLines.prefix(5))")
            #expect(samples.allSatisfy { $0["time"] != nil && $0["powerWatts"] != nil }, "\(samples.first ?? [:])")
            #expect(Self.payloads(rideLines, topic: "bluetide/app/bike1/device").count == 1)

            // A coach and a reflex device, in process on one named virtual link.
            let db = broker.directory.appendingPathComponent("coach.sqlite").path
            for arguments in [["athletes", "add", "Ana"], ["sequences", "save", "Jab", "--targets", "0,3,5", "--times", "900"]] {
                let setUp = try await BluetideExecutable.run(["reflex", "coach"] + arguments + ["--db", db])
                try #require(setUp.status == 0, "\(setUp.stderr)")
            }
            let link = "reflex-mqtt-\(UUID().uuidString)"
            let config = broker.directory.appendingPathComponent("reflex.conf").path
            try "backend = sim\ndevice-name = Reflex-MQTT\n[sim]\nseed = 3\nmiss-probability = 0\nwrong-target-probability = 0\nreaction-max-ms = 200\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            let device = try #require(try BluetideCommand.parseAsRoot(
                ["reflex", "device", "--config", config, "--transport", "virtual:\(link)", "--duration", "60", "--mqtt", broker.url]) as? ReflexDeviceCommand)
            let (interrupts, interrupt) = AsyncStream.makeStream(of: Int32.self)
            let serving = Task { try await device.servePublishing(until: interrupts) { _ in } }
            let coach = try ReflexCoachRun.parse(
                ["--athlete", "Ana", "--sequence", "Jab", "--device", "Reflex-MQTT", "--transport", "virtual:\(link)", "--db", db, "--mqtt", broker.url])
            let coachLines = Mutex<[String]>([])
            do {
                try await coach.runPublishing { output in coachLines.withLock { $0 += output.records } }
            } catch {
                interrupt.yield(SIGINT)
                _ = try? await serving.value
                throw error
            }
            // Both apps' last records: the device's session and the coach's offline (after its summary).
            var ends: Set<String> = []
            let lines = try await Self.lines(sub) { line in
                if line.hasPrefix("bluetide/app/reflex-device/session|") { ends.insert("device") }
                if line == "bluetide/app/reflex-coach/availability|0|offline" { ends.insert("coach") }
                return ends.count == 2
            }
            interrupt.yield(SIGINT)
            try await serving.value
            let deviceSteps = Self.payloads(lines, topic: "bluetide/app/reflex-device/step")
            let coachSteps = Self.payloads(lines, topic: "bluetide/app/reflex-coach/step")
            #expect(deviceSteps.count == 3 && coachSteps.count == 3, "\(lines)")
            let session = try #require(Self.payloads(lines, topic: "bluetide/app/reflex-device/session").first)
            // What is published is checked, not the athlete's timing: the simulated punch runs on
            // the wall clock, and a starved machine can make one arrive after its step's window.
            let outcomes = ["hits", "misses", "wrongTargets"].compactMap { session[$0] as? Int }.reduce(0, +)
            #expect(session["steps"] as? Int == 3 && outcomes == 3 && session["ending"] as? String == "finished", "\(session)")
            #expect((session["meanReactionMilliseconds"] as? Double ?? 0) > 0)
            let summary = Self.payloads(lines, topic: "bluetide/app/reflex-coach/summary")
            #expect(summary.count == 1, "the coach's session summary: \(lines.filter { $0.contains("reflex-coach") })")
            #expect(coachLines.withLock { $0.count } > 3)
            await sub.stop()
            try await JSONOutputSchemaTests.expectValid(
                Self.records(rideLines, prefix: "bluetide/app/bike1/") + Self.records(lines, prefix: "bluetide/app/reflex-"))
        }
    }

    @Test func uartBridgesSentAndReceivedBytesToTopics() async throws {
        try await MosquittoBroker.run { broker in
            let sub = try await MosquittoClients.subscribe(broker, topics: ["bluetide/app/uart/#"])
            let run = try await BluetideExecutable.run(
                ["uart", "Bluetide UART", "--emulate", "nus", "--mqtt", broker.url], stdin: "hello mqtt\n")
            try #require(run.status == 0, "\(run.stderr)")
            let lines = try await Self.lines(sub) { $0 == "bluetide/app/uart/availability|0|offline" }
            await sub.stop()
            let sent = Self.payloads(lines, topic: "bluetide/app/uart/uart-sent")
            let received = Self.payloads(lines, topic: "bluetide/app/uart/uart-received")
            func text(_ records: [[String: Any]]) -> String {
                records.compactMap { ($0["value"] as? [String: Any])?["summary"] as? String }.joined()
            }
            #expect(text(sent) == "hello mqtt\n", "\(sent)")
            #expect(text(received) == "hello mqtt\n", "the emulated module echoes: \(received)")
            #expect(sent.allSatisfy { ($0["device"] as? [String: Any])?["name"] as? String == "Bluetide UART" && $0["time"] != nil })
            try await JSONOutputSchemaTests.expectValid(Self.records(lines, prefix: "bluetide/app/uart/"))
        }
    }

    @Test func badMQTTOptionsExitTwoAndAnUnreachableBrokerOne() async throws {
        let bad = try await BluetideExecutable.run(["ride", "--emulate", "ftms-bike", "--duration", "1", "--mqtt", "http://x"])
        #expect(bad.status == 2)
        #expect(bad.stderr.count == 1 && bad.stderr[0].contains("--mqtt: http://x: unknown scheme"), "\(bad.stderr)")
        let lonely = try await BluetideExecutable.run(["ring", "sync", "--emulate", "colmi-r02", "--mqtt-id", "r"])
        #expect(lonely.status == 2)
        #expect(lonely.stderr.first?.contains("need --mqtt URL") == true, "\(lonely.stderr)")
        let port = try MosquittoBroker.freePort()
        let away = try await BluetideExecutable.run(
            ["reflex", "device", "--gpio", "sim", "--duration", "1", "--mqtt", "mqtt://127.0.0.1:\(port)"], timeout: .seconds(60))
        #expect(away.status == 1)
        #expect(away.stderr.count == 1 && away.stderr[0].contains("no answer from the MQTT broker at 127.0.0.1:\(port)"), "\(away.stderr)")
    }
}
