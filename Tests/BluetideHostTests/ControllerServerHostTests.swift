import BluetideBase
import BluetideHCI
import BluetideTransport
import BluetideVirtual
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideHost

/// Our host stacks as separate TCP hosts of a ``VirtualControllerServer`` (what
/// `bluetide controllers` runs): one shared virtual radio behind H4 over TCP.
@Suite(.timeLimit(.minutes(1))) struct ControllerServerHostTests {
    static let peripheralAddress = BluetoothAddress.randomStatic(0x0000_5E4B_0001)
    static let centralAddress = BluetoothAddress.randomStatic(0x0000_5E4B_0002)

    /// Controllers on two free loopback ports.
    static func server() async throws -> VirtualControllerServer {
        try await VirtualControllerServer.start([.init(host: "127.0.0.1", port: 0), .init(host: "127.0.0.1", port: 0)])
    }

    /// A started stack over `tcp-client` to controller `index` of `server`.
    static func host(
        _ server: VirtualControllerServer, _ index: Int, address: BluetoothAddress, services: [GATTServiceDefinition] = []
    ) async throws -> HostStack {
        let transport = try await Transport.open("tcp-client:127.0.0.1:\(server.endpoints[index].port)")
        let stack = HostStack(
            transport: transport, configuration: .init(randomAddress: address, deviceName: "Bluetide TCP", services: services))
        try await stack.start()
        return stack
    }

    /// Peripheral (advertising ``TestService``) on controller 1, central on controller 2, connected.
    static func connectedPair(_ server: VirtualControllerServer) async throws
        -> (peripheral: HostStack, central: HostStack, link: HostConnection, peer: HostConnection)
    {
        // Both hosts initialise at once (independent controllers): under the parallel suite every
        // HCI round trip waits its turn on the cooperative pool, so one after the other doubles it.
        async let startedPeripheral = host(server, 0, address: peripheralAddress, services: [TestService.definition])
        async let startedCentral = host(server, 1, address: centralAddress)
        let (peripheral, central) = try await (startedPeripheral, startedCentral)
        try await peripheral.startAdvertising(AdvertisingData([.completeLocalName("Bluetide TCP")]), intervalMilliseconds: 20)
        let link = try await central.connect(to: peripheralAddress, timeout: 5)
        var incoming = peripheral.incomingConnections.makeAsyncIterator()
        let peer = try #require(await incoming.next())
        return (peripheral, central, link, peer)
    }

    @Test func twoStacksOverTCPConnectAndExchangeGATTData() async throws {
        let server = try await Self.server()
        defer { Task { await server.close() } }
        let (peripheral, central, link, peer) = try await within(10, "connect over TCP") {
            try await Self.connectedPair(server)
        }
        #expect(try await link.gatt.exchangeMTU() == 517)
        let characteristics = try await link.gatt.discoverDatabase().flatMap(\.characteristics).map(\.characteristic)
        let long = try #require(characteristics.first { $0.uuid == TestService.longValue })
        #expect(try await link.gatt.read(handle: long.valueHandle) == TestService.longBytes)
        let echo = try #require(characteristics.first { $0.uuid == TestService.echo })
        let written = (0..<400).map { UInt8(($0 * 13) % 256) }
        try await link.gatt.writeLong(handle: echo.valueHandle, value: written)
        #expect(try await link.gatt.read(handle: echo.valueHandle) == written)

        let notify = try #require(characteristics.first { $0.uuid == TestService.notify })
        let values = try await link.gatt.subscribe(to: notify)
        let handle = try #require(await peripheral.valueHandle(of: TestService.notify))
        for i in 0..<50 { await peripheral.updateValue([UInt8(i), 0xAA], at: handle) }
        var received: [[UInt8]] = []
        for await value in values {
            received.append(value)
            if received.count == 50 { break }
        }
        // Sorted: HostStack does not guarantee notification order yet (one Task per notification).
        #expect(received.sorted { $0.lexicographicallyPrecedes($1) } == (0..<50).map { [UInt8($0), 0xAA] })

        #expect(try await link.disconnect() == .localHostTerminated)
        #expect(await peer.waitForDisconnection() == .remoteUserTerminated)
        await central.close()
        await peripheral.close()
    }

    @Test func aHostLeavingMidConnectionTimesOutItsPeerAndThePortStartsClean() async throws {
        let server = try await Self.server()
        defer { Task { await server.close() } }
        let (peripheral, central, link, _) = try await within(10, "connect over TCP") {
            try await Self.connectedPair(server)
        }
        var events = server.events.makeAsyncIterator()
        // The peripheral's process goes away (its TCP connection closes) while connected and
        // advertising was on: the central sees a supervision timeout.
        await peripheral.close()
        let reason = await withinGuard { await link.waitForDisconnection() }
        #expect(reason == .connectionTimeout)
        while let event = await events.next() {
            if case .hostDisconnected(controller: 1, _, _) = event { break }
        }

        // A new host on the same port: nothing of the old one is left. Nobody advertises as the
        // old peripheral, so connecting to it times out, and the new host gets no connection.
        let fresh = try await within(10, "second host") {
            try await Self.host(server, 0, address: Self.peripheralAddress, services: [TestService.definition])
        }
        await #expect(throws: HostError.connectTimedOut(Self.peripheralAddress, seconds: 0.5)) {
            try await central.connect(to: Self.peripheralAddress, timeout: 0.5)
        }
        #expect(await fresh.openConnections.isEmpty)
        // Its controller scans (scan parameters accepted) and sees the central once it advertises.
        try await central.startAdvertising(AdvertisingData([.completeLocalName("TCP Central")]), intervalMilliseconds: 20)
        let seen: AdvertisementReport? = try await within(20, "scan on the fresh controller") {
            for await report in try await fresh.scan() where report.data.localName == "TCP Central" { return report }
            return nil
        }
        #expect(seen?.address == Self.centralAddress)
        await fresh.close()
        await central.close()
    }
}

