import BluetideBase
import Testing
@testable import BluetideProfiles

/// Bytes from spec hex, e.g. `"16 4E 1C 03 F4 02"`.
func fitnessHex(_ text: String) -> [UInt8] {
    (try? Hex.parse(text)) ?? []
}

/// Asserts that decoding every strict prefix of `bytes` that ends inside a field throws a
/// truncation naming `fields[i]` (the field the prefix cuts into), and the full input decodes.
func fitnessExpectTruncations<T: GATTDecodable>(
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
