import BluetideBase
import BluetideHCI
import BluetideVirtual
import Testing
@testable import BluetideTransport

/// A raw H4 host over `tcp-client` to a ``VirtualControllerServer`` port: sends commands, reads
/// their Command Complete (skipping advertising reports and other events).
private actor RawHost {
    let transport: TCPClientTransport
    private var iterator: AsyncThrowingStream<HCIPacket, any Error>.Iterator?

    init(port: Int) async throws {
        transport = try await TCPClientTransport.connect(host: "127.0.0.1", port: port)
        iterator = transport.packets.makeAsyncIterator()
    }

    /// The next packet that is not an LE advertising report; nil when the stream ended (normally
    /// or with an error).
    func next() async -> HCIPacket? {
        // One reader at a time: the iterator is taken out while a read is pending.
        guard var reader = iterator else { return nil }
        iterator = nil
        defer { iterator = reader }
        while true {
            guard let packet = try? await reader.next(isolation: self) else { return nil }
            if case let .event(0x3E, parameters) = packet, [0x02, 0x0D].contains(parameters.first) { continue }
            return packet
        }
    }

    /// The next packet or the end of the stream, within 5 s.
    func nextWithin20s() async -> HCIPacket?? {
        await withTaskGroup(of: HCIPacket??.self) { group in
            group.addTask { .some(await self.next()) }
            group.addTask {
                // A hang guard, not a timing check: generous, so a starved test process passes.
                try? await Task.sleep(for: .seconds(20))
                return .none
            }
            let first = await group.next() ?? .none
            group.cancelAll()
            return first
        }
    }

    /// Sends `command` and returns the status byte of its Command Complete.
    func run<C: HCICommand>(_ command: C, sourceLocation: SourceLocation = #_sourceLocation) async throws -> HCICommandComplete {
        try await transport.send(command.packet)
        while true {
            let answer = try #require(await nextWithin20s(), "no answer to \(C.name) within 20 s", sourceLocation: sourceLocation)
            let packet = try #require(answer, "stream ended waiting for \(C.name)", sourceLocation: sourceLocation)
            if case let .commandComplete(complete) = try HCIEvent(packet: packet), complete.opcode == C.opcode {
                return complete
            }
        }
    }

    /// True when the stream ends (the server closed us) within 5 s, skipping packets.
    func endsWithin5s() async -> Bool {
        while true {
            guard let answer = await nextWithin20s() else { return false }
            if answer == nil { return true }
        }
    }
}