/// A Bumble host (Interop/bumble/peripheral.py) on one of OUR virtual controllers, our stack as
/// the central on the other: Bumble's host speaks to our controllers over TCP.
@Suite(.serialized, .bumbleInterop, .timeLimit(.minutes(1))) struct ControllerServerBumbleTests {
    @Test func bumblePeripheralOnOurControllersServesOurCentral() async throws {
        let server = try await ControllerServerHostTests.server()
        defer { Task { await server.close() } }
        try await withBumble { bumble in
            var options = BumblePeripheralOptions()
            options.notifyCount = 5
            let (peripheralProcess, ready) = try await bumble.startPeripheral(
                port: UInt16(server.endpoints[1].port), options: options, timeout: .seconds(20))
            #expect(ready["address"]?.string == "C6:C5:C4:C3:C2:C1/R")
            let central = try await ControllerServerHostTests.host(
                server, 0, address: ControllerServerHostTests.centralAddress)
            let target = try BluetoothAddress(options.address, type: .random)
            let link = try await within(10, "connect to the Bumble peripheral") {
                try await central.connect(to: target, timeout: 8)
            }
            #expect(try await link.gatt.exchangeMTU() == 517)
            let characteristics = try await link.gatt.discoverDatabase().flatMap(\.characteristics).map(\.characteristic)
            func find(_ uuid: String) throws -> GATTCharacteristic {
                let wanted = try BluetoothUUID(uuid)
                return try #require(characteristics.first { $0.uuid == wanted }, "no \(uuid)")
            }
            #expect(try await link.gatt.read(handle: find(BumbleTestService.longRead).valueHandle) == BumbleTestService.longReadValue)
            let echo = try find(BumbleTestService.echo).valueHandle
            try await link.gatt.write(handle: echo, value: Array("over our controllers".utf8))
            #expect(try await link.gatt.read(handle: echo) == Array("over our controllers".utf8))
            let values = try await link.gatt.subscribe(to: find(BumbleTestService.notify))
            var received: [[UInt8]] = []
            for await value in values {
                received.append(value)
                if received.count == options.notifyCount { break }
            }
            // index u16 LE, total u16 LE. Compared sorted: HostStack hands each notification to
            // the GATT client in its own Task, so their order is not guaranteed (seen: 1,2,3,4,0).
            #expect(received.sorted { $0.lexicographicallyPrecedes($1) } == (0..<5).map { [UInt8($0), 0, 5, 0] })
            #expect(try await link.disconnect() == .localHostTerminated)
            #expect(await peripheralProcess.waitForExit(timeout: .seconds(10)) == 0)
            await central.close()
        }
    }
}
