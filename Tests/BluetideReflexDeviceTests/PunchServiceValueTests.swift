import BluetideBase
import BluetideProfiles
@testable import BluetideReflexDevice
import Testing

@Suite struct StoredPunchValueTests {
    @Test func emptyUntilWrittenAndValidValuesRoundTrip() throws {
        #expect(StoredPunchValue<PunchSequence>().bytes == [])
        let times = try StoredPunchValue<PunchTimeSequence>(exactly: [0xE8, 0x03, 0xDC, 0x05])
        #expect(times.value?.milliseconds == [1000, 1500])
        #expect(times.bytes == [0xE8, 0x03, 0xDC, 0x05])
        #expect(try StoredPunchValue<PunchSequence>(exactly: [0, 5, 3]).value?.targets == [0, 5, 3])
    }

    private func check(_ bytes: [UInt8], _ decode: () throws(DecodingError) -> Void) {
        do { try decode() } catch {
            if case .invalidValue = error.kind {} else { Issue.record("\(bytes.spacedHex): \(error)") }
        }
    }

    /// Every refused write is an invalid value (ATT 0x80), never a length error (0x0D): also an
    /// odd number of time bytes and an empty write.
    @Test func randomWritesNeverTrapAndAreRefusedAsInvalidValues() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<5000 {
            let count = Int.random(in: 0...40, using: &rng)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var times = ByteReader(bytes)
            var targets = ByteReader(bytes)
            check(bytes, { () throws(DecodingError) in _ = try StoredPunchValue<PunchTimeSequence>(from: &times) })
            check(bytes, { () throws(DecodingError) in _ = try StoredPunchValue<PunchSequence>(from: &targets) })
        }
    }
}
