import BluetideBase
import BluetideHCI
import BluetideSupport
import BluetideTransport
import Testing
@testable import BluetideVirtual

/// The `virtual` transport: batches in and out natively, completions only once the peer's
/// transport was read, and closing as every transport closes.
@Suite(.timeLimit(.minutes(1))) struct VirtualTransportTests {
    static func opcodes(in batch: [HCIPacket]) throws -> [HCIOpcode] {
        try batch.compactMap { packet in
            guard case let .commandComplete(complete)? = try HCIEvent(packet: packet) else { return nil }
            return complete.opcode
        }
    }

    @Test func aBatchSentIsAnsweredInOrderAndReadAsBatches() async throws {
        let transport = VirtualTransport(controller: await VirtualLink(clock: ManualClock()).attachController())
        try await transport.send(batch: [HCIReset().packet, HCIReadBDADDR().packet, LEReadBufferSize().packet])
        var iterator = transport.packetBatches.makeAsyncIterator()
        // Everything queued comes in one batch.
        let batch = try #require(try await iterator.next())
        #expect(try Self.opcodes(in: batch) == [HCIReset.opcode, HCIReadBDADDR.opcode, LEReadBufferSize.opcode])
        await transport.close()
        #expect(try await iterator.next() == nil, "the batches end normally after close()")
        await #expect(throws: TransportError.closed("virtual controller 1")) {
            try await transport.send(HCIReset().packet)
        }
        await #expect(throws: TransportError.closed("virtual controller 1")) {
            try await transport.send(batch: [HCIReset().packet])
        }
        await transport.close()  // twice is fine
    }

    @Test func packetsOneByOneKeepTheOrderToo() async throws {
        let transport = VirtualTransport(controller: await VirtualLink(clock: ManualClock()).attachController())
        for packet in [HCIReset().packet, HCIReadBDADDR().packet] { try await transport.send(packet) }
        var opcodes: [HCIOpcode] = []
        for try await packet in transport.packets {
            opcodes += try Self.opcodes(in: [packet])
            if opcodes.count == 2 { break }
        }
        #expect(opcodes == [HCIReset.opcode, HCIReadBDADDR.opcode])
        await transport.close()
    }

    @Test func closingDetachesTheControllerAndThePeerTimesOut() async throws {
        let link = VirtualLink(clock: ManualClock())
        let peripheral = HostProbe(await link.attachController())
        let central = VirtualTransport(controller: await link.attachController())
        try await peripheral.initialize()
        try await peripheral.succeed(LESetAdvertisingEnable(enable: true))
        try await central.send(batch: [
            HCISetEventMask(mask: 0x3FFF_BFFF_FFFF_FFFF).packet, LESetEventMask(mask: 0x1F).packet,
            LECreateConnection(peerAddress: peripheral.controller.publicAddress).packet,
        ])
        guard case .connectionComplete = try await peripheral.nextLEEvent() else { Issue.record("no connection"); return }
        await central.close()
        guard case let .disconnectionComplete(ended) = try await peripheral.nextEvent() else { Issue.record("no disconnection"); return }
        #expect(ended.reason == .connectionTimeout)
        #expect(await link.controllerCount == 1)
    }
}
