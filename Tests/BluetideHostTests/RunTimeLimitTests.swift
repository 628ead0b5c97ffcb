import BluetideTestSupport
import Testing

/// The hang guard used by the test targets: values pass through, a hung body is cut off.
@Suite struct RunTimeLimitTests {
    struct Limit: Error, Equatable {}

    @Test func aPromptBodyReturnsItsValue() async throws {
        #expect(try await withRunTimeLimit(5, onTimeout: { Limit() }) { 42 } == 42)
    }

    @Test func aHungBodyIsCutOffWithTheGivenError() async throws {
        await #expect(throws: Limit()) {
            try await withRunTimeLimit(0.3, onTimeout: { Limit() }) {
                try await Task.sleep(for: .seconds(60))  // a stand-in for a hung body: cut off, never waited out
                return 0
            }
        }
    }

    @Test func theBodysOwnErrorWins() async throws {
        struct Own: Error, Equatable {}
        await #expect(throws: Own()) {
            try await withRunTimeLimit(5, onTimeout: { Limit() }) { () async throws -> Int in throw Own() }
        }
    }
}
