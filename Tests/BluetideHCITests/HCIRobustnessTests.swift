import BluetideBase
import Testing
@testable import BluetideHCI

/// A small deterministic generator so failures reproduce.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct HCIRobustnessTests {
    static let commandTypes: [any HCICommand.Type] = HCICommandCatalog.all

    @Test func opcodesAreDistinct() {
        let opcodes = Self.commandTypes.map { $0.opcode }
        #expect(Set(opcodes).count == opcodes.count)
    }

    @Test func randomEventsDecodeToValuesOrErrorsAndReencodeStably() {
        var rng = SplitMix64(state: 0xB1E7_1DE)
        let codes: [UInt8] = [0x05, 0x08, 0x0E, 0x0F, 0x13, 0x3E, 0x10, 0xFF]
        let subevents: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x0A, 0x0C, 0x0D, 0x12, 0x14]
        var decoded = 0
        for _ in 0..<20_000 {
            let code = codes.randomElement(using: &rng) ?? 0x0E
            let length = Int.random(in: 0...64, using: &rng)
            var params = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if code == 0x3E, !params.isEmpty { params[0] = subevents.randomElement(using: &rng) ?? 1 }
            // Small counts make multi-report events decodable now and then.
            if code == 0x3E || code == 0x13, params.count > 1, Bool.random(using: &rng) { params[code == 0x13 ? 0 : 1] %= 3 }
            do {
                let event = try HCIEvent(code: code, parameters: params)
                decoded += 1
                // Re-encoding a decoded event and decoding again gives the same event.
                #expect(try HCIEvent(code: event.code, parameters: event.parameters) == event)
            } catch {
                #expect(!error.field.isEmpty)
            }
        }
        #expect(decoded > 1000)
    }

    static func decodeReturn<C: HCICommand>(_ type: C.Type, _ params: [UInt8]) throws -> C.ReturnParameters {
        try C.ReturnParameters(parameters: params)
    }

    @Test func randomCommandParametersAndReturnsNeverTrap() {
        var rng = SplitMix64(state: 42)
        for _ in 0..<200 {
            for type in Self.commandTypes {
                let length = Int.random(in: 0...70, using: &rng)
                let params = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
                _ = try? type.init(parameters: params)
                _ = try? Self.decodeReturn(type, params)
                _ = try? HCICommandComplete(parameters: params)
            }
        }
    }
}
