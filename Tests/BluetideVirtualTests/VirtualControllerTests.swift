import BluetideBase
import BluetideHCI
import Testing
@testable import BluetideVirtual

@Suite(.timeLimit(.minutes(1))) struct VirtualControllerSetupTests {
    @Test func startupSequenceAnswersLikeARealLEController() async throws {
        let link = VirtualLink()
        let host = HostProbe(await link.attachController())
        let other = HostProbe(await link.attachController())

        // Reset's Command Complete is byte-exact.
        await host.controller.send(HCIReset().packet)
        #expect(await host.next()?.h4Bytes == [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])

        let version = try await host.succeed(HCIReadLocalVersionInformation())
        #expect(version.hciVersion == 0x0C && version.companyIdentifier == 0xFFFF)
        let commands = try await host.succeed(HCIReadLocalSupportedCommands())
        #expect(commands.supports(octet: 5, bit: 7), "Reset")
        #expect(commands.supports(octet: 26, bit: 4), "LE Create Connection")
        #expect(commands.supports(octet: 15, bit: 5), "Read RSSI")
        let lmp = try await host.succeed(HCIReadLocalSupportedFeatures())
        #expect(lmp.features & (1 << 38) != 0)
        let le = try await host.succeed(LEReadLocalSupportedFeatures())
        #expect(le.features.contains(.dataPacketLengthExtension))
        #expect(le.features.contains(.extendedAdvertising))
        try await host.succeed(HCISetEventMask(mask: 0x3FFF_BFFF_FFFF_FFFF))
        try await host.succeed(LESetEventMask(mask: 0x1F))
        let buffers = try await host.succeed(LEReadBufferSize())
        #expect(buffers.leACLDataPacketLength == 251 && buffers.totalNumLEACLDataPackets > 1)
        let buffersV2 = try await host.succeed(LEReadBufferSizeV2())
        #expect(buffersV2.leACLDataPacketLength == 251)
        let shared = try await host.succeed(HCIReadBufferSize())
        #expect(shared.aclDataPacketLength == 251)
        try await host.succeed(LESetRandomAddress(address: .randomStatic(0x1234)))
        try await host.succeed(LESetAdvertisingEnable(enable: false))
        try await host.succeed(LESetScanEnable(enable: false))

        // Public addresses differ between controllers.
        let mine = try await host.succeed(HCIReadBDADDR()).address
        let theirs = try await other.succeed(HCIReadBDADDR()).address
        #expect(mine != theirs)
        #expect(mine == host.controller.publicAddress)
    }

    @Test func unknownCommandGetsUnknownCommandStatusNeverSilence() async throws {
        let link = VirtualLink()
        let host = HostProbe(await link.attachController())
        await host.controller.send(.command(opcode: HCIOpcode(rawValue: 0xFC01), parameters: [1, 2]))
        // Command Status, whose size never depends on the command (a 1-byte Command Complete
        // for a command with return parameters is what Linux rejected as "unexpected cc").
        #expect(await host.next() == HCIEvent.commandStatus(
            HCICommandStatus(status: .unknownCommand, opcode: HCIOpcode(rawValue: 0xFC01))).packet)
        // LE Encrypt (never answered by Bumble) is answered here: status and 16 octets.
        await host.controller.send(.command(opcode: HCIOpcode(rawValue: 0x2017), parameters: [UInt8](repeating: 0, count: 32)))
        guard case let .commandComplete(encrypt) = try await host.nextEvent() else { Issue.record("LE Encrypt not completed"); return }
        #expect(encrypt.opcode.rawValue == 0x2017 && encrypt.status == .success && encrypt.returnParameters.count == 17)
        // Short parameters: 0x12 invalid parameters, by Command Complete or Command Status as the command is.
        await host.controller.send(.command(opcode: LESetScanEnable.opcode, parameters: [1]))
        #expect(try await host.nextEvent() == .commandComplete(HCICommandComplete(opcode: LESetScanEnable.opcode, status: .invalidParameters)))
        await host.controller.send(.command(opcode: LECreateConnection.opcode, parameters: [0x60, 0]))
        #expect(try await host.nextEvent() == .commandStatus(HCICommandStatus(status: .invalidParameters, opcode: LECreateConnection.opcode)))
        // Data length and PHY reads/defaults that hosts send during setup are answered.
        #expect(try await host.runRaw(0x202F).returnParameters == [0, 251, 0, 0x48, 0x08, 251, 0, 0x48, 0x08])
        #expect(try await host.runRaw(0x2031, [0, 3, 3]).status == .success)
    }

    @Test func packetsGivenWithoutWaitingAreHandledInOrder() async throws {
        let link = VirtualLink()
        let host = HostProbe(await link.attachController())
        host.controller.receive(HCIReset().packet)
        host.controller.receive(HCIReadBDADDR().packet)
        host.controller.receive(LEReadBufferSize().packet)
        var opcodes: [HCIOpcode] = []
        for _ in 0..<3 {
            if case let .commandComplete(cc) = try await host.nextEvent() { opcodes.append(cc.opcode) }
        }
        #expect(opcodes == [HCIReset.opcode, HCIReadBDADDR.opcode, LEReadBufferSize.opcode])
    }

    @Test func namedLinksAreSharedByName() async {
        let first = await VirtualLink.named("shared-test")
        let again = await VirtualLink.named("shared-test")
        let other = await VirtualLink.named("other-test")
        #expect(first === again)
        #expect(first !== other)
        #expect(first.name == "shared-test")
    }

    @Test func randomAddressCannotChangeWhileAdvertising() async throws {
        let pair = try await LinkPair()
        try await pair.advertiseA()
        let complete = try await pair.a.run(LESetRandomAddress(address: .randomStatic(7)))
        #expect(complete.status == .commandDisallowed)
        let params = try await pair.a.run(LESetAdvertisingParameters())
        #expect(params.status == .commandDisallowed)
    }
}

