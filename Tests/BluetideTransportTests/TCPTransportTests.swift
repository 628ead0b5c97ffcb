import BluetideHCI
import Glibc
import Testing
@testable import BluetideTransport

@Suite struct TCPTransportTests {
    static let resetComplete = HCIPacket.event(code: 0x0E, parameters: [0x01, 0x03, 0x0C, 0x00])
    static let completedPackets = HCIPacket.event(code: 0x13, parameters: [0x01, 0x01, 0x00, 0x01, 0x00])
    static let bigACL = HCIPacket.acl(
        handle: 0x0001, boundary: .firstFlushable, broadcast: 0,
        data: [0x64, 0x00, 0x04, 0x00] + (0..<100).map { UInt8($0) })
    static let longEvent = HCIPacket.event(code: 0x3E, parameters: (0..<255).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    /// A listening server and a client connected to it over loopback.
    static func connectedPair() async throws -> (TCPServerTransport, TCPClientTransport) {
        let server = try await TCPServerTransport.listen(host: "127.0.0.1", port: 0)
        #expect(server.localPort > 0)
        let client = try await TCPClientTransport.connect(host: "127.0.0.1", port: server.localPort)
        try await server.waitForClient()
        return (server, client)
    }

    /// Both ends turn Nagle's algorithm off (TCP_NODELAY), read back from the sockets.
    @Test func bothEndsSetTCPNoDelay() async throws {
        let (server, client) = try await Self.connectedPair()
        #expect(try await client.isNoDelayEnabled())
        #expect(try await server.isClientNoDelayEnabled() == true)
        await client.close()
        await server.close()
    }

    @Test func loopbackCarriesPacketsSplitIntoOneByteWrites() async throws {
        let (server, client) = try await Self.connectedPair()
        let toHost = [Self.resetComplete, Self.bigACL, Self.completedPackets, Self.longEvent]
        for packet in toHost {
            for byte in packet.h4Bytes { try await server.sendRaw([byte]) }
        }
        var fromController = client.packets.makeAsyncIterator()
        for expected in toHost {
            #expect(try await fromController.next() == expected)
        }

        let toController: [HCIPacket] = [
            .command(opcode: HCIOpcode(rawValue: 0x0C03), parameters: []),
            .command(opcode: HCIOpcode(rawValue: 0x2005), parameters: [0xC1, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6]),
            Self.bigACL,
        ]
        for packet in toController {
            for byte in packet.h4Bytes { try await client.sendRaw([byte]) }
        }
        try await client.send(toController[0])
        var fromHost = server.packets.makeAsyncIterator()
        for expected in toController + [toController[0]] {
            #expect(try await fromHost.next() == expected)
        }

        // The client leaving ends the server's stream with an error naming it.
        await client.close()
        do {
            _ = try await fromHost.next()
            Issue.record("server stream did not end")
        } catch let error as TransportError {
            guard case let .closedByPeer(what) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(what.hasPrefix("tcp-server:127.0.0.1:0 (client "))
        }
        // The listener closed with its client: waiting for another one fails at once.
        await #expect(throws: TransportError.closed("tcp-server:127.0.0.1:0")) { try await server.waitForClient() }
        // The client's own stream finished normally.
        #expect(try await fromController.next() == nil)
        await #expect(throws: TransportError.closed("tcp-client:127.0.0.1:\(server.localPort)")) {
            try await client.send(Self.resetComplete)
        }
        await server.close()
    }

    @Test func garbageEndsTheStreamWithTheFramingError() async throws {
        let (server, client) = try await Self.connectedPair()
        // A valid event, then an unknown packet type 0xFF at stream byte 7, then more bytes.
        let valid = Self.resetComplete.h4Bytes
        for byte in valid { try await server.sendRaw([byte]) }
        try await server.sendRaw([0xFF, 0x01, 0x02, 0x04, 0x0E])
        var packets = client.packets.makeAsyncIterator()
        let first = try await packets.next()
        #expect(first == Self.resetComplete)
        let ended1 = await nextError(&packets)
        #expect(isFramingError(ended1, type: 0xFF, offset: 7), "\(String(describing: ended1))")
        await client.close()
        await server.close()
    }