@Suite(.timeLimit(.minutes(1))) struct VirtualControllerServerTests {
    static func twoControllers() async throws -> VirtualControllerServer {
        try await VirtualControllerServer.start([
            .init(host: "127.0.0.1", port: 0), .init(host: "127.0.0.1", port: 0),
        ])
    }

    @Test func listenerSpecsAreParsedAndOtherKindsRefused() throws {
        #expect(try VirtualControllerServer.Listener(spec: "tcp-server:_:9000") == .init(host: nil, port: 9000))
        #expect(try VirtualControllerServer.Listener(spec: "tcp-server:127.0.0.1:0") == .init(host: "127.0.0.1", port: 0))
        #expect(VirtualControllerServer.Listener(host: nil, port: 9000).description == "tcp-server:_:9000")
        for bad in ["tcp-client:127.0.0.1:9000", "tcp-server:_:99999", "tcp-server:9000", "virtual", "tcp-server:_:1+snoop:x"] {
            #expect(throws: TransportSpecError.self, "\(bad)") { try VirtualControllerServer.Listener(spec: bad) }
        }
    }

    @Test func eachPortIsAControllerWithItsOwnAddressAndRealPort() async throws {
        let server = try await Self.twoControllers()
        defer { Task { await server.close() } }
        #expect(server.endpoints.map(\.number) == [1, 2])
        #expect(server.endpoints.allSatisfy { $0.port > 0 })
        #expect(server.endpoints[0].port != server.endpoints[1].port)
        for endpoint in server.endpoints {
            let host = try await RawHost(port: endpoint.port)
            _ = try await host.run(HCIReset())
            let complete = try await host.run(HCIReadBDADDR())
            let address = try HCIReadBDADDR.ReturnParameters(parameters: complete.returnParameters).address
            #expect(address.value == endpoint.publicAddress.value)
            #expect(address.value == UInt64(endpoint.number))
            await host.transport.close()
        }
    }

    @Test func aSecondHostOnABusyPortIsRefused() async throws {
        let server = try await Self.twoControllers()
        defer { Task { await server.close() } }
        let port = server.endpoints[0].port
        let first = try await RawHost(port: port)
        _ = try await first.run(HCIReset())
        let second = try await RawHost(port: port)
        #expect(await second.endsWithin5s())
        // The first host is still served.
        #expect(try await first.run(HCIReadBDADDR()).returnParameters.first == 0)
        var events = server.events.makeAsyncIterator()
        guard case .hostConnected(controller: 1, _) = await events.next(),
              case .hostRefused(controller: 1, _) = await events.next()
        else {
            Issue.record("expected a connect then a refusal event")
            return
        }
        await first.transport.close()
        guard case let .hostDisconnected(controller: 1, _, reason) = await events.next() else {
            Issue.record("expected a disconnect event")
            return
        }
        #expect(reason == "host closed the connection")
    }

    @Test func garbageEndsOnlyThatHostAndThePortServesTheNextOne() async throws {
        let server = try await Self.twoControllers()
        defer { Task { await server.close() } }
        let bad = try await RawHost(port: server.endpoints[0].port)
        let good = try await RawHost(port: server.endpoints[1].port)
        _ = try await bad.run(HCIReset())
        _ = try await good.run(HCIReset())
        try await bad.transport.sendRaw([0xFF, 0x00, 0x01])
        #expect(await bad.endsWithin5s())
        // The other controller is unaffected, and the port takes a new host at once.
        #expect(try await good.run(HCIReadBDADDR()).returnParameters.first == 0)
        let next = try await RawHost(port: server.endpoints[0].port)
        #expect(try await next.run(HCIReset()).returnParameters == [0])
        await next.transport.close()
        await good.transport.close()
    }

    @Test func aHalfWrittenPacketDoesNotGarbleTheNextHost() async throws {
        let server = try await Self.twoControllers()
        defer { Task { await server.close() } }
        let port = server.endpoints[0].port
        let dying = try await RawHost(port: port)
        _ = try await dying.run(HCIReset())
        // The first 3 bytes of a 9-byte LE Set Random Address, then the host dies.
        try await dying.transport.sendRaw(Array(LESetRandomAddress(address: .randomStatic(1)).packet.h4Bytes.prefix(3)))
        await dying.transport.close()
        let next = try await RawHost(port: port)
        // Its very first command is framed from its own first byte.
        #expect(try await next.run(HCIReset()).returnParameters == [0])
        #expect(try await next.run(HCIReadBDADDR()).returnParameters.first == 0)
        await next.transport.close()
    }

    @Test func theNextHostGetsAControllerWithoutScanningOrAdvertising() async throws {
        let server = try await Self.twoControllers()
        defer { Task { await server.close() } }
        let port = server.endpoints[0].port
        let first = try await RawHost(port: port)
        _ = try await first.run(HCIReset())
        #expect(try await first.run(LESetScanParameters()).returnParameters == [0])
        #expect(try await first.run(LESetScanEnable(enable: true)).returnParameters == [0])
        #expect(try await first.run(LESetAdvertisingParameters()).returnParameters == [0])
        #expect(try await first.run(LESetAdvertisingEnable(enable: true)).returnParameters == [0])
        // While scanning, new scan parameters are refused (Command Disallowed)...
        #expect(try await first.run(LESetScanParameters()).returnParameters == [0x0C])
        await first.transport.close()
        // ...but the next host's controller is clean: no Reset, no disable needed first.
        let next = try await RawHost(port: port)
        #expect(try await next.run(LESetScanParameters()).returnParameters == [0])
        #expect(try await next.run(LESetAdvertisingParameters()).returnParameters == [0])
        await next.transport.close()
    }

    @Test func closeEndsEveryHostAndStopsListening() async throws {
        let server = try await Self.twoControllers()
        let port = server.endpoints[1].port
        let host = try await RawHost(port: port)
        _ = try await host.run(HCIReset())
        await server.close()
        #expect(await host.endsWithin5s())
        await #expect(throws: TransportError.self) { _ = try await TCPClientTransport.connect(host: "127.0.0.1", port: port) }
        #expect(await server.link.controllerCount == 0)
    }
}
