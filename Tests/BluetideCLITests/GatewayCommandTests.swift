import BluetideTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `bluetide gateway` as a user runs it: a process with emulated devices publishing to a real
/// Mosquitto broker on a free port; `mosquitto_sub`/`mosquitto_pub` are the user's side.
@Suite(.needsMosquitto, .timeLimit(.minutes(3)))
struct GatewayCommandTests {
    @Test func publishesAnswersERGAndStopsCleanlyOnSIGTERM() async throws {
        try await MosquittoBroker.run { broker in
            let sub = try await MosquittoClients.subscribe(broker, topics: ["bluetide/#"])
            // The settings come from a YAML file; the command line adds nothing but the file.
            let config = broker.directory.appendingPathComponent("gateway.yaml")
            try "id: gw1\nmqtt: \(broker.url)\nemulate: [heart-rate, tacx-fec]\npresence-interval: 1\n".write(to: config, atomically: true, encoding: .utf8)
            let gateway = try BluetideExecutable.launch(["gateway", "--config", config.path])
            do {
                // Values arrive; the trainer (second emulated device) takes an ERG target.
                try await waitFor(sub) { $0.hasPrefix("bluetide/f1de00000001/heart-rate|0|{") }
                try await waitFor(sub) { $0.hasPrefix("bluetide/f1de00000002/state|") && $0.contains("\"powerWatts\"") }
                try await MosquittoClients.publish(broker, topic: "bluetide/f1de00000002/set/target-power", message: "160")
                let result = try await waitFor(sub) { $0.hasPrefix("bluetide/f1de00000002/result|") }
                #expect(result.contains("\"ok\":true"), "\(result)")
                try await waitFor(sub) { $0.hasPrefix("bluetide/f1de00000002/state|") && $0.contains("\"powerWatts\":160") }
                kill(gateway.pid, SIGTERM)
                #expect(await gateway.waitForCompletion(timeout: .seconds(20)) == 0)
                try await waitFor(sub) { $0 == "bluetide/gateway/gw1/availability|0|offline" }
                let log = await gateway.output(.stderr)
                #expect(log.contains { $0.contains("connected to f1de00000002") }, "\(log)")
                #expect(log.last?.contains("stopped") == true, "\(log)")
            } catch {
                await gateway.stop()
                await sub.stop()
                throw error
            }
            await sub.stop()
        }
    }

    /// Issue 24 item 6: values queued while the broker is away survive a restart of the gateway.
    @Test func valuesQueuedWhileTheBrokerIsAwaySurviveAGatewayRestartAndArriveInOrder() async throws {
        try await MosquittoBroker.run(persistent: true) { broker in
            // A persistent subscriber at QoS 1: the broker keeps for it what comes while it reconnects.
            let sub = try await MosquittoClients.subscribe(broker, topics: ["bluetide/f1de00000001/heart-rate"], extra: ["-c", "-q", "1"])
            let outbox = broker.directory.appendingPathComponent("outbox").path
            let arguments = ["gateway", "--id", "gw1", "--emulate", "heart-rate", "--mqtt", broker.url, "--outbox", outbox]
            let first = try BluetideExecutable.launch(arguments)
            var second: BumbleProcess?
            do {
                var times: [String] = []
                func next() async throws -> String {
                    let line = try await waitFor(sub) { $0.hasPrefix("bluetide/f1de00000001/heart-rate|") }
                    let payload = String(line.split(separator: "|", maxSplits: 2)[2])
                    let json = try #require(try JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any])
                    return try #require((json["time"] as? [String: Any])?["utc"] as? String)
                }
                for _ in 0..<2 { times.append(try await next()) }
                // The outage's values are those made after the last one received before it (the
                // test's own clock reads the gateway's "lost" line late on a busy machine).
                let lastBefore = times[times.count - 1]
                await broker.stop()
                _ = try await first.firstLine(from: .stderr, timeout: .seconds(30), describing: "the broker lost") { $0.contains("broker: lost") }
                let away = Self.utcNow()
                // The gateway (another process) queues the strap's values, about one a second, each
                // with its state object: it says so at 1, 2, 4, 8, … queued messages. Eight are
                // at least three values queued after `away`.
                _ = try await first.firstLine(from: .stderr, timeout: .seconds(60), describing: "8 messages queued") {
                    $0.contains("broker: 8 messages queued")
                }
                kill(first.pid, SIGTERM)
                #expect(await first.waitForCompletion(timeout: .seconds(20)) == 0)
                let stopped = Self.utcNow()
                let size = (try? FileManager.default.attributesOfItem(atPath: outbox)[.size] as? Int) ?? 0
                #expect(size > 0, "the queued values are in \(outbox)")
                // A new gateway process on the same file; the broker comes back meanwhile.
                second = try BluetideExecutable.launch(arguments)
                try await broker.launch()
                while times.filter({ $0 > stopped }).count < 2 { times.append(try await next()) }
                // QoS 1 is "at least once": a value whose acknowledgement was lost when the broker
                // went away is sent again from the outbox, so it may arrive twice — never out of
                // order, and only a value that was in flight when the broker went away.
                #expect(times == times.sorted(), "out of order: \(times)")
                let repeated = Set(times.filter { time in times.filter { $0 == time }.count > 1 })
                #expect(repeated.allSatisfy { $0 <= away }, "repeated after the outage began: \(times)")
                let queued = times.filter { $0 > lastBefore && $0 < stopped }
                let logs = (await second?.output(.stderr) ?? []) + (await first.output(.stderr))
                #expect(queued.count >= 2, "the values of the outage arrived: \(times); logs: \(logs)")
            } catch {
                await first.stop()
                await second?.stop()
                throw error
            }
            if let second {
                kill(second.pid, SIGTERM)
                #expect(await second.waitForCompletion(timeout: .seconds(20)) == 0)
            }
            await sub.stop()
        }
    }

