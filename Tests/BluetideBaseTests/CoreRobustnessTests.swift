import Testing
@testable import BluetideBase

/// A small seeded generator (SplitMix64) so a failing random case can be reproduced.
fileprivate struct CoreTestRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct CoreRobustnessTests {
    /// Random and truncated inputs through every Core reader: only values or DecodingError.
    @Test func randomInputsNeverTrap() {
        var rng = CoreTestRandom(state: 0xB1E7_1DE)
        var decodedCount = 0, errorCount = 0
        for _ in 0..<5000 {
            let length = Int.random(in: 0...24, using: &rng)
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var reader = ByteReader(bytes)
            // A random walk of reads until the input runs out.
            for _ in 0..<12 {
                do throws(DecodingError) {
                    switch Int.random(in: 0..<14, using: &rng) {
                    case 0: _ = try reader.readUInt8("a")
                    case 1: _ = try reader.read(UInt16.self, "b", .big)
                    case 2: _ = try reader.readUInt24("c")
                    case 3: _ = try reader.readInt24("d")
                    case 4: _ = try reader.readUInt48("e")
                    case 5: _ = try reader.readInt48("f")
                    case 6: _ = try reader.readBytes(Int.random(in: -2...8, using: &rng), "g")
                    case 7: _ = try reader.readString(Int.random(in: 0...6, using: &rng), "h")
                    case 8: _ = try reader.readLenientString(nil, "i")
                    case 9: _ = try reader.skip(Int.random(in: -1...5, using: &rng), "j")
                    case 10: _ = try reader.decode(IEEE11073SFloat.self).doubleValue
                    case 11: _ = try reader.decode(IEEE11073Float.self).description
                    case 12: _ = try reader.decode(ScaledValue<Int32, Scales.Per2048Second>.self).doubleValue
                    default: _ = try reader.read(Int64.self, "k")
                    }
                    decodedCount += 1
                } catch {
                    #expect(!error.field.isEmpty)
                    errorCount += 1
                }
            }
            _ = try? GATTPayload.decode(bytes, as: UInt8.self, IEEE11073SFloat.self, IEEE11073Float.self)
            _ = try? [UInt16](bytes: bytes)
            _ = String(deviceBytes: bytes)
        }
        #expect(decodedCount > 1000)
        #expect(errorCount > 1000)
    }

    /// Every random FLOAT decodes, prints and re-encodes without trapping; numbers survive.
    @Test func randomFloatsRoundTrip() {
        var rng = CoreTestRandom(state: 42)
        for _ in 0..<4000 {  // 4000 draws cover every exponent many times; more only slows debug runs
            let raw = UInt32.random(in: 0...UInt32.max, using: &rng)
            let value = IEEE11073Float(rawValue: raw)
            _ = value.description
            if let number = value.doubleValue, value.mantissa != -8_388_608 {
                let again = IEEE11073Float(number)
                if number.isFinite {
                    let back = again.doubleValue ?? .nan
                    #expect(abs(back - number) <= abs(number) * 1e-12, "raw \(raw)")
                } else {
                    #expect(again == value)
                }
            }
            let double = Double(bitPattern: rng.next())
            _ = IEEE11073Float(double).doubleValue
            _ = IEEE11073SFloat(double).doubleValue
            _ = ScaledValue<UInt16, Scales.QuarterWatt>(double).doubleValue
            #expect(IEEE11073SFloat(double).special.map { $0 != .reserved && $0 != .notAtThisResolution } ?? true)
            #expect(IEEE11073Float(double).special.map { $0 != .reserved && $0 != .notAtThisResolution } ?? true)
        }
    }
}
