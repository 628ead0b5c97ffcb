import BluetideCore
import Testing
@testable import BluetideProfiles

/// Bytes from spec hex, e.g. `"16 4E 1C 03 F4 02"`.
func fitnessHex(_ text: String) -> [UInt8] {
    (try? Hex.parse(text)) ?? []
}

/// Asserts that decoding every strict prefix of `bytes` that ends inside a field throws a
/// truncation naming `fields[i]` (the field the prefix cuts into), and the full input decodes.
func expectTruncations<T: GATTDecodable>(
    _ type: T.Type, _ bytes: [UInt8], fields: [(prefixLength: Int, field: String)],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    for (length, field) in fields {
        do {
            _ = try T(bytes: Array(bytes.prefix(length)))
            Issue.record("\(T.self) decoded a \(length)-byte prefix", sourceLocation: sourceLocation)
        } catch {
            #expect(error.field == field, "prefix \(length)", sourceLocation: sourceLocation)
            if case .truncated = error.kind {} else {
                Issue.record("expected truncation, got \(error)", sourceLocation: sourceLocation)
            }
        }
    }
}

/// SplitMix64, seeded, so a failing random case can be reproduced.
struct FitnessRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
