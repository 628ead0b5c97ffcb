import BluetideHCI
import Foundation
import NIOCore
import Testing
@testable import BluetideTransport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts the flushes that reach the socket end of a channel's pipeline.
private final class FlushCounter: ChannelOutboundHandler, @unchecked Sendable {
    // @unchecked: NIO runs a handler on its channel's event loop only; `count` is read after
    // `loop.submit`, which orders the read after every flush.
    typealias OutboundIn = ByteBuffer
    var count = 0
    func flush(context: ChannelHandlerContext) {
        count += 1
        context.flush()
    }
}

/// Batches both ways: what one read yields is one batch, a batch sent is one flush or one write.
@Suite struct BatchingTests {
    static let reset = HCIPacket.command(opcode: HCIOpcode(rawValue: 0x0C03), parameters: [])
    static let resetComplete = HCIPacket.event(code: 0x0E, parameters: [0x01, 0x03, 0x0C, 0x00])
    static let completed = HCIPacket.event(code: 0x13, parameters: [0x01, 0x01, 0x00, 0x01, 0x00])
    static func acl(_ n: Int, size: Int = 27) -> HCIPacket {
        .acl(handle: 0x0040, boundary: n == 0 ? .firstFlushable : .continuing, broadcast: 0,
             data: (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ n) })
    }

    static func connectedPair() async throws -> (TCPServerTransport, TCPClientTransport) {
        let server = try await TCPServerTransport.listen(host: "127.0.0.1", port: 0)
        let client = try await TCPClientTransport.connect(host: "127.0.0.1", port: server.localPort)
        try await server.waitForClient()
        return (server, client)
    }

    /// Collects batches from `iterator` until `count` packets have come; returns the batches.
    static func batches(
        _ iterator: inout AsyncThrowingStream<[HCIPacket], any Error>.Iterator, totalling count: Int
    ) async throws -> [[HCIPacket]] {
        var batches: [[HCIPacket]] = []
        while batches.reduce(0, { $0 + $1.count }) < count {
            guard let batch = try await iterator.next() else { break }
            batches.append(batch)
        }
        return batches
    }

    @Test func severalPacketsInOneTCPSegmentArriveAsOneBatch() async throws {
        let (server, client) = try await Self.connectedPair()
        let packets = [Self.resetComplete, Self.acl(0), Self.completed]
        // One small write on loopback: one segment, one read at the client.
        try await server.sendRaw(packets.flatMap(\.h4Bytes))
        var batches = client.packetBatches.makeAsyncIterator()
        #expect(try await batches.next() == packets)
        await client.close()
        await server.close()
    }

    @Test func aBatchSentIsOneFlush() async throws {
        let (server, client) = try await Self.connectedPair()
        let counter = FlushCounter()
        try await client.channel.pipeline.addHandler(counter, position: .first).get()
        let packets = (0..<20).map { Self.acl($0, size: 251) }
        try await client.send(batch: packets)
        var atServer = server.packetBatches.makeAsyncIterator()
        let received = try await Self.batches(&atServer, totalling: packets.count)
        #expect(received.flatMap { $0 } == packets)
        let flushes = try await client.channel.eventLoop.submit { counter.count }.get()
        #expect(flushes == 1)
        #expect(client.flushCount == 1)
        await client.close()
        await server.close()
    }

    @Test func serverSendsABatchAsOneFlushToo() async throws {
        let (server, client) = try await Self.connectedPair()
        let packets = [Self.resetComplete] + (0..<8).map { Self.acl($0) }
        try await server.send(batch: packets)
        var atClient = client.packetBatches.makeAsyncIterator()
        let received = try await Self.batches(&atClient, totalling: packets.count)
        #expect(received.flatMap { $0 } == packets)
        #expect(server.flushCount == 1)
        await client.close()
        await server.close()
    }

    @Test func aPacketSplitAcrossReadsIsReassembled() async throws {
        let inbox = InboundPackets(name: "test")
        var batches = inbox.packetBatches.makeAsyncIterator()
        var receiver = H4PacketReceiver(inbox: inbox)
        let bytes = Self.resetComplete.h4Bytes + Self.acl(1).h4Bytes + Self.completed.h4Bytes
        // Read 1 ends inside the ACL header, read 2 inside the ACL payload, read 3 completes it all.
        let accepted = [receiver.receive(bytes[0..<9]), receiver.receive(bytes[9..<20]), receiver.receive(bytes[20...])]
        #expect(accepted == [true, true, true])
        receiver.finish()
        #expect(try await batches.next() == [Self.resetComplete])
        #expect(try await batches.next() == [Self.acl(1), Self.completed])
        #expect(try await batches.next() == nil)
    }

    @Test func framerGivesTheSamePacketsWhereverTheReadsSplit() throws {
        let packets = [Self.reset, Self.resetComplete, Self.acl(0, size: 0), Self.acl(2, size: 300),
                       .iso(header: 0x1001, data: [1, 2, 3]), .sco(handle: 3, data: [9]), Self.completed]
        let bytes = packets.flatMap(\.h4Bytes)
        for first in 0...bytes.count {
            for second in stride(from: first, through: bytes.count, by: 7) {
                var framer = H4Framer()
                var out: [HCIPacket] = []
                try framer.append(bytes[..<first], into: &out)
                try framer.append(bytes[first..<second], into: &out)
                try framer.append(bytes[second...], into: &out)
                #expect(out == packets, "split at \(first) and \(second)")
                #expect(framer.pendingByteCount == 0)
            }
        }
    }

    @Test func closedTransportsThrowOnSendBatch() async throws {
        let (server, client) = try await Self.connectedPair()
        await client.close()
        await #expect(throws: TransportError.closed("tcp-client:127.0.0.1:\(server.localPort)")) {
            try await client.send(batch: [Self.reset])
        }
        await server.close()
        await #expect(throws: TransportError.closed("tcp-server:127.0.0.1:0")) {
            try await server.send(batch: [Self.resetComplete])
        }
        let (host, controller) = PipeTransport.makePair()
        await host.close()
        await #expect(throws: TransportError.closed("pipe host end")) { try await host.send(batch: [Self.reset]) }
        await #expect(throws: TransportError.closed("pipe controller end")) {
            try await controller.send(batch: [Self.resetComplete])
        }
    }

    @Test func aBatchOnAByteStreamIsOneWriteAndOnAPacketSocketOneWritePerPacket() async throws {
        let packets = [Self.reset, Self.acl(0), Self.acl(1)]
        for packetPerWrite in [false, true] {
            // SOCK_SEQPACKET keeps write boundaries: each read returns exactly one write.
            var ends: [Int32] = [-1, -1]
            #if os(Linux)
            let type = Int32(SOCK_SEQPACKET.rawValue)
            #else
            let type = SOCK_SEQPACKET
            #endif
            try #require(socketpair(AF_UNIX, type, 0, &ends) == 0)
            let transport = try FileDescriptorTransport(fd: ends[0], name: "test-fd", packetPerWrite: packetPerWrite)
            try await transport.send(batch: packets)
            var writes: [[UInt8]] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while writes.flatMap({ $0 }).count < packets.flatMap(\.h4Bytes).count {
                let n = read(ends[1], &buffer, buffer.count)
                try #require(n > 0)
                writes.append(Array(buffer[0..<n]))
            }
            #expect(writes == (packetPerWrite ? packets.map(\.h4Bytes) : [packets.flatMap(\.h4Bytes)]))
            await transport.close()
            await #expect(throws: TransportError.closed("test-fd")) { try await transport.send(batch: packets) }
            close(ends[1])
        }
    }

    @Test func packetsWaitingOnAPacketSocketArriveAsOneBatch() async throws {
        var ends: [Int32] = [-1, -1]
        #if os(Linux)
        let type = Int32(SOCK_SEQPACKET.rawValue)
        #else
        let type = SOCK_SEQPACKET
        #endif
        try #require(socketpair(AF_UNIX, type, 0, &ends) == 0)
        let packets = [Self.resetComplete, Self.acl(0), Self.completed]
        // All three are waiting before the transport's reader starts.
        for packet in packets {
            let bytes = packet.h4Bytes
            #expect(write(ends[1], bytes, bytes.count) == bytes.count)
        }
        let transport = try FileDescriptorTransport(fd: ends[0], name: "test-fd", packetPerWrite: true)
        var batches = transport.packetBatches.makeAsyncIterator()
        #expect(try await batches.next() == packets)
        await transport.close()
        close(ends[1])
    }

    @Test func snoopingPassesBatchesThroughAndRecordsThem() async throws {
        let path = NSTemporaryDirectory() + "batch-\(UUID().uuidString).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (host, controller) = PipeTransport.makePair()
        let snooped = SnoopingTransport(wrapping: host, writer: try BTSnoopFileWriter(path: path))
        let down = [Self.reset, Self.acl(0)]
        let up = [Self.resetComplete, Self.acl(1), Self.completed]
        try await snooped.send(batch: down)
        var atController = controller.packetBatches.makeAsyncIterator()
        #expect(try await atController.next() == down)
        try await controller.send(batch: up)
        var atHost = snooped.packetBatches.makeAsyncIterator()
        #expect(try await atHost.next() == up)
        await snooped.close()
        let records = try BTSnoopReader.records(atPath: path)
        #expect(records.map(\.packet) == down + up)
        #expect(records.map(\.direction) == [.sent, .sent, .received, .received, .received])
        await #expect(throws: TransportError.self) { try await snooped.send(batch: down) }
    }

    @Test func packetsReadBeforeAnyReaderAreKeptAndTheSecondFormIsRefused() async throws {
        let inbox = InboundPackets(name: "test")
        #expect(inbox.deliver([Self.resetComplete, Self.completed]))
        #expect(inbox.deliver([Self.acl(0)]))
        inbox.finish(throwing: TransportError.closedByPeer("test"))
        #expect(!inbox.deliver([Self.acl(1)]))
        var packets = inbox.packets.makeAsyncIterator()
        #expect(try await packets.next() == Self.resetComplete)
        #expect(try await packets.next() == Self.completed)
        #expect(try await packets.next() == Self.acl(0))
        await #expect(throws: TransportError.closedByPeer("test")) { _ = try await packets.next() }
        var batches = inbox.packetBatches.makeAsyncIterator()
        await #expect(throws: TransportError.self) { _ = try await batches.next() }
    }

    @Test func h4EncodingMatchesH4BytesForEveryKind() throws {
        let packets: [HCIPacket] = [
            Self.reset, .command(opcode: HCIOpcode(rawValue: 0x2008), parameters: Array(repeating: 7, count: 255)),
            Self.resetComplete, .event(code: 0x3E, parameters: Array(repeating: 1, count: 255)),
            Self.acl(0, size: 0), .acl(handle: 0x0FFF, boundary: .complete, broadcast: 3, data: [1, 2]),
            .sco(handle: 0x0102, data: Array(repeating: 5, count: 255)), .iso(header: 0xABCD, data: Array(repeating: 6, count: 0x3FFF)),
        ]
        for packet in packets {
            var bytes: [UInt8] = []
            bytes.appendH4(packet)
            #expect(bytes == packet.h4Bytes)
            #expect(packet.h4Count == packet.h4Bytes.count)
            var buffer = ByteBufferAllocator().buffer(capacity: 0)
            buffer.writeH4(packet)
            #expect(Array(buffer.readableBytesView) == packet.h4Bytes)
        }
    }

    @Test func anOversizedPayloadIsCutToWhatItsLengthFieldCanSay() throws {
        // The header's length always matches the bytes that follow, so the stream stays framed.
        let oversized: [(HCIPacket, HCIPacket)] = [
            (.command(opcode: HCIOpcode(rawValue: 0x2008), parameters: Array(repeating: 7, count: 300)),
             .command(opcode: HCIOpcode(rawValue: 0x2008), parameters: Array(repeating: 7, count: 255))),
            (.event(code: 0x3E, parameters: Array(repeating: 1, count: 256)), .event(code: 0x3E, parameters: Array(repeating: 1, count: 255))),
            (.sco(handle: 2, data: Array(repeating: 5, count: 260)), .sco(handle: 2, data: Array(repeating: 5, count: 255))),
            (.iso(header: 0xABCD, data: Array(repeating: 6, count: 0x4001)), .iso(header: 0xABCD, data: Array(repeating: 6, count: 0x3FFF))),
        ]
        for (packet, cut) in oversized {
            var bytes: [UInt8] = []
            bytes.appendH4(packet)
            bytes.appendH4(Self.resetComplete)
            var framer = H4Framer()
            #expect(try framer.append(bytes) == [cut, Self.resetComplete])
            #expect(packet.h4Count == cut.h4Bytes.count)
        }
    }
}
