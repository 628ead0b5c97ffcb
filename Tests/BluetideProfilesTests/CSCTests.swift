import BluetideBase
import Foundation
import Testing
@testable import BluetideProfiles

@Suite struct CSCMeasurementTests {
    static let a = fitnessHex("03 A2 5E 01 00 6D 0E 4B 63 96 7F")
    static let b = fitnessHex("03 A4 5E 01 00 D7 12 4B 63 96 7F")

    @Test func exampleA() throws {
        let m = try CSCMeasurement(exactly: Self.a)
        #expect(m.wheel == WheelRevolutionData(cumulativeRevolutions: 89762, lastEventTimeTicks: 3693))
        #expect(m.crank == CrankRevolutionData(cumulativeRevolutions: 25419, lastEventTimeTicks: 32662))
        #expect(abs((m.lastWheelEventTimeSeconds ?? 0) - 3.6064) < 0.0001)
        #expect(abs((m.crank?.lastEventTimeSeconds ?? 0) - 31.896) < 0.001)
        #expect(m.bytes == Self.a)
        #expect(m.summary == "wheel 89762 rev @ 3.606 s, crank 25419 rev @ 31.896 s")
    }

    @Test func jsonCarriesSecondsToo() throws {
        let m = try CSCMeasurement(exactly: Self.a)
        let json = String(decoding: try JSONEncoder().encode(m), as: UTF8.self)
        #expect(json.contains("\"lastCrankEventTimeSeconds\":31.896484375"))
        #expect(json.contains("\"cumulativeRevolutions\":89762"))
    }

    @Test func exampleB() throws {
        let m = try CSCMeasurement(exactly: Self.b)
        #expect(m.wheel == WheelRevolutionData(cumulativeRevolutions: 89764, lastEventTimeTicks: 4823))
        #expect(m.crank == CrankRevolutionData(cumulativeRevolutions: 25419, lastEventTimeTicks: 32662))
        #expect(m.bytes == Self.b)
    }

    @Test func exampleCMaximumWheelCount() throws {
        let bytes = fitnessHex("03 FF FF FF FF 03 3F FF 07 E7 0F")
        let m = try CSCMeasurement(exactly: bytes)
        #expect(m.wheel == WheelRevolutionData(cumulativeRevolutions: 4_294_967_295, lastEventTimeTicks: 16131))
        #expect(m.crank == CrankRevolutionData(cumulativeRevolutions: 2047, lastEventTimeTicks: 4071))
        #expect(m.bytes == bytes)
    }

    @Test(arguments: [
        ("02 FE FF 00 FC", nil, CrankRevolutionData(cumulativeRevolutions: 65534, lastEventTimeTicks: 64512)),
        ("02 01 00 00 04", nil, CrankRevolutionData(cumulativeRevolutions: 1, lastEventTimeTicks: 1024)),
        ("01 FF FF FF FF 00 FC", WheelRevolutionData(cumulativeRevolutions: 4_294_967_295, lastEventTimeTicks: 64512), nil),
        ("01 02 00 00 00 00 04", WheelRevolutionData(cumulativeRevolutions: 2, lastEventTimeTicks: 1024), nil),
    ] as [(String, WheelRevolutionData?, CrankRevolutionData?)])
    func singleBlockExamples(hex: String, wheel: WheelRevolutionData?, crank: CrankRevolutionData?) throws {
        let bytes = fitnessHex(hex)
        let m = try CSCMeasurement(exactly: bytes)
        #expect(m.wheel == wheel)
        #expect(m.crank == crank)
        #expect(m.bytes == bytes)
    }

    @Test func reservedFlagBitsIgnoredAndPaddingTolerated() throws {
        let m = try CSCMeasurement(bytes: fitnessHex("FE 01 00 00 04 AA"))
        #expect(m.crank == CrankRevolutionData(cumulativeRevolutions: 1, lastEventTimeTicks: 1024))
        #expect(m.wheel == nil)
    }

    @Test func truncationAtEveryFieldBoundary() {
        fitnessExpectTruncations(CSCMeasurement.self, Self.a, fields: [
            (0, "CSC Measurement.flags"),
            (1, "CSC Measurement.cumulative wheel revolutions"), (4, "CSC Measurement.cumulative wheel revolutions"),
            (5, "CSC Measurement.last wheel event time"), (6, "CSC Measurement.last wheel event time"),
            (7, "CSC Measurement.cumulative crank revolutions"), (8, "CSC Measurement.cumulative crank revolutions"),
            (9, "CSC Measurement.last crank event time"), (10, "CSC Measurement.last crank event time"),
        ])
        fitnessExpectTruncations(CSCMeasurement.self, fitnessHex("02 FE FF 00 FC"), fields: [
            (1, "CSC Measurement.cumulative crank revolutions"), (3, "CSC Measurement.last crank event time"),
        ])
    }

