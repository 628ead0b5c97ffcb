import BluetideBase
import Testing
@testable import BluetideHCI

/// Bytes from hex text in tests (`"01 03 0C 00"`).
func hex(_ text: String) -> [UInt8] {
    do { return try Hex.parse(text) } catch { Issue.record("bad hex in test: \(error)"); return [] }
}

/// Every strict prefix of `bytes` shorter than `required` fails to decode as `T` with a
/// truncation error (never a trap, never a value).
func expectEveryPrefixTruncated<T: HCIParameters>(
    _ type: T.Type, _ bytes: [UInt8], required: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    let limit = required ?? bytes.count
    for length in 0..<limit {
        do {
            let value = try T(parameters: Array(bytes.prefix(length)))
            Issue.record("\(T.self) decoded from \(length) of \(limit) bytes: \(value)", sourceLocation: sourceLocation)
        } catch {
            guard case .truncated = error.kind else {
                Issue.record("\(T.self) at \(length) bytes: \(error), expected truncation", sourceLocation: sourceLocation)
                continue
            }
        }
    }
}

/// Decodes `bytes` as `T`, re-encodes it, and checks the bytes come back unchanged.
@discardableResult
func roundTrip<T: HCIParameters & Equatable>(
    _ type: T.Type, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
) throws -> T {
    let value = try T(parameters: bytes)
    #expect(value.parameterBytes == bytes, "re-encoding \(T.self)", sourceLocation: sourceLocation)
    #expect(try T(parameters: value.parameterBytes) == value, sourceLocation: sourceLocation)
    return value
}
