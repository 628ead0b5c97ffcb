import BluetideBase
import BluetideHCI
import BluetideSupport
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

    // MARK: LE Encrypt and LE Rand

    /// Bytes from hex written most significant octet first, returned in HCI order (reversed).
    static func hci(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes.reversed()
    }

    /// LE Encrypt's return parameters for a key and plaintext (both in HCI order).
    static func encrypt(_ host: HostProbe, key: [UInt8], plaintext: [UInt8]) async throws -> [UInt8] {
        try await host.runRaw(0x2017, key + plaintext).returnParameters
    }

    @Test func leEncryptMatchesFIPS197InHCIByteOrder() async throws {
        let host = HostProbe(await VirtualLink(clock: ManualClock()).attachController())
        // FIPS-197 Appendix C.1 (AES-128), every block written most significant octet first:
        // key 000102…0f, plaintext 00112233…ff, ciphertext 69c4e0d8…c55a. HCI carries each
        // least significant octet first, so all three are reversed on the wire.
        let key = Self.hci("000102030405060708090a0b0c0d0e0f")
        let plaintext = Self.hci("00112233445566778899aabbccddeeff")
        #expect(key.first == 0x0F && plaintext.first == 0xFF)
        let answer = try await Self.encrypt(host, key: key, plaintext: plaintext)
        #expect(answer == [0x00] + Self.hci("69c4e0d86a7b0430d8cdb78070b4c55a"))
        #expect(answer == [0x00, 0x5A, 0xC5, 0xB4, 0x70, 0x80, 0xB7, 0xCD, 0xD8, 0x30, 0x04, 0x7B, 0x6A, 0xD8, 0xE0, 0xC4, 0x69])
    }

    @Test func leEncryptGivesTheSessionKeyOfTheCoreSpecSampleData() async throws {
        let host = HostProbe(await VirtualLink(clock: ManualClock()).attachController())
        // Core Vol 6 Part C 1.1 (encryption sample data): SK = e(LTK, SKD), MSO first.
        let ltk = Self.hci("4C68384139F574D836BCF34E9DFB01BF")
        let skd = Self.hci("0213243546576879ACBDCEDFE0F10213")
        #expect(try await Self.encrypt(host, key: ltk, plaintext: skd) == [0x00] + Self.hci("99AD1B5226A37E3E058E3B8E27C2C666"))
    }

    @Test func leEncryptWithShortParametersIsRefusedWithFullLengthReturn() async throws {
        let host = HostProbe(await VirtualLink(clock: ManualClock()).attachController())
        let answer = try await host.runRaw(0x2017, [UInt8](repeating: 1, count: 31))
        #expect(answer.status == .invalidParameters)
        #expect(answer.returnParameters == [0x12] + [UInt8](repeating: 0, count: 16))
    }

    @Test func leRandComesFromTheLinksSeed() async throws {
        func draws(seed: UInt64) async throws -> [[UInt8]] {
            let host = HostProbe(await VirtualLink(seed: seed, clock: ManualClock()).attachController())
            var values: [[UInt8]] = []
            for _ in 0..<3 {
                let answer = try await host.runRaw(0x2018)
                #expect(answer.status == .success && answer.returnParameters.count == 9)
                values.append(Array(answer.returnParameters.dropFirst()))
            }
            return values
        }
        let first = try await draws(seed: 42)
        #expect(try await draws(seed: 42) == first)
        #expect(try await draws(seed: 43) != first)
        #expect(Set(first).count == 3)
        // The first draw is SplitMix64(seed: 42)'s first value, least significant octet first.
        var generator = SplitMix64(seed: 42)
        let value = generator.next()
        #expect(first[0] == (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) })
    }

    @Test func encryptionFeatureAndCommandsAreAdvertised() async throws {
        let host = HostProbe(await VirtualLink(clock: ManualClock()).attachController())
        #expect(try await host.succeed(LEReadLocalSupportedFeatures()).features.contains(.encryption))
        let commands = try await host.succeed(HCIReadLocalSupportedCommands())
        #expect(commands.supports(octet: 27, bit: 6), "LE Encrypt")
        #expect(commands.supports(octet: 27, bit: 7), "LE Rand")
        #expect(commands.supports(octet: 28, bit: 0), "LE Enable Encryption")
        #expect(commands.supports(octet: 28, bit: 1), "LE Long Term Key Request Reply")
        #expect(commands.supports(octet: 28, bit: 2), "LE Long Term Key Request Negative Reply")
    }

    // MARK: The flows in virtual time

    static let interval = Duration.milliseconds(30)

    /// Connects on a manual clock and encrypts with `key` (both sides get Encryption Change).
    static func encryptedPair(_ clock: ManualClock) async throws -> (LinkPair, (a: UInt16, b: UInt16)) {
        let pair = try await LinkPair(clock: clock)
        let handles = try await pair.connect()
        #expect(try await pair.b.start(LEEnableEncryption(handle: handles.b, randomNumber: 9, encryptedDiversifier: 3, longTermKey: key)) == .success)
        clock.advance(by: interval)
        #expect(try await pair.a.nextLEEvent() == .longTermKeyRequest(.init(handle: handles.a, randomNumber: 9, encryptedDiversifier: 3)))
        try await pair.a.succeed(LELongTermKeyRequestReply(handle: handles.a, longTermKey: key))
        clock.advance(by: interval)
        #expect(try await pair.b.nextEvent() == .encryptionChange(.init(handle: handles.b, encryptionEnabled: 1)))
        #expect(try await pair.a.nextEvent() == .encryptionChange(.init(handle: handles.a, encryptionEnabled: 1)))
        return (pair, handles)
    }

    @Test func eachStepOfEncryptionTakesAConnectionIntervalAfterItsCommandStatus() async throws {
        let clock = ManualClock()
        let pair = try await LinkPair(clock: clock)
        let handles = try await pair.connect()
        #expect(try await pair.b.start(LEEnableEncryption(handle: handles.b, randomNumber: 1, encryptedDiversifier: 2, longTermKey: Self.key)) == .success)
        // A second start while one runs is refused.
        #expect(try await pair.b.start(LEEnableEncryption(handle: handles.b, longTermKey: Self.key)) == .commandDisallowed)
        clock.advance(by: Self.interval - .microseconds(1))
        try await pair.a.expectNothingPending()
        // A reply before the request came is refused.
        #expect(try await pair.a.run(LELongTermKeyRequestReply(handle: handles.a, longTermKey: Self.key)).status == .commandDisallowed)
        clock.advance(by: .microseconds(1))
        #expect(try await pair.a.nextLEEvent() == .longTermKeyRequest(.init(handle: handles.a, randomNumber: 1, encryptedDiversifier: 2)))
        try await pair.a.succeed(LELongTermKeyRequestReply(handle: handles.a, longTermKey: Self.key))
        clock.advance(by: Self.interval - .microseconds(1))
        try await pair.a.expectNothingPending()
        try await pair.b.expectNothingPending()
        clock.advance(by: .microseconds(1))
        #expect(try await pair.b.nextEvent() == .encryptionChange(.init(handle: handles.b, encryptionEnabled: 1)))
        #expect(try await pair.a.nextEvent() == .encryptionChange(.init(handle: handles.a, encryptionEnabled: 1)))
    }

    @Test func encryptionChangeBytesAreThoseOfARealController() async throws {
        let (pair, handles) = try await Self.encryptedPair(ManualClock())
        #expect(HCIEvent.encryptionChange(.init(handle: handles.b, encryptionEnabled: 1)).packet.h4Bytes
            == [0x04, 0x08, 0x04, 0x00, UInt8(handles.b), 0x00, 0x01])
        try await pair.b.expectNothingPending()
    }

    @Test func keyRefreshOnAnEncryptedLinkEndsWithKeyRefreshComplete() async throws {
        let clock = ManualClock()
        let (pair, handles) = try await Self.encryptedPair(clock)
        let newKey = HCIKey128(bytes: Array(0x20...0x2F))
        #expect(try await pair.b.start(LEEnableEncryption(handle: handles.b, randomNumber: 4, encryptedDiversifier: 5, longTermKey: newKey)) == .success)
        clock.advance(by: Self.interval)
        #expect(try await pair.a.nextLEEvent() == .longTermKeyRequest(.init(handle: handles.a, randomNumber: 4, encryptedDiversifier: 5)))
        try await pair.a.succeed(LELongTermKeyRequestReply(handle: handles.a, longTermKey: newKey))
        clock.advance(by: Self.interval)
        // Encryption Key Refresh Complete (0x30): status, handle.
        #expect(await pair.b.next() == .event(code: 0x30, parameters: [0x00, UInt8(handles.b), 0x00]))
        #expect(await pair.a.next() == .event(code: 0x30, parameters: [0x00, UInt8(handles.a), 0x00]))
        try await pair.b.expectNothingPending()
    }

    @Test func keyRefreshWithoutAKeyEndsTheLinkWithKeyMissing() async throws {
        let clock = ManualClock()
        let (pair, handles) = try await Self.encryptedPair(clock)
        _ = try await pair.b.start(LEEnableEncryption(handle: handles.b, longTermKey: Self.key))
        clock.advance(by: Self.interval)
        _ = try await pair.a.nextLEEvent()
        try await pair.a.succeed(LELongTermKeyRequestNegativeReply(handle: handles.a))
        clock.advance(by: Self.interval)
        #expect(try await pair.b.nextEvent() == .disconnectionComplete(.init(handle: handles.b, reason: .pinOrKeyMissing)))
        #expect(try await pair.a.nextEvent() == .disconnectionComplete(.init(handle: handles.a, reason: .pinOrKeyMissing)))
        #expect(await pair.link.connectionCount == 0)
    }

    @Test func keyRefreshWithADifferentKeyEndsWithMICFailure() async throws {
        let clock = ManualClock()
        let (pair, handles) = try await Self.encryptedPair(clock)
        _ = try await pair.b.start(LEEnableEncryption(handle: handles.b, longTermKey: Self.key))
        clock.advance(by: Self.interval)
        _ = try await pair.a.nextLEEvent()
        try await pair.a.succeed(LELongTermKeyRequestReply(handle: handles.a, longTermKey: HCIKey128(bytes: [0xBA, 0xD0])))
        clock.advance(by: Self.interval)
        #expect(try await pair.b.nextEvent() == .disconnectionComplete(.init(handle: handles.b, reason: .micFailure)))
        #expect(try await pair.a.nextEvent() == .disconnectionComplete(.init(handle: handles.a, reason: .micFailure)))
    }

    @Test func keyRefreshCompleteIsMaskedLikeAnyEvent() async throws {
        let clock = ManualClock()
        let (pair, handles) = try await Self.encryptedPair(clock)
        // Event mask bit 47 (Encryption Key Refresh Complete) off on A.
        try await pair.a.succeed(HCISetEventMask(mask: 0x3FFF_BFFF_FFFF_FFFF & ~(1 << 47)))
        _ = try await pair.b.start(LEEnableEncryption(handle: handles.b, longTermKey: Self.key))
        clock.advance(by: Self.interval)
        _ = try await pair.a.nextLEEvent()
        try await pair.a.succeed(LELongTermKeyRequestReply(handle: handles.a, longTermKey: Self.key))
        clock.advance(by: Self.interval)
        #expect(await pair.b.next() == .event(code: 0x30, parameters: [0x00, UInt8(handles.b), 0x00]))
        try await pair.a.expectNothingPending()
    }

    @Test func aControllerWithoutLEEncryptionHasNoEncryptionCommands() async throws {
        let features = VirtualControllerProfile.leFeatures.subtracting(.encryption)
        let host = HostProbe(await VirtualLink(clock: ManualClock()).attachController(leFeatures: features))
        let commands = try await host.succeed(HCIReadLocalSupportedCommands())
        for command in VirtualControllerProfile.encryptionCommands {
            #expect(!commands.supports(octet: command.octet, bit: command.bit), "\(String(command.opcode, radix: 16))")
            await host.controller.send(.command(opcode: HCIOpcode(rawValue: command.opcode), parameters: []))
            #expect(try await host.nextEvent() == .commandStatus(HCICommandStatus(status: .unknownCommand, opcode: HCIOpcode(rawValue: command.opcode))))
        }
        #expect(commands.supports(octet: 27, bit: 7), "LE Rand stays")
    }

    @Test func encryptingToAPeerWithoutLEEncryptionFailsWithUnsupportedRemoteFeature() async throws {
        let clock = ManualClock()
        let link = VirtualLink(clock: clock)
        let peripheral = HostProbe(await link.attachController(leFeatures: VirtualControllerProfile.leFeatures.subtracting(.encryption)))
        let central = HostProbe(await link.attachController())
        try await peripheral.initialize()
        try await central.initialize()
        try await peripheral.succeed(LESetAdvertisingEnable(enable: true))
        #expect(try await central.start(LECreateConnection(peerAddress: peripheral.controller.publicAddress)) == .success)
        guard case let .connectionComplete(connection) = try await central.nextLEEvent() else { Issue.record("no connection"); return }
        #expect(try await central.start(LEEnableEncryption(handle: connection.handle, longTermKey: Self.key)) == .success)
        clock.advance(by: Self.interval)
        #expect(try await central.nextEvent() == .encryptionChange(.init(
            status: .unsupportedRemoteFeature, handle: connection.handle, encryptionEnabled: 0)))
        guard case .connectionComplete = try await peripheral.nextLEEvent() else { Issue.record("no connection"); return }
        try await peripheral.expectNothingPending()
    }
}