    @Test func garbageInTheSameReadAsAPacketStillDeliversThePacketFirst() async throws {
        let (server, client) = try await Self.connectedPair()
        try await server.sendRaw(Self.completedPackets.h4Bytes + [0x00])
        var packets = client.packets.makeAsyncIterator()
        #expect(try await packets.next() == Self.completedPackets)
        let ended2 = await nextError(&packets)
        #expect(isFramingError(ended2, type: 0x00, offset: 8))
        await client.close()
        await server.close()
    }

    @Test func serverTakesOneClientAtATime() async throws {
        let (server, client) = try await Self.connectedPair()
        let second = try await TCPClientTransport.connect(host: "127.0.0.1", port: server.localPort)
        var secondPackets = second.packets.makeAsyncIterator()
        let ended3 = await nextError(&secondPackets)
        #expect(ended3 as? TransportError == TransportError.closedByPeer("tcp-client:127.0.0.1:\(server.localPort)"))
        // The first client still works.
        try await server.send(Self.resetComplete)
        var first = client.packets.makeAsyncIterator()
        #expect(try await first.next() == Self.resetComplete)
        await second.close()
        await client.close()
        await server.close()
    }

    @Test func connectionRefusedNamesTheAddress() async throws {
        // A port held by a socket that is bound but not listening refuses connections, and no
        // other test can take it meanwhile (a listener closed first let a parallel test's
        // server take its port, and the connection then succeeded).
        let held = try #require(BoundPort())
        defer { held.close() }
        let port = held.port
        do {
            _ = try await Transport.open("tcp-client:127.0.0.1:\(port)")
            Issue.record("connected to a closed port")
        } catch let error as TransportError {
            guard case let .openFailed(text) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(text.hasPrefix("tcp-client:127.0.0.1:\(port): cannot connect"))
            #expect(text.contains("bumble.apps.controllers"))
        }
    }

    @Test func portInUseIsReported() async throws {
        let first = try await TCPServerTransport.listen(host: "127.0.0.1", port: 0)
        do {
            let second = try await TCPServerTransport.listen(host: "127.0.0.1", port: first.localPort)
            await second.close()
            Issue.record("bound a port twice")
        } catch let error as TransportError {
            #expect(error.description.hasPrefix("tcp-server:127.0.0.1:\(first.localPort): cannot listen"))
            #expect(error.description.contains("already in use"))
        }
        await first.close()
    }

    @Test func sendingWithoutAClientSaysSo() async throws {
        let server = try await TCPServerTransport.listen(host: nil, port: 0)
        do {
            try await server.send(Self.resetComplete)
            Issue.record("sent to nobody")
        } catch let error as TransportError {
            #expect(error.description.contains("no controller has connected yet"))
        }
        await server.close()
        await #expect(throws: TransportError.closed("tcp-server:_:0")) { try await server.waitForClient() }
    }

    @Test func openTCPServerWaitsForItsClient() async throws {
        // Find a free port, then open the server through the generic entry point.
        let probe = try await TCPServerTransport.listen(host: "127.0.0.1", port: 0)
        let port = probe.localPort
        await probe.close()
        async let opened = Transport.open("tcp-server:127.0.0.1:\(port)")
        var client: TCPClientTransport?
        for _ in 0..<5000 where client == nil {
            client = try? await TCPClientTransport.connect(host: "127.0.0.1", port: port)
            if client == nil { await Task.yield() }
        }
        let server = try await opened
        let connected = try #require(client)
        try await server.send(Self.resetComplete)
        var packets = connected.packets.makeAsyncIterator()
        #expect(try await packets.next() == Self.resetComplete)
        await connected.close()
        await server.close()
    }
}

/// A TCP socket bound to a free port on 127.0.0.1 that never listens: connecting to it is
/// refused, and the port stays taken until ``close()``.
private struct BoundPort {
    let descriptor: Int32
    let port: Int

    init?() {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(socketDescriptor, socketAddress, length) == 0 && getsockname(socketDescriptor, socketAddress, &length) == 0
            }
        }
        guard bound else { Glibc.close(socketDescriptor); return nil }
        descriptor = socketDescriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { Glibc.close(descriptor) }
}
