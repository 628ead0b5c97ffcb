import Bluetide
import BluetideBase
import BluetideGateway
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