    /// Issue 24 item 4 with separate processes: two gateways on one virtual radio (`bluetide
    /// controllers`, the strap heard at -50 dBm by `near` and -80 dBm by `far`); the better one
    /// connects; `kill -9` it and the other takes the strap over, values flowing again within 10 s.
    @Test func twoGatewayProcessesOnOneRadioTheBetterConnectsAndTheOtherTakesOverAfterKillDashNine() async throws {
        try await MosquittoBroker.run { broker in
            let controllers = try BluetideExecutable.launch(
                ["controllers", "tcp-server:127.0.0.1:0", "tcp-server:127.0.0.1:0", "tcp-server:127.0.0.1:0",
                 "--rssi", "1-2=-50", "--rssi", "1-3=-80", "--json", "--exit-on-stdin-eof"], name: "controllers")
            let children = ChildList(controllers)
            do {
                try await Self.takeOver(broker: broker, controllers: controllers, children: children)
            } catch {
                await children.stopAll()
                throw error
            }
            await children.stopAll()
        }
    }

    /// The steps of the kill -9 test; every process started is put in `children`.
    static func takeOver(broker: MosquittoBroker, controllers: BumbleProcess, children: ChildList) async throws {
        let ready = try await controllers.firstJSON("type", "ready", timeout: .seconds(30))
        let ports = (ready["ports"]?.array ?? []).compactMap { $0.int }
        try #require(ports.count == 3)
        let sub = try await MosquittoClients.subscribe(broker, topics: ["bluetide/f1de0000e001/#"])
        let strap = try BluetideExecutable.launch(
            ["emulate", "heart-rate", "--transport", "tcp-client:127.0.0.1:\(ports[0])", "--address", "F1:DE:00:00:E0:01"], name: "strap")
        await children.add(strap)
        _ = try await strap.firstLine(timeout: .seconds(30), describing: "the strap advertising") { $0.contains("advertising") }
        // The weaker gateway starts first: it still leaves the strap to the stronger one.
        let far = try gatewayProcess("far", port: ports[2], broker: broker.url)
        await children.add(far)
        let near = try gatewayProcess("near", port: ports[1], broker: broker.url)
        await children.add(near)
        let test = GatewayCommandTests()
        try await test.waitFor(sub) { $0.hasPrefix("bluetide/f1de0000e001/claim|") && $0.contains("\"gateway\":\"near\"") }
        try await test.waitFor(sub) { $0.hasPrefix("bluetide/f1de0000e001/heart-rate|") && $0.contains("\"gateway\":\"near\"") }
        let farLog = await far.output(.stderr)
        #expect(!farLog.contains { $0.contains("connected to f1de0000e001") }, "\(farLog)")

        let killed = ContinuousClock.now
        kill(near.pid, SIGKILL)
        try await test.waitFor(sub) { $0.hasPrefix("bluetide/f1de0000e001/claim|") && $0.contains("\"gateway\":\"far\"") }
        try await test.waitFor(sub) { $0.hasPrefix("bluetide/f1de0000e001/heart-rate|") && $0.contains("\"gateway\":\"far\"") }
        let took = killed.duration(to: .now)
        #expect(took < .seconds(10), "values flowed again through the other gateway after \(took)")
        // And keep flowing.
        for _ in 0..<3 {
            try await test.waitFor(sub) { $0.hasPrefix("bluetide/f1de0000e001/heart-rate|") && $0.contains("\"gateway\":\"far\"") }
        }
        kill(far.pid, SIGTERM)
        #expect(await far.waitForCompletion(timeout: .seconds(20)) == 0)
        await sub.stop()
    }

