import Bluetide
import BluetideBase
import BluetideGateway
import BluetideProfiles
import BluetideRecording
import BluetideSupport
import Foundation
import Testing

@Suite struct GatewayModelTests {
    @Test func commandsParseAndBadPayloadsSayWhatToSend() throws {
        #expect(try GatewayCommand.parse("target-power", payload: "180\n") == .targetPower(180))
        #expect(try GatewayCommand.parse("grade", payload: "-4.5") == .grade(-4.5))
        #expect(try GatewayCommand.parse("write", payload: "2A39 01ff") == .write(BluetoothUUID(0x2A39), [0x01, 0xFF]))
        #expect(try GatewayCommand.parse("read", payload: "2A19") == .read(BluetoothUUID(0x2A19)))
        #expect(try GatewayCommand.parse("uart", payload: "AT") == .uart("AT"))
        #expect(try GatewayCommand.parse("find", payload: "") == .find)
        #expect(throws: GatewayError(field: "set/target-power", "5000 W out of range; expected 0…4000")) {
            try GatewayCommand.parse("target-power", payload: "5000")
        }
        #expect(throws: GatewayError(field: "set/target-power", "\"lots\": expected whole watts, e.g. 200")) {
            try GatewayCommand.parse("target-power", payload: "lots")
        }
        #expect(throws: GatewayError.self) { try GatewayCommand.parse("write", payload: "2A39 0g") }
        #expect(throws: GatewayError.self) { try GatewayCommand.parse("grade", payload: "nan") }
        #expect(throws: GatewayError.self) { try GatewayCommand.parse("fly", payload: "1") }
    }

    @Test func commandTopicsNameTheDeviceAndTheCommand() {
        let topics = GatewayTopics(prefix: "home/bluetide", gateway: "gw1")
        #expect(topics.command(in: "home/bluetide/f1de00000001/set/grade")! == ("f1de00000001", "grade"))
        #expect(topics.command(in: "home/bluetide/f1de00000001/state") == nil)
        #expect(topics.command(in: "bluetide/f1de00000001/set/grade") == nil)
        #expect(GatewayTopics.deviceID(.randomStatic(0xF1DE_0000_0001)) == "f1de00000001")
    }

    @Test func watchesByNameAddressAndService() throws {
        #expect(try GatewayWatch(parsing: "service:180D") == .service(BluetoothUUID(0x180D)))
        #expect(try GatewayWatch(parsing: "F1:DE:00:00:00:01/R") == .address(.randomStatic(0xF1DE_0000_0001)))
        #expect(try GatewayWatch(parsing: "Bluetide HRM") == .name("Bluetide HRM"))
        #expect(try GatewayWatch(parsing: "name:service:x") == .name("service:x"))
        #expect(throws: GatewayError.self) { try GatewayWatch(parsing: "service:nope") }
        #expect(throws: GatewayError.self) { try GatewayConfiguration(id: "gw/1", watch: []) }
    }

    @Test func jsonIsWrittenAsEveryJSONOutputIs() {
        let value: GatewayJSON = ["b": .number(1.1363676329999999), "a": .number(90.0), "c": "x\"y", "d": .array([.bool(true), .integer(-3)])]
        #expect(value.text == #"{"a":90,"b":1.136368,"c":"x\"y","d":[true,-3]}"#)
        struct Profile: Encodable { let distanceMeters: Double; let att_error: Int?; let wheel_speed: Int }
        #expect(GatewayJSON.parse(#"{"device_class":"power","n":null}"#) == ["device_class": "power"])
        #expect(GatewayJSON.encoding(Profile(distanceMeters: 2.5, att_error: nil, wheel_speed: 3))?.text == #"{"distanceMetres":2.5,"wheelSpeed":3}"#)
    }

    /// The JSON the gateway used to make by encoding with `JSONEncoder` and decoding the text again.
    private static func roundTrip(_ value: any Encodable) -> GatewayJSON? {
        struct Box: Encodable {
            let value: any Encodable
            func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
        }
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        guard let data = try? encoder.encode(Box(value: value)), let parsed = GatewayJSON.parse(String(decoding: data, as: UTF8.self)) else { return nil }
        func renamed(_ json: GatewayJSON) -> GatewayJSON {
            switch json {
            case let .object(members): .object(Dictionary(uniqueKeysWithValues: members.map { (JSONText.fieldName($0.key), renamed($0.value)) }))
            case let .array(items): .array(items.map(renamed))
            default: json
            }
        }
        return renamed(parsed)
    }

    @Test func decodedValuesEncodeInOnePassToWhatTheRoundTripGave() {
        // Every profile, fed seeded random packets of every length up to 20 bytes: where a packet
        // decodes, its value and derived value give the same JSON text as before.
        var random = SplitMix64(seed: 24)
        var compared = 0
        for profile in ProfileCatalog.all {
            var decoder = profile.makeDecoder(ProfileOptions())
            for round in 0..<60 {
                let bytes = (0..<(round % 21)).map { _ in UInt8.random(in: 0...255, using: &random) }
                guard let packet = try? decoder.decode(bytes, at: Double(round) * 0.25) else { continue }
                #expect(GatewayJSON.encoding(packet.value)?.text == Self.roundTrip(packet.value)?.text, "\(profile.name) \(bytes)")
                if let derived = packet.derived {
                    #expect(GatewayJSON.encoding(derived)?.text == Self.roundTrip(derived)?.text, "\(profile.name) derived \(bytes)")
                }
                compared += 1
            }
        }
        #expect(compared > 100)
        struct Odd: Encodable {
            let nan = Double.nan, infinity = -Double.infinity, float: Float = 0.1, big: UInt64 = .max, when = Date(timeIntervalSinceReferenceDate: 12.5)
            let bytes = Data([1, 2, 3]), nested: [[Int?]] = [[1, nil, 3]], map: [Int: String] = [7: "seven"], empty: [String: Int] = [:]
            let kilometers_total = 3
        }
        #expect(GatewayJSON.encoding(Odd())?.text == Self.roundTrip(Odd())?.text)
    }

    @Test func numbersAreRoundedTheOneWayTheCLIRoundsThem() {
        // JSONText.number is the one rounding of the CLI's --json and the gateway: its fast path
        // writes what "%.6f" with trailing zeros dropped wrote.
        func reference(_ value: Double) -> String {
            guard value.isFinite else { return "null" }
            let rounded = (value * 1_000_000).rounded() / 1_000_000
            if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int64(rounded)) }
            var text = String(format: "%.6f", rounded)
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
            return text == "-0" ? "0" : text
        }
        var random = SplitMix64(seed: 7)
        for _ in 0..<20_000 {
            let scale = [1e-7, 1e-3, 1, 1e3, 1e6, 1e8, 1e9, 1e12][Int.random(in: 0..<8, using: &random)]
            let value = Double.random(in: -1...1, using: &random) * scale
            #expect(JSONText.number(value) == reference(value), "\(value)")
        }
        for value in [0.0, -0.0, 1.1363676329999999, -0.0000004, -0.0000006, 0.5, 999_999_999.9999996, 1e15 + 0.5, .nan, .infinity] {
            #expect(JSONText.number(value) == reference(value), "\(value)")
        }
        #expect(JSONText.number(-0.0000004) == "0")
        #expect(JSONText.number(2.000_000_4) == "2")
        #expect(JSONText.number(-12.25) == "-12.25")
        #expect(GatewayJSON.number(0.1 + 0.2).text == "0.3")
    }

    @Test func stateObjectsAreThrottledLatestWinsNothingLost() {
        var throttle = StateThrottle(interval: .milliseconds(250))
        let start = Duration.seconds(7)  // on the gateway's clock
        #expect(throttle.changed(at: start) == .publishNow)
        // Changes within 250 ms wait for one publication at its end.
        #expect(throttle.changed(at: start + .milliseconds(10)) == .publishAt(start + .milliseconds(250)))
        #expect(throttle.changed(at: start + .milliseconds(20)) == .waiting)
        #expect(throttle.changed(at: start + .milliseconds(300)) == .waiting)
        #expect(throttle.isWaiting)
        throttle.published(at: start + .milliseconds(300))
        #expect(!throttle.isWaiting)
        #expect(throttle.changed(at: start + .milliseconds(400)) == .publishAt(start + .milliseconds(550)))
        throttle.published(at: start + .milliseconds(550))
        // After a quiet spell the next change goes out at once.
        #expect(throttle.changed(at: start + .seconds(2)) == .publishNow)
        #expect(throttle.lastPublished == start + .seconds(2))
    }

    @Test func discoveryNamesTheSensorItsDeviceAndAvailability() {
        let topics = GatewayTopics(gateway: "gw1")
        let sensor = GatewaySensor.sensors(forProfile: "heart-rate")[0]
        let config = sensor.discoveryPayload(device: "f1de00000001", address: .randomStatic(0xF1DE_0000_0001), name: "HRM", model: "Heart Rate", topics: topics)
        #expect(config["unique_id"] == "bluetide_f1de00000001_heartRateBPM")
        #expect(config["state_topic"] == "bluetide/f1de00000001/state")
        #expect(config["unit_of_measurement"] == "bpm")
        #expect(config["state_class"] == "measurement")
        #expect(config["device", "name"] == "HRM")
        #expect(config["availability"] == .array([["topic": "bluetide/gateway/gw1/availability"], ["topic": "bluetide/f1de00000001/availability"]]))
        #expect(GatewaySensor.sensors(forProfile: "battery")[0].discoveryPayload(
            device: "x", address: .randomStatic(1), name: nil, model: "m", topics: topics)["device_class"] == "battery")
        #expect(Set(GatewaySensor.sensors(forProfile: "fec").map(\.key)) == ["powerWatts", "speedKilometresPerHour", "cadenceRPM", "distanceMetres"])
        #expect(GatewaySensor.sensors(forProfile: "punch-response").map(\.key) == ["reactionMilliseconds"])
    }

    @Test func aYAMLFileGivesTheSettingsAndRefusesPasswordsAndUnknownKeys() throws {
        let settings = try GatewayFileSettings(yaml: """
            id: garage
            mqtt: mqtts://broker.lan:8883
            username: garage
            password-file: /etc/bluetide/mqtt-password
            watch: ["Tacx Neo 48110", "service:180D"]
            emulate: [heart-rate, tacx-fec]
            presence-interval: 2.5
            """, file: "gw.yaml")
        #expect(settings.id == "garage")
        #expect(settings.mqtt == "mqtts://broker.lan:8883")
        #expect(settings.passwordFile == "/etc/bluetide/mqtt-password")
        #expect(settings.watch == ["Tacx Neo 48110", "service:180D"])
        #expect(settings.emulate == "heart-rate,tacx-fec")
        #expect(settings.presenceInterval == 2.5)
        #expect(throws: GatewayError(field: "--config", "gw.yaml: password: a password is never kept in the configuration; name the file that holds it with password-file, or set BLUETIDE_MQTT_PASSWORD")) {
            try GatewayFileSettings(yaml: "password: hunter2", file: "gw.yaml")
        }
        #expect(throws: GatewayError(field: "--config", "gw.yaml: unknown key \"mqtt-url\"; expected one of \(GatewayFileSettings.keys.joined(separator: ", "))")) {
            try GatewayFileSettings(yaml: "mqtt-url: mqtt://x", file: "gw.yaml")
        }
        #expect(throws: GatewayError.self) { try GatewayFileSettings(yaml: "presence-interval: soon", file: "gw.yaml") }
        #expect(throws: GatewayError.self) { try GatewayFileSettings(yaml: "- a\n- b", file: "gw.yaml") }
        #expect(throws: GatewayError.self) { try GatewayFileSettings(yaml: "id: [unclosed", file: "gw.yaml") }
        #expect(try GatewayFileSettings(yaml: "", file: "gw.yaml") == GatewayFileSettings())
    }
}
