import Bluetide
import BluetideBase
import BluetideEmulation
import BluetideDeviceModels
import BluetideGateway
import BluetideMQTT
import BluetideProfiles
import BluetideTestSupport
import Foundation
import Testing

extension Trait where Self == ConditionTrait {
    static var needsLibmosquitto: Self {
        .enabled(if: OptionalTool.isCI || MQTTClient.libraryProblem == nil, "\(MQTTClient.libraryProblem ?? ""): skipped outside CI")
    }
}

/// A gateway on a virtual world with emulated devices, publishing to a real Mosquitto broker;
/// `mosquitto_sub`/`mosquitto_pub` are the other side.
@Suite(.needsMosquitto, .needsLibmosquitto, .timeLimit(.minutes(2)))
struct GatewayBrokerTests {
    static let strap = BluetoothAddress.randomStatic(0xF1DE_0000_0A01)
    static let trainer = BluetoothAddress.randomStatic(0xF1DE_0000_0A02)

    /// A strap at -50 dBm and a trainer at -60 dBm behind gateway `gw1`; always finished. With
    /// `numbered`, the strap numbers its notifications (see ``NumberedHeartRateModel``).
    func withRig(persistent: Bool = false, numbered: Bool = false, _ body: (GatewayRig) async throws -> Void) async throws {
        let strap: any DeviceModel = numbered ? NumberedHeartRateModel(seed: 1) : HeartRateModel(seed: 1)
        try await GatewayRig.run(
            devices: [([strap], Self.strap, -50), ([TacxFECModel(seed: 2)], Self.trainer, -60)], persistent: persistent,
            body)
    }

