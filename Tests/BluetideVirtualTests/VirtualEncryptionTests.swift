import BluetideCore
import BluetideHCI
import Testing
@testable import BluetideVirtual

@Suite(.timeLimit(.minutes(1))) struct VirtualEncryptionTests {
    static let key = HCIKey128(bytes: Array(0x10...0x1F))

    @Test func sameKeyEncryptsBothSides() async throws {
        let pair = try await LinkPair()
        let handles = try await pair.connect()
        #expect(try await pair.b.start(LEEnableEncryption(handle: handles.b, randomNumber: 5, encryptedDiversifier: 7, longTermKey: Self.key)) == .success)
        #expect(try await pair.a.nextLEEvent() == .longTermKeyRequest(.init(handle: handles.a, randomNumber: 5, encryptedDiversifier: 7)))
        #expect(try await pair.a.succeed(LELongTermKeyRequestReply(handle: handles.a, longTermKey: Self.key)) == HCIHandleReturn(handle: handles.a))
        #expect(try await pair.a.nextEvent() == .encryptionChange(.init(handle: handles.a, encryptionEnabled: 1)))
        #expect(try await pair.b.nextEvent() == .encryptionChange(.init(handle: handles.b, encryptionEnabled: 1)))
    }

    @Test func differentKeyEndsTheConnectionWithMICFailure() async throws {
        let pair = try await LinkPair()
        let handles = try await pair.connect()
        _ = try await pair.b.start(LEEnableEncryption(handle: handles.b, longTermKey: Self.key))
        _ = try await pair.a.nextLEEvent()
        try await pair.a.succeed(LELongTermKeyRequestReply(handle: handles.a, longTermKey: HCIKey128(bytes: [1])))
        #expect(try await pair.a.nextEvent() == .disconnectionComplete(.init(handle: handles.a, reason: .micFailure)))
        #expect(try await pair.b.nextEvent() == .disconnectionComplete(.init(handle: handles.b, reason: .micFailure)))
    }

    @Test func negativeReplyFailsTheCentralsRequest() async throws {
        let pair = try await LinkPair()
        let handles = try await pair.connect()
        // Only the central may start encryption.
        #expect(try await pair.a.start(LEEnableEncryption(handle: handles.a, longTermKey: Self.key)) == .commandDisallowed)
        _ = try await pair.b.start(LEEnableEncryption(handle: handles.b, longTermKey: Self.key))
        _ = try await pair.a.nextLEEvent()
        try await pair.a.succeed(LELongTermKeyRequestNegativeReply(handle: handles.a))
        #expect(try await pair.b.nextEvent() == .encryptionChange(.init(status: .pinOrKeyMissing, handle: handles.b, encryptionEnabled: 0)))
        // No request is pending any more.
        #expect(try await pair.a.run(LELongTermKeyRequestNegativeReply(handle: handles.a)).status == .commandDisallowed)
        try await pair.b.expectNothingPending()
    }
}
