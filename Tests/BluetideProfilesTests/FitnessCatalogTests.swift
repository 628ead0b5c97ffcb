import BluetideBase
import Foundation
import Testing
@testable import BluetideProfiles

@Suite struct FitnessCatalogTests {
    static let names = [
        "heart-rate", "body-sensor-location", "heart-rate-control-point", "battery", "csc", "csc-feature",
        "sensor-location", "sc-control-point", "cycling-power", "cycling-power-feature", "cycling-power-vector",
        "cycling-power-control-point", "system-id", "pnp-id", "device-string", "manufacturer-name", "model-number",
        "serial-number", "hardware-revision", "firmware-revision", "software-revision",
    ]

    func decode(_ name: String, _ hex: String, at time: Double = 0) throws -> DecodedPacket {
        let profile = try #require(ProfileCatalog.named(name))
        var decoder = profile.makeDecoder(ProfileOptions())
        return try decoder.decode(fitnessHex(hex), at: time)
    }

    @Test func everyEntryIsRegisteredOnce() {
        let fitness = ProfileCatalog.fitnessProfiles.map(\.name)
        #expect(Set(fitness) == Set(Self.names))
        #expect(fitness.count == Self.names.count)
        for name in Self.names { #expect(ProfileCatalog.named(name) != nil, "\(name)") }
        #expect(ProfileCatalog.named("csc")?.isStateful == true)
        #expect(ProfileCatalog.named("cycling-power")?.isStateful == true)
        #expect(ProfileCatalog.named("heart-rate")?.isStateful == false)
        #expect(ProfileCatalog.forCharacteristic(.heartRateMeasurement)?.name == "heart-rate")
        #expect(ProfileCatalog.forCharacteristic(.cscMeasurement)?.name == "csc")
        #expect(ProfileCatalog.forCharacteristic(.modelNumber)?.name == "model-number")
        #expect(ProfileCatalog.named("device-string")?.characteristic == nil)
    }

    @Test func summaries() throws {
        #expect(try decode("heart-rate", "16 4E 1C 03 F4 02").summary == "78 bpm, contact detected, RR 0.777 s 0.738 s")
        #expect(try decode("heart-rate", "04 3C").summary == "60 bpm, no contact")
        #expect(try decode("body-sensor-location", "01").summary == "chest")
        #expect(try decode("heart-rate-control-point", "01").summary == "reset energy expended")
        #expect(try decode("battery", "5A").summary == "90 %")
        #expect(try decode("csc-feature", "07 00").summary == "wheelRevolutionData, crankRevolutionData, multipleSensorLocations")
        #expect(try decode("sensor-location", "0D").summary == "rear hub")
        #expect(try decode("sc-control-point", "01 00 00 00 00").summary == "set cumulative value 0")
        #expect(try decode("sc-control-point", "10 01 01").summary == "response to 0x01: success")
        #expect(try decode("cycling-power-feature", "08 00 00 00").summary == "crankRevolutionData; distributed system: unspecified")
        #expect(try decode("cycling-power-control-point", "20 02").summary == "response to unknown request: op code not supported")
        #expect(try decode("system-id", "DE BC 9A FE FF 56 34 12").summary == "OUI 12:34:56, identifier FF:FE:9A:BC:DE")
        #expect(try decode("pnp-id", "02 6B 1D 46 02 10 01").summary == "USB-IF vendor 0x1D6B, product 0x0246, version 1.1.0")
        #expect(try decode("device-string", "4B 49 43 4B 52 00").summary == "\"KICKR\"")
        #expect(try decode("cycling-power", "00 00 FB FF").summary == "-5 W; 0.00 m")
    }

    @Test func cscIsStatefulAndUsesTheWheelCircumference() throws {
        let profile = try #require(ProfileCatalog.named("csc"))
        var decoder = profile.makeDecoder(ProfileOptions(wheelCircumference: 2.105))
        let first = try decoder.decode(fitnessHex("03 A2 5E 01 00 6D 0E 4B 63 96 7F"), at: 10)
        #expect(first.summary == "wheel 89762 rev @ 3.606 s, crank 25419 rev @ 31.896 s; 0.00 m")
        let second = try decoder.decode(fitnessHex("03 A4 5E 01 00 D7 12 4B 63 96 7F"), at: 11.1)
        #expect(second.summary == "wheel 89764 rev @ 4.710 s, crank 25419 rev @ 31.896 s; 13.73 km/h, 4.21 m")
        let motion = try #require(second.derived as? CyclingMotion)
        #expect(FitnessFormat.fixed(motion.speedKilometresPerHour ?? 0, 2) == "13.73")
        let json = String(decoding: try JSONEncoder().encode(motion), as: UTF8.self)
        #expect(json.contains("speedKilometresPerHour"))
        #expect(json.contains("distanceMetres"))

        var other = profile.makeDecoder(ProfileOptions(wheelCircumference: 2.096))
        _ = try other.decode(fitnessHex("01 FF FF FF FF 00 FC"), at: 0)
        #expect(try other.decode(fitnessHex("01 02 00 00 00 00 04"), at: 2).summary.hasSuffix("11.32 km/h, 6.29 m"))
    }

    @Test func cyclingPowerIsStateful() throws {
        let profile = try #require(ProfileCatalog.named("cycling-power"))
        var decoder = profile.makeDecoder(ProfileOptions())
        _ = try decoder.decode(fitnessHex("30 00 88 00 A2 5E 01 00 AF 1D 4B 63 96 7F"), at: 0)
        let packet = try decoder.decode(fitnessHex("30 00 8C 00 A4 5E 01 00 83 26 4B 63 96 7F"), at: 1.1)
        #expect(packet.summary == "140 W, wheel 89764 rev @ 4.814 s, crank 25419 rev @ 31.896 s; 13.73 km/h, 4.21 m")
    }

    @Test func errorsNameTheCharacteristicAndField() throws {
        #expect(throws: DecodingError.truncated("Heart Rate Measurement.energy expended", needed: 2, present: 1, at: 2)) {
            try decode("heart-rate", "08 48 01")
        }
        #expect(throws: DecodingError.truncated("CSC Measurement.last wheel event time", needed: 2, present: 0, at: 5)) {
            try decode("csc", "01 01 00 00 00")
        }
    }

    @Test func everyValueEncodesToJSON() throws {
        let samples: [(String, String)] = [
            ("heart-rate", "19 96 00 10 27 9A 01"), ("body-sensor-location", "09"), ("heart-rate-control-point", "02"),
            ("battery", "5A"), ("csc", "03 A2 5E 01 00 6D 0E 4B 63 96 7F"), ("csc-feature", "07 00"),
            ("sensor-location", "40"), ("sc-control-point", "10 04 01 04 05"), ("sc-control-point", "03 04"),
            ("cycling-power", "23 08 FA 00 64 00 04 00 80 96 00"), ("cycling-power-feature", "FF FF 2F 00"),
            ("cycling-power-vector", "17 0A 00 00 04 5A 00 0A 00 F6 FF"), ("cycling-power-control-point", "04 59 01"),
            ("cycling-power-control-point", "20 03 01 05"), ("system-id", "DE BC 9A FE FF 56 34 12"),
            ("pnp-id", "07 6B 1D 46 02 10 01"), ("device-string", "41 42"),
        ]
        for (name, hex) in samples {
            let packet = try decode(name, hex)
            let data = try JSONEncoder().encode(FitnessAnyEncodable(packet.value))
            #expect(data.first == UInt8(ascii: "{") || data.first == UInt8(ascii: "\""), "\(name)")
        }
        let power = try decode("cycling-power", "23 08 FA 00 64 00 04 00 80 96 00")
        let json = String(decoding: try JSONEncoder().encode(FitnessAnyEncodable(power.value)), as: UTF8.self)
        #expect(json.contains("\"instantaneousPowerWatts\":250"))
        #expect(json.contains("\"accumulatedEnergyKilojoules\":150"))
        #expect(json.contains("\"balanceReference\":\"left\""))
        let feature = try decode("cycling-power-feature", "FF FF 2F 00")
        let featureJSON = String(decoding: try JSONEncoder().encode(FitnessAnyEncodable(feature.value)), as: UTF8.self)
        #expect(featureJSON.contains("\"distributedSystemSupport\":\"forDistributedSystem\""))
    }
}

/// Wraps an existential so JSONEncoder can take it at top level.
fileprivate struct FitnessAnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