    /// The next `mosquitto_sub` line (`TOPIC|RETAIN|PAYLOAD`) that satisfies `match`.
    func line(_ sub: BumbleProcess, within seconds: Int = 30, where match: (String, GatewayJSON?) -> Bool) async throws -> (String, GatewayJSON?) {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, let text = try await sub.lines.next(timeout: left) else {
                throw MosquittoBrokerError("no matching message within \(seconds) s")
            }
            let parts = text.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3 else { continue }
            let payload = GatewayJSON.parse(parts[2])
            if match(parts[0], payload) { return (parts[0], payload) }
        }
    }

    @Test func publishesPresenceValuesStateAndDiscoveryOfEveryWatchedDevice() async throws {
        try await withRig { rig in
            let sub = try await MosquittoClients.subscribe(rig.broker, topics: ["#"])
            let (_, hr) = try await line(sub) { topic, _ in topic == "bluetide/f1de00000a01/heart-rate" }
            #expect(hr?["type"] == "notification")
            #expect(hr?["device", "address"] == "F1:DE:00:00:0A:01/R")
            #expect(hr?["characteristic", "uuid"] == "2A37")
            #expect(hr?["value", "profile"] == "heart-rate")
            #expect((hr?["value", "decoded", "beatsPerMinute"]?.double ?? 0) > 30)
            #expect(hr?["gateway"] == "gw1")
            _ = try await line(sub) { topic, json in topic == "bluetide/f1de00000a01/state" && json?["values", "heartRateBPM"] != nil }
            _ = try await line(sub) { topic, json in
                topic == "bluetide/f1de00000a02/state" && json?["values", "powerWatts"] != nil && json?["values", "speedKilometresPerHour"] != nil
            }
            let (_, presence) = try await line(sub) { topic, _ in topic.hasPrefix("bluetide/gateway/gw1/presence/") }
            #expect(presence?["rssiDbm"] == .integer(-50) || presence?["rssiDbm"] == .integer(-60))
            await sub.stop()
            // A subscriber arriving now gets the retained discovery and availability.
            let late = try await MosquittoClients.subscribe(rig.broker, topics: ["homeassistant/#", "bluetide/+/availability", "bluetide/gateway/gw1/availability"])
            var retained: [String: GatewayJSON?] = [:]
            let wanted: Set = [
                "homeassistant/sensor/bluetide_f1de00000a01/heartRateBPM/config", "homeassistant/sensor/bluetide_f1de00000a02/powerWatts/config",
                "bluetide/f1de00000a01/availability", "bluetide/gateway/gw1/availability",
                "homeassistant/binary_sensor/bluetide_gateway_gw1/connectivity/config",
            ]
            while !wanted.isSubset(of: retained.keys) {
                guard let text = try await late.lines.next(timeout: .seconds(20)) else { break }
                let parts = text.split(separator: "|", maxSplits: 2).map(String.init)
                guard parts.count == 3, parts[1] == "1" else { continue }
                retained[parts[0]] = GatewayJSON.parse(parts[2])
            }
            #expect(retained.keys.contains("homeassistant/sensor/bluetide_f1de00000a01/heartRateBPM/config"))
            #expect(retained.keys.contains("homeassistant/sensor/bluetide_f1de00000a02/powerWatts/config"))
            #expect(retained.keys.contains("bluetide/f1de00000a01/availability"))
            #expect(retained.keys.contains("bluetide/gateway/gw1/availability"))
            let gatewayConfig = retained["homeassistant/binary_sensor/bluetide_gateway_gw1/connectivity/config"] ?? nil
            #expect(gatewayConfig?["device", "identifiers"] == .array(["bluetide_gateway_gw1"]))
            #expect(gatewayConfig?["state_topic"] == "bluetide/gateway/gw1/availability")
            let power = retained["homeassistant/sensor/bluetide_f1de00000a02/powerWatts/config"] ?? nil
            #expect(power?["device_class"] == "power")
            #expect(power?["unit_of_measurement"] == "W")
            await late.stop()
        }
    }

    @Test func ergThroughMQTTSettlesTheTrainerAndEveryCommandGetsOneReply() async throws {
        try await withRig { rig in
            let sub = try await MosquittoClients.subscribe(rig.broker, topics: ["bluetide/+/result", "bluetide/f1de00000a02/state"])
            _ = try await line(sub) { topic, json in topic == "bluetide/f1de00000a02/state" && json?["values", "powerWatts"] != nil }
            try await MosquittoClients.publish(rig.broker, topic: "bluetide/f1de00000a02/set/target-power", message: "137")
            let (_, done) = try await line(sub) { topic, _ in topic == "bluetide/f1de00000a02/result" }
            #expect(done?["ok"] == .bool(true), "\(String(describing: done))")
            #expect(done?["command"] == "target-power")
            _ = try await line(sub) { topic, json in topic == "bluetide/f1de00000a02/state" && json?["values", "powerWatts"]?.double == 137 }

            try await MosquittoClients.publish(rig.broker, topic: "bluetide/f1de00000a02/set/target-power", message: "9000")
            let (_, range) = try await line(sub) { topic, _ in topic == "bluetide/f1de00000a02/result" }
            #expect(range?["ok"] == .bool(false))
            #expect(range?["message"] == "set/target-power: 9000 W out of range; expected 0…4000")

            try await MosquittoClients.publish(rig.broker, topic: "bluetide/f1de00000a01/set/target-power", message: "100")
            let (_, notTrainer) = try await line(sub) { topic, _ in topic == "bluetide/f1de00000a01/result" }
            #expect(notTrainer?["ok"] == .bool(false))
            #expect(notTrainer?["message"].map { if case let .string(text) = $0 { text.contains("not a trainer") } else { false } } == true)

            try await MosquittoClients.publish(rig.broker, topic: "bluetide/0123456789ab/set/grade", message: "2")
            let (_, unknown) = try await line(sub) { topic, _ in topic == "bluetide/0123456789ab/result" }
            #expect(unknown?["message"] == "no device 0123456789ab is connected to gateway gw1")

            try await MosquittoClients.publish(rig.broker, topic: "bluetide/f1de00000a01/set/launch", message: "now")
            let (_, bad) = try await line(sub) { topic, _ in topic == "bluetide/f1de00000a01/result" }
            #expect(bad?["ok"] == .bool(false))
            #expect(bad?["command"] == "launch")
            // Still running: a read is answered and its value published.
            try await MosquittoClients.publish(rig.broker, topic: "bluetide/f1de00000a01/set/read", message: "2A19")
            let (_, read) = try await line(sub) { topic, _ in topic == "bluetide/f1de00000a01/result" }
            #expect(read?["ok"] == .bool(true))
            await sub.stop()
        }
    }

    @Test func aCleanStopMarksTheGatewayAndItsDevicesOfflineRetained() async throws {
        try await withRig { rig in
            let sub = try await MosquittoClients.subscribe(rig.broker, topics: ["bluetide/f1de00000a01/availability"])
            #expect(try await sub.lines.next(timeout: .seconds(30))?.hasSuffix("|online") == true)
            rig.running.cancel()
            _ = await rig.running.result
            await rig.client.close()
            #expect(try await sub.lines.next(timeout: .seconds(30)) == "bluetide/f1de00000a01/availability|0|offline")
            await sub.stop()
            let after = try await MosquittoClients.subscribe(rig.broker, topics: ["bluetide/gateway/gw1/availability", "bluetide/f1de00000a01/availability"])
            var seen: [String] = []
            while seen.count < 2, let text = try await after.lines.next(timeout: .seconds(20)) { seen.append(text) }
            #expect(Set(seen) == ["bluetide/gateway/gw1/availability|1|offline", "bluetide/f1de00000a01/availability|1|offline"])
            await after.stop()
        }
    }

    @Test func theBrokerMarksAVanishedGatewayOfflineThroughItsWill() async throws {
        try await withRig { rig in
            let sub = try await MosquittoClients.subscribe(rig.broker, topics: ["bluetide/gateway/gw1/availability"])
            // Retained when the gateway said it before the subscription, live when after.
            let first = try await sub.lines.next(timeout: .seconds(30))
            #expect(first == "bluetide/gateway/gw1/availability|1|online" || first == "bluetide/gateway/gw1/availability|0|online")
            rig.client.drop()  // as if the process were killed: no DISCONNECT
            var line = try await sub.lines.next(timeout: .seconds(30))
            if line == "bluetide/gateway/gw1/availability|0|online" { line = try await sub.lines.next(timeout: .seconds(30)) }
            #expect(line == "bluetide/gateway/gw1/availability|0|offline")
            await sub.stop()
        }
    }

    @Test func aBrokerRestartInTheMiddleOfAStreamLosesNothingAndKeepsTheOrder() async throws {
        try await withRig(persistent: true, numbered: true) { rig in
            // A subscriber with a persistent session at QoS 1: the broker keeps what it misses.
            let sub = try await MosquittoClients.subscribe(rig.broker, topics: ["bluetide/f1de00000a01/heart-rate"], extra: ["-c", "-q", "1"])
            // The strap numbers its notifications, so a lost, repeated or reordered value shows
            // in the numbers themselves, however late a busy machine delivers them.
            var numbers: [Int] = []
            func nextNumber() async throws -> Int {
                let (_, json) = try await line(sub) { topic, _ in topic == "bluetide/f1de00000a01/heart-rate" }
                guard case let .string(hex)? = json?["value", "hex"] else { throw MosquittoBrokerError("no value.hex in \(String(describing: json))") }
                return try NumberedHeartRateModel.number(hex: hex)
            }
            for _ in 0..<2 { numbers.append(try await nextNumber()) }
            await rig.broker.stop()
            try await rig.client.waitUntilDisconnected(timeout: .seconds(20))
            // Values keep coming from the strap while the broker is away: they wait in the outbox.
            try await rig.client.waitUntilQueued(atLeast: 3, timeout: .seconds(30))
            let queued = rig.client.unacknowledgedCount
            #expect(queued >= 3)
            try await rig.broker.launch()
            // QoS 1 is at-least-once: a value the broker took just before it stopped, but whose
            // PUBACK never reached the gateway, is sent again after the restart and may arrive
            // twice. Nothing may be missing, no value may come more than twice, and the first
            // arrivals keep the strap's order.
            while Set(numbers).count < 2 + queued + 2, numbers.count < 2 * (2 + queued + 2) {
                numbers.append(try await nextNumber())
            }
            var firstArrivals: [Int] = []
            for number in numbers where !firstArrivals.contains(number) { firstArrivals.append(number) }
            let first = try #require(numbers.first)
            #expect(firstArrivals == Array(first..<(first + firstArrivals.count)), "a value went missing or came out of order: \(numbers)")
            #expect(firstArrivals.count >= 2 + queued + 2, "every queued value came: \(numbers)")
            #expect(firstArrivals.allSatisfy { number in numbers.count { $0 == number } <= 2 }, "a value came more than twice: \(numbers)")
            #expect(rig.client.droppedCount == 0)
            await sub.stop()
        }
    }
}