    static func gatewayProcess(_ id: String, port: Int, broker url: String) throws -> BumbleProcess {
        try BluetideExecutable.launch(
            ["gateway", "--id", id, "--watch", "service:180D", "--transport", "tcp-client:127.0.0.1:\(port)",
             "--mqtt", url, "--presence-interval", "1"], name: id)
    }

    static func utcNow() -> String {
        Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(identifier: "UTC")!))
    }

    @Test func badOptionsAndRefusedCredentialsGiveOneLine() async throws {
        let badURL = try await BluetideExecutable.run(["gateway", "--id", "gw1", "--emulate", "heart-rate", "--mqtt", "http://x"])
        #expect(badURL.status == 2)
        #expect(badURL.stderr.count == 1 && badURL.stderr[0].contains("--mqtt http://x: unknown scheme"), "\(badURL.stderr)")
        let badID = try await BluetideExecutable.run(["gateway", "--id", "gw/1", "--emulate", "heart-rate", "--mqtt", "mqtt://127.0.0.1"])
        #expect(badID.status == 2)
        #expect(badID.stderr.first?.contains("--id: \"gw/1\"") == true, "\(badID.stderr)")
        let noWatch = try await BluetideExecutable.run(["gateway", "--id", "gw1", "--mqtt", "mqtt://127.0.0.1"])
        #expect(noWatch.status == 2)
        let noID = try await BluetideExecutable.run(["gateway", "--mqtt", "mqtt://127.0.0.1", "--emulate", "heart-rate"])
        #expect(noID.status == 2)
        #expect(noID.stderr.first?.contains("--id: give the gateway's name") == true, "\(noID.stderr)")
        let yaml = FileManager.default.temporaryDirectory.appendingPathComponent("bluetide-gateway-\(UUID().uuidString).yaml")
        defer { try? FileManager.default.removeItem(at: yaml) }
        try "id: gw1\npassword: hunter2\n".write(to: yaml, atomically: true, encoding: .utf8)
        let password = try await BluetideExecutable.run(["gateway", "--config", yaml.path])
        #expect(password.status == 2)
        #expect(password.stderr.count == 1 && password.stderr[0].contains("a password is never kept in the configuration"), "\(password.stderr)")
        #expect(!password.combined.joined().contains("hunter2"))

        try await MosquittoBroker.run(users: ["garage": "right"]) { broker in
            let refused = try await BluetideExecutable.run(
                ["gateway", "--id", "gw1", "--emulate", "heart-rate", "--mqtt", broker.url, "--username", "garage"],
                environment: ["BLUETIDE_MQTT_PASSWORD": "wrong"])
            #expect(refused.status == 1)
            #expect(refused.stderr.count == 1, "\(refused.stderr)")
            #expect(refused.stderr.first?.contains("refused the connection") == true && refused.stderr.first?.contains("not authori") == true)
            #expect(!refused.combined.joined().contains("wrong"))
        }
    }

    @discardableResult
    func waitFor(_ sub: BumbleProcess, seconds: Int = 40, _ match: (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, let line = try await sub.lines.next(timeout: left) else {
                throw MosquittoBrokerError("no matching message within \(seconds) s")
            }
            if match(line) { return line }
        }
    }
}

/// A machine without libmosquitto: one line naming the package, everything else unaffected.
@Suite struct GatewayWithoutLibraryTests {
    @Test func withoutLibmosquittoTheGatewaySaysWhichPackageToInstall() async throws {
        let run = try await BluetideExecutable.run(
            ["gateway", "--id", "gw1", "--emulate", "heart-rate", "--mqtt", "mqtt://127.0.0.1:1"],
            environment: ["BLUETIDE_LIBMOSQUITTO": "/nonexistent/libmosquitto.so.1"])
        #expect(run.status == 1)
        #expect(run.stderr == ["bluetide: MQTT needs libmosquitto, which is not installed: install the Debian package libmosquitto1 (apt-get install libmosquitto1)"])
        // Everything else runs without it.
        let decode = try await BluetideExecutable.run(["decode", "heart-rate", "0648"], environment: ["BLUETIDE_LIBMOSQUITTO": "/nonexistent/libmosquitto.so.1"])
        #expect(decode.status == 0)
    }
}

/// Processes a test started, stopped (newest first) whatever happens.
actor ChildList {
    private var children: [BumbleProcess]
    init(_ first: BumbleProcess) { children = [first] }
    func add(_ child: BumbleProcess) { children.append(child) }
    func stopAll() async {
        for child in children.reversed() { await child.stop() }
        children = []
    }
}
