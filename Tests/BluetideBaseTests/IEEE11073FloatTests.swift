import Testing
@testable import BluetideBase

@Suite struct IEEE11073FloatTests {
    // MARK: SFLOAT examples (spec 6.3)

    @Test(arguments: [
        (UInt16(0xF16C), [UInt8(0x6C), 0xF1], 36.4, Int16(364), Int8(-1), "36.4"),
        (0xF014, [0x14, 0xF0], 2.0, 20, -1, "2.0"),
        (0xE0C8, [0xC8, 0xE0], 2.00, 200, -2, "2.00"),
        (0x1002, [0x02, 0x10], 20, 2, 1, "20"),
        (0xFF9C, [0x9C, 0xFF], -10.0, -100, -1, "-10.0"),
    ])
    func sfloatExamples(raw: UInt16, bytes: [UInt8], value: Double, mantissa: Int16, exponent: Int8, text: String) throws {
        let decoded = try IEEE11073SFloat(exactly: bytes)
        #expect(decoded.rawValue == raw)
        #expect(decoded.mantissa == mantissa)
        #expect(decoded.exponent == exponent)
        #expect(decoded.doubleValue == value)
        #expect(decoded.special == nil)
        #expect(decoded.description == text)
        #expect(decoded.bytes == bytes)
    }

    @Test func sfloatPrecisionIsKept() throws {
        let a = try IEEE11073SFloat(bytes: [0x14, 0xF0]), b = try IEEE11073SFloat(bytes: [0xC8, 0xE0])
        #expect(a.doubleValue == b.doubleValue)
        #expect(a != b, "2.0 and 2.00 carry different precision")
    }

    @Test(arguments: [
        (UInt16(0x07FF), IEEE11073Special.notANumber),
        (0x0800, .notAtThisResolution),
        (0x07FE, .positiveInfinity),
        (0x0802, .negativeInfinity),
        (0x0801, .reserved),
    ])
    func sfloatSpecials(raw: UInt16, special: IEEE11073Special) {
        let value = IEEE11073SFloat(rawValue: raw)
        #expect(value.special == special)
        #expect(IEEE11073SFloat(special: special).rawValue == raw)
        switch special {
        case .positiveInfinity: #expect(value.doubleValue == .infinity)
        case .negativeInfinity: #expect(value.doubleValue == -.infinity)
        default: #expect(value.doubleValue == nil)
        }
    }

    @Test func specialCodesOnlyAtExponentZero() {
        // 2047 × 10¹ is an ordinary number.
        let value = IEEE11073SFloat(rawValue: 0x17FF)
        #expect(value.special == nil)
        #expect(value.doubleValue == 20470)
    }

    @Test func sfloatEncodingChoosesLargestExactExponent() {
        #expect(IEEE11073SFloat(36.4).rawValue == 0xF16C)
        #expect(IEEE11073SFloat(20).rawValue == 0x1002)
        #expect(IEEE11073SFloat(-10.0).rawValue == 0x1FFF, "−1 × 10¹")
        #expect(IEEE11073SFloat(2.0).rawValue == 0x0002)
        #expect(IEEE11073SFloat(0).rawValue == 0)
        #expect(IEEE11073SFloat(0.125).rawValue == IEEE11073SFloat(mantissa: 125, exponent: -3)?.rawValue)
        #expect(IEEE11073SFloat(70_000_000).rawValue == IEEE11073SFloat(mantissa: 7, exponent: 7)?.rawValue)
    }

    @Test func sfloatEncodingNeverEmitsReservedPatterns() {
        // 2046 and 2047 at exponent 0 would be +INF / NaN; they must move to another exponent or round.
        for value in [2046.0, 2047.0, -2046.0, -2047.0, -2048.0, 2045.0] {
            let encoded = IEEE11073SFloat(value)
            #expect(encoded.special == nil, "\(value)")
            let decoded = encoded.doubleValue ?? .nan
            #expect(abs(decoded - value) <= 5, "\(value) → \(decoded)")
        }
        #expect(IEEE11073SFloat(2045).doubleValue == 2045)
        #expect(IEEE11073SFloat(2046).doubleValue == 2050, "rounds to 205 × 10¹")
        #expect(IEEE11073SFloat(exactly: 2046) == nil)
        #expect(IEEE11073SFloat(exactly: 20460) == IEEE11073SFloat(mantissa: 2046, exponent: 1))
    }