/// A heart-rate strap that numbers its measurements: each notification carries its sequence
/// number (1, 2, 3, …) in the energy-expended field, so a test can tell a lost value from a late
/// one without reading a clock.
struct NumberedHeartRateModel: DeviceModel {
    private var strap: HeartRateModel
    private var sent = 0

    init(seed: UInt64) { strap = HeartRateModel(seed: seed) }

    var name: String { strap.name }
    var advertising: AdvertisingHints { strap.advertising }
    var services: [EmulatedService] { strap.services }
    var tickInterval: Double { strap.tickInterval }
    func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? { strap.read(characteristic, now: now) }
    mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        strap.write(characteristic, bytes, now: now)
    }

    mutating func tick(now: Double) -> [EmulatedOutput] {
        strap.tick(now: now).map { output in
            guard output.characteristic == .heartRateMeasurement, var measurement = try? HeartRateMeasurement(bytes: output.bytes) else { return output }
            sent += 1
            measurement.energyExpendedKilojoules = UInt16(truncatingIfNeeded: sent)
            measurement.rrIntervals1024 = measurement.rrIntervals1024.map { Array($0.prefix(7)) }  // room for the number
            var numbered = output
            numbered.bytes = measurement.bytes
            return numbered
        }
    }

    /// The sequence number in a published measurement's hex bytes.
    static func number(hex: String) throws -> Int {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { throw MosquittoBrokerError("odd-length value.hex \(hex)") }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                throw MosquittoBrokerError("value.hex \(hex) is not hexadecimal")
            }
            bytes.append(byte)
        }
        guard let number = try HeartRateMeasurement(bytes: bytes).energyExpendedKilojoules else {
            throw MosquittoBrokerError("measurement \(hex) carries no number in its energy-expended field")
        }
        return Int(number)
    }
}