    @Test func feature() throws {
        let f = try CSCFeature(exactly: fitnessHex("07 00"))
        #expect(f == [.wheelRevolutionData, .crankRevolutionData, .multipleSensorLocations])
        #expect(f.bytes == fitnessHex("07 00"))
        #expect(f.summary == "wheelRevolutionData, crankRevolutionData, multipleSensorLocations")
        #expect(try CSCFeature(bytes: fitnessHex("02 00")) == .crankRevolutionData)
        #expect(throws: DecodingError.truncated("CSC Feature", needed: 2, present: 1, at: 0)) { try CSCFeature(bytes: [7]) }
    }

    @Test func sensorLocations() {
        let names = (0...16).map { SensorLocation(rawValue: UInt8($0)).description }
        #expect(names == ["other", "top of shoe", "in shoe", "hip", "front wheel", "left crank", "right crank",
                          "left pedal", "right pedal", "front hub", "rear dropout", "chainstay", "rear wheel",
                          "rear hub", "chest", "spider", "chain ring"])
        #expect(SensorLocation(rawValue: 13) == .rearHub)
        #expect(SensorLocation(rawValue: 17) == .reserved(17))
        for raw in UInt8.min...UInt8.max { #expect(SensorLocation(rawValue: raw).rawValue == raw) }
    }
}

@Suite struct SCControlPointTests {
    @Test func setCumulativeValueAndResponse() throws {
        let request = try SCControlPointRequest(exactly: fitnessHex("01 00 00 00 00"))
        #expect(request == .setCumulativeValue(0))
        #expect(request.bytes == fitnessHex("01 00 00 00 00"))
        let response = try SCControlPointResponse(exactly: fitnessHex("10 01 01"))
        #expect(response.requestOpCode == 0x01)
        #expect(response.result == .success)
        #expect(response.bytes == fitnessHex("10 01 01"))
        #expect(response.summary == "response to 0x01: success")
    }

    @Test func otherRequests() throws {
        for (hex, value) in [
            ("02", SCControlPointRequest.startSensorCalibration),
            ("03 0D", .updateSensorLocation(.rearHub)),
            ("04", .requestSupportedSensorLocations),
            ("7F AA", .other(opCode: 0x7F, parameter: [0xAA])),
        ] {
            #expect(try SCControlPointRequest(exactly: fitnessHex(hex)) == value)
            #expect(value.bytes == fitnessHex(hex))
        }
    }

    @Test func supportedLocationsResponse() throws {
        let bytes = fitnessHex("10 04 01 04 05 0D")
        let r = try SCControlPointResponse(exactly: bytes)
        #expect(r.supportedSensorLocations == [.frontWheel, .leftCrank, .rearHub])
        #expect(r.bytes == bytes)
    }

    @Test func responseWithOnlyAResultByteDoesNotCrash() throws {
        let r = try SCControlPointResponse(exactly: fitnessHex("10 02"))
        #expect(r.requestOpCode == nil)
        #expect(r.result == .opCodeNotSupported)
        #expect(r.bytes == fitnessHex("10 02"))
        #expect(try SCControlPointMessage(bytes: fitnessHex("10 02")) == .response(r))
    }

    @Test func messageDirection() throws {
        #expect(try SCControlPointMessage(bytes: fitnessHex("01 05 00 00 00")) == .request(.setCumulativeValue(5)))
        if case .response = try SCControlPointMessage(bytes: fitnessHex("10 03 03")) {} else { Issue.record("not a response") }
    }

    @Test func truncation() {
        fitnessExpectTruncations(SCControlPointRequest.self, fitnessHex("01 00 00 00 00"), fields: [
            (0, "SC Control Point.op code"), (1, "SC Control Point.cumulative value"), (4, "SC Control Point.cumulative value"),
        ])
        fitnessExpectTruncations(SCControlPointRequest.self, fitnessHex("03 0C"), fields: [(1, "SC Control Point.sensor location")])
        fitnessExpectTruncations(SCControlPointResponse.self, fitnessHex("10 01 01"), fields: [
            (0, "SC Control Point response.response code"), (1, "SC Control Point response.request op code"),
        ])
        #expect(throws: DecodingError.invalid("SC Control Point response.response code", expected: "0x10", found: "0x20", at: 0)) {
            try SCControlPointResponse(bytes: [0x20, 0x01, 0x01])
        }
    }
}