    @Test func sfloatEncodingSpecialsAndOverflow() {
        #expect(IEEE11073SFloat(.nan) == .nan)
        #expect(IEEE11073SFloat(.infinity) == .positiveInfinity)
        #expect(IEEE11073SFloat(-.infinity) == .negativeInfinity)
        #expect(IEEE11073SFloat(1e30) == .positiveInfinity)
        #expect(IEEE11073SFloat(-1e30) == .negativeInfinity)
        #expect(IEEE11073SFloat(mantissa: 2047, exponent: 0) == nil)
        #expect(IEEE11073SFloat(mantissa: 3000, exponent: 0) == nil)
        #expect(IEEE11073SFloat(mantissa: 1, exponent: 8) == nil)
    }

    @Test func sfloatInexactRoundsToMostPreciseExponent() {
        let third = IEEE11073SFloat(1.0 / 3.0)
        #expect(third.mantissa == 333)
        #expect(third.exponent == -3)
        #expect(IEEE11073SFloat(exactly: 1.0 / 3.0) == nil)
    }

    @Test func valuesTooSmallForTheFormatBecomeZero() {
        #expect(IEEE11073SFloat(1e-12).rawValue == 0)
        #expect(IEEE11073SFloat(-4e-9).rawValue == 0)
        #expect(IEEE11073SFloat(exactly: 1e-12) == nil)
        #expect(IEEE11073Float(Double.leastNonzeroMagnitude).rawValue == 0)
        #expect(IEEE11073Float(1e-130).rawValue == 0)
        #expect(IEEE11073Float(6e-129) == IEEE11073Float(mantissa: 1, exponent: -128), "0.6 × 10⁻¹²⁸ rounds to 1 × 10⁻¹²⁸")
    }

    // MARK: FLOAT examples (spec 6.3)

    @Test(arguments: [
        (UInt32(0xFF00_016C), [UInt8(0x6C), 0x01, 0x00, 0xFF], 36.4, Int32(364), Int8(-1), "36.4"),
        (0xFE00_08CA, [0xCA, 0x08, 0x00, 0xFE], 22.5, 2250, -2, "22.50"),
        (0xFFFF_FE94, [0x94, 0xFE, 0xFF, 0xFF], -36.4, -364, -1, "-36.4"),
    ])
    func floatExamples(raw: UInt32, bytes: [UInt8], value: Double, mantissa: Int32, exponent: Int8, text: String) throws {
        let decoded = try IEEE11073Float(exactly: bytes)
        #expect(decoded.rawValue == raw)
        #expect(decoded.mantissa == mantissa)
        #expect(decoded.exponent == exponent)
        #expect(decoded.doubleValue == value)
        #expect(decoded.description == text)
        #expect(decoded.bytes == bytes)
    }

    @Test func floatEncoding() {
        #expect(IEEE11073Float(36.4).rawValue == 0xFF00_016C)
        #expect(IEEE11073Float(-36.4).rawValue == 0xFFFF_FE94)
        #expect(IEEE11073Float(22.5).rawValue == 0xFF00_00E1, "225 × 10⁻¹ is the largest exact exponent")
        #expect(IEEE11073Float(0).rawValue == 0)
        #expect(IEEE11073Float(.nan) == .nan)
        #expect(IEEE11073Float(1e300) == .positiveInfinity)
        #expect(IEEE11073Float(8_388_606).special == nil)
    }

    @Test(arguments: [
        (UInt32(0x007F_FFFF), IEEE11073Special.notANumber),
        (0x0080_0000, .notAtThisResolution),
        (0x007F_FFFE, .positiveInfinity),
        (0x0080_0002, .negativeInfinity),
        (0x0080_0001, .reserved),
    ])
    func floatSpecials(raw: UInt32, special: IEEE11073Special) throws {
        let value = try IEEE11073Float(bytes: IEEE11073Float(rawValue: raw).bytes)
        #expect(value.special == special)
        #expect(IEEE11073Float(special: special).rawValue == raw)
        #expect(value.description == special.rawValue)
    }

    @Test func truncatedInputNamesTheField() {
        #expect(throws: DecodingError.truncated("SFLOAT", needed: 2, present: 1, at: 0)) {
            try IEEE11073SFloat(bytes: [0x6C])
        }
        #expect(throws: DecodingError.truncated("FLOAT", needed: 4, present: 3, at: 0)) {
            try IEEE11073Float(bytes: [0x6C, 0x01, 0x00])
        }
    }

    @Test func everySFloatRoundTripsThroughItsValue() {
        // Every ordinary SFLOAT decodes to a Double that re-encodes to the same number.
        for raw in UInt16.min...UInt16.max {
            let value = IEEE11073SFloat(rawValue: raw)
            // −2048 is outside the ±2047 range the encoder uses, so it cannot come back unchanged.
            guard value.special == nil, value.mantissa != -2048, let number = value.doubleValue else { continue }
            let again = IEEE11073SFloat(number)
            #expect(again.doubleValue == number, "raw \(raw)")
        }
    }
}