/// A COLMI ring behind a gateway: polled, not notifying; a Nordic UART device: lines both ways.
@Suite(.needsMosquitto, .needsLibmosquitto, .timeLimit(.minutes(2)))
struct GatewayRingTests {
    @Test func aLineSentToAUARTDeviceOverMQTTComesBackAsItsEcho() async throws {
        let address = BluetoothAddress.randomStatic(0xF1DE_0000_0D01)
        try await GatewayRig.run(devices: [([try #require(EmulatorCatalog.make(name: "nus", seed: 1))], address, nil)]) { rig in
            let sub = try await MosquittoClients.subscribe(rig.broker, topics: ["bluetide/f1de00000d01/#"])
            while let text = try await sub.lines.next(timeout: .seconds(30)), text != "bluetide/f1de00000d01/availability|0|online" {}
            try await MosquittoClients.publish(rig.broker, topic: "bluetide/f1de00000d01/set/uart", message: "hello ring")
            var result: GatewayJSON?
            var echo: GatewayJSON?
            while result == nil || echo == nil, let text = try await sub.lines.next(timeout: .seconds(30)) {
                let parts = text.split(separator: "|", maxSplits: 2).map(String.init)
                guard parts.count == 3 else { continue }
                if parts[0] == "bluetide/f1de00000d01/result" { result = GatewayJSON.parse(parts[2]) }
                if parts[0] == "bluetide/f1de00000d01/uart" { echo = GatewayJSON.parse(parts[2]) }
            }
            #expect(result?["ok"] == .bool(true))
            #expect(echo?["type"] == "uart-received")
            #expect(echo?["value", "summary"] == "hello ring\n")
            await sub.stop()
        }
    }

    @Test func aRingsHeartRateSpO2StepsAndBatteryReachTheStateAndDiscoveryAndFindWorks() async throws {
        let address = BluetoothAddress.randomStatic(0xF1DE_0000_0C01)
        let model = try #require(EmulatorCatalog.named("colmi-r02")).make(5, EmulatorOptions())
        try await GatewayRig.run(devices: [([model], address, nil)], configure: { $0.ringInterval = .seconds(1) }) { rig in
            let sub = try await MosquittoClients.subscribe(rig.broker, topics: ["bluetide/f1de00000c01/#", "homeassistant/#"])
            var state: GatewayJSON?
            var discovered: Set<String> = []
            let keys = ["heartRateBPM", "spo2Percent", "steps", "batteryPercent"]
            // The ring measures heart rate, then SpO2, each about 3 s of real time at a 1 s poll
            // (the gateway and the broker are on the wall clock). 20 s was not enough once, at
            // the busiest minute of a run with two CPU hogs: generous, within the 2-minute limit.
            let deadline = ContinuousClock.now + .seconds(60)
            while !(keys.allSatisfy({ state?["values", $0] != nil }) && discovered.count >= 4) {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero, let text = try? await sub.lines.next(timeout: left) else { break }
                let parts = text.split(separator: "|", maxSplits: 2).map(String.init)
                guard parts.count == 3 else { continue }
                if parts[0] == "bluetide/f1de00000c01/state" { state = GatewayJSON.parse(parts[2]) }
                if parts[0].hasPrefix("homeassistant/sensor/bluetide_f1de00000c01/") { discovered.insert(parts[0]) }
            }
            for key in keys {
                #expect(state?["values", key] != nil, "\(key) missing from \(String(describing: state))")
                #expect(discovered.contains("homeassistant/sensor/bluetide_f1de00000c01/\(key)/config"), "\(discovered)")
            }
            #expect((state?["values", "spo2Percent"]?.double ?? 0) > 80)
            try await MosquittoClients.publish(rig.broker, topic: "bluetide/f1de00000c01/set/find", message: "")
            var result: String?
            while let text = try await sub.lines.next(timeout: .seconds(30)) {
                if text.hasPrefix("bluetide/f1de00000c01/result|") { result = text; break }
            }
            #expect(result?.contains("\"ok\":true") == true, "\(String(describing: result))")
            await sub.stop()
        }
    }
}
