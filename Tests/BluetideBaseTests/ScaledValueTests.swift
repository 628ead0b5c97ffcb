import Testing
@testable import BluetideBase

@Suite struct ScaledValueTests {
    @Test func rrIntervalIn1024thsOfASecond() throws {
        let rr = try ScaledValue<UInt16, Scales.Per1024Second>(exactly: [0x1C, 0x03])
        #expect(rr.rawValue == 796)
        #expect(abs(rr.doubleValue - 0.77734375) < 1e-12)
        #expect(rr.bytes == [0x1C, 0x03])
        #expect(ScaledValue<UInt16, Scales.Per1024Second>(0.7773).rawValue == 796)
    }

    @Test func millisecondsInUInt32() throws {
        let t = ScaledValue<UInt32, Scales.Milliseconds>(12.3456)
        #expect(t.rawValue == 12346)
        #expect(t.bytes == [0x3A, 0x30, 0x00, 0x00])
        #expect(try ScaledValue<UInt32, Scales.Milliseconds>(bytes: t.bytes) == t)
    }

    @Test func quarterWattsRoundAndClamp() {
        typealias Power = ScaledValue<UInt16, Scales.QuarterWatt>
        #expect(Power(200).rawValue == 800)
        #expect(Power(200).bytes == [0x20, 0x03])
        #expect(Power(200.1).rawValue == 800)
        #expect(Power(200.125).rawValue == 801, "ties round away from zero")
        #expect(Power(-3).rawValue == 0, "clamped to the raw minimum")
        #expect(Power(1e9).rawValue == .max, "clamped to the raw maximum")
        #expect(Power(.nan).rawValue == 0)
        #expect(Power(.infinity).rawValue == .max)
        #expect(Power.range == 0...16383.75)
        #expect(Power.canRepresent(16383.75))
        #expect(!Power.canRepresent(16384.5))
    }

    enum Grade: ValueScale {
        static var resolution: Double { 0.01 }
        static var offset: Double { -200 }
    }

    @Test func offsetScale() {
        typealias G = ScaledValue<UInt16, Grade>
        #expect(G(rawValue: 20500).doubleValue == 5.0)
        #expect(G(5.0).rawValue == 20500)
        #expect(G(-200).rawValue == 0)
        #expect(G(-300).rawValue == 0)
    }

    @Test func signedRawAndWideTypesClampWithoutTrapping() {
        typealias S = ScaledValue<Int8, Scales.HalfPercent>
        #expect(S(-64).rawValue == -128)
        #expect(S(-1000).rawValue == .min)
        #expect(S(1000).rawValue == .max)
        typealias Wide = ScaledValue<UInt64, Scales.Milliseconds>
        #expect(Wide(1e300).rawValue == .max)
        #expect(Wide(-.infinity).rawValue == 0)
        typealias WideSigned = ScaledValue<Int64, Scales.Milliseconds>
        #expect(WideSigned(-1e300).rawValue == .min)
    }

    @Test func truncation() {
        #expect(throws: DecodingError.truncated("scaled value", needed: 4, present: 2, at: 0)) {
            try ScaledValue<UInt32, Scales.Milliseconds>(bytes: [1, 2])
        }
    }
}
