import BluetideBase
import BluetideHCI
import BluetideSupport
import Testing
@testable import BluetideVirtual

/// Plays the host of one virtual controller in tests: sends raw HCI packets, reads the
/// controller's packets in order.
final class HostProbe {
    let controller: VirtualController
    private var iterator: AsyncStream<HCIPacket>.Iterator

    init(_ controller: VirtualController) {
        self.controller = controller
        iterator = controller.packets.makeAsyncIterator()
    }

    /// The next packet from the controller (nil once its stream ended). Advertising reports are
    /// skipped unless `reports` is true, since repeated advertising can interleave with anything.
    func next(reports: Bool = false) async -> HCIPacket? {
        while let packet = await iterator.next() {
            if !reports, case let .event(0x3E, parameters) = packet, parameters.first == 0x02 { continue }
            return packet
        }
        return nil
    }

    /// The next decoded event (ACL data is recorded as an issue).
    func nextEvent(reports: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) async throws -> HCIEvent {
        let packet = try #require(await next(reports: reports), "stream ended", sourceLocation: sourceLocation)
        return try #require(try HCIEvent(packet: packet), "not an event: \(packet)", sourceLocation: sourceLocation)
    }

    /// The next LE Meta event.
    func nextLEEvent(reports: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) async throws -> LEMetaEvent {
        let event = try await nextEvent(reports: reports, sourceLocation: sourceLocation)
        guard case let .leMeta(le) = event else {
            Issue.record("expected an LE Meta event, got \(event)", sourceLocation: sourceLocation)
            throw ProbeError.unexpected
        }
        return le
    }

    /// Sends a typed command and returns its Command Complete (checking opcode and credits).
    @discardableResult
    func run<C: HCICommand>(_ command: C, sourceLocation: SourceLocation = #_sourceLocation) async throws -> HCICommandComplete {
        await controller.send(command.packet)
        let event = try await nextEvent(sourceLocation: sourceLocation)
        guard case let .commandComplete(complete) = event else {
            Issue.record("expected Command Complete for \(C.name), got \(event)", sourceLocation: sourceLocation)
            throw ProbeError.unexpected
        }
        #expect(complete.opcode == C.opcode, sourceLocation: sourceLocation)
        #expect(complete.numHCICommandPackets == 1, sourceLocation: sourceLocation)
        return complete
    }

    /// Sends any opcode with raw parameters and returns its Command Complete.
    func runRaw(_ opcode: UInt16, _ parameters: [UInt8] = [], sourceLocation: SourceLocation = #_sourceLocation) async throws -> HCICommandComplete {
        await controller.send(.command(opcode: HCIOpcode(rawValue: opcode), parameters: parameters))
        let event = try await nextEvent(sourceLocation: sourceLocation)
        guard case let .commandComplete(complete) = event, complete.opcode.rawValue == opcode else {
            Issue.record("expected Command Complete for \(opcode), got \(event)", sourceLocation: sourceLocation)
            throw ProbeError.unexpected
        }
        return complete
    }

    /// Sends a command that must succeed and returns its typed return parameters.
    @discardableResult
    func succeed<C: HCICommand>(_ command: C, sourceLocation: SourceLocation = #_sourceLocation) async throws -> C.ReturnParameters {
        let complete = try await run(command, sourceLocation: sourceLocation)
        #expect(complete.status == .success, "\(C.name)", sourceLocation: sourceLocation)
        return try complete.decodeReturn(C.self)
    }

    /// Sends a Command Status command and returns the status.
    func start<C: HCICommand>(_ command: C, sourceLocation: SourceLocation = #_sourceLocation) async throws -> HCIStatus {
        await controller.send(command.packet)
        let event = try await nextEvent(sourceLocation: sourceLocation)
        guard case let .commandStatus(status) = event, status.opcode == C.opcode else {
            Issue.record("expected Command Status for \(C.name), got \(event)", sourceLocation: sourceLocation)
            throw ProbeError.unexpected
        }
        #expect(status.numHCICommandPackets == 1, sourceLocation: sourceLocation)
        return status.status
    }

    /// Proves nothing else is queued: a harmless command's Command Complete comes next.
    func expectNothingPending(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        await controller.send(HCIReadBDADDR().packet)
        let event = try await nextEvent(sourceLocation: sourceLocation)
        guard case let .commandComplete(complete) = event, complete.opcode == HCIReadBDADDR.opcode else {
            Issue.record("unexpected packet: \(event)", sourceLocation: sourceLocation)
            return
        }
    }

    /// Reset, event masks with the LE subevents 0x01-0x07, 0x0C and 0x0D, and a random static address.
    func initialize(random: BluetoothAddress? = nil) async throws {
        try await succeed(HCIReset())
        try await succeed(HCISetEventMask(mask: 0x3FFF_BFFF_FFFF_FFFF))
        try await succeed(LESetEventMask(mask: 0x0000_0000_0000_187F))
        if let random { try await succeed(LESetRandomAddress(address: random)) }
    }
}

enum ProbeError: Error { case unexpected }

/// Two initialized controllers on a fresh link: `a` advertises from a random static address.
struct LinkPair {
    let link: VirtualLink
    let a: HostProbe
    let b: HostProbe
    let addressA = BluetoothAddress.randomStatic(0xA1A1_A1A1_A1A1)
    let addressB = BluetoothAddress.randomStatic(0xB2B2_B2B2_B2B2)

    init() async throws {
        try await self.init(link: VirtualLink(name: "test"))
    }

    /// Two controllers on a link that runs on `clock` (a manual clock: nothing later happens
    /// until the test advances it).
    init(clock: ManualClock, seed: UInt64 = 0x5EED) async throws {
        try await self.init(link: VirtualLink(name: "test", seed: seed, clock: clock))
    }

    private init(link: VirtualLink) async throws {
        self.link = link
        a = HostProbe(await link.attachController())
        b = HostProbe(await link.attachController())
        try await a.initialize(random: addressA)
        try await b.initialize(random: addressB)
    }

    /// `a` advertises connectable from its random address with a name in its data.
    func advertiseA(data: [UInt8] = [2, 1, 6, 5, 9, 0x54, 0x65, 0x73, 0x74], scanResponse: [UInt8] = [3, 0x19, 0x40, 0x03]) async throws {
        try await a.succeed(LESetAdvertisingParameters(ownAddressType: .random))
        try await a.succeed(LESetAdvertisingData(data: data))
        try await a.succeed(LESetScanResponseData(data: scanResponse))
        try await a.succeed(LESetAdvertisingEnable(enable: true))
    }

    /// `b` connects to `a`; returns (handle at a, handle at b).
    func connect() async throws -> (a: UInt16, b: UInt16) {
        try await advertiseA()
        #expect(try await b.start(LECreateConnection(peerAddress: addressA, ownAddressType: .random)) == .success)
        guard case let .connectionComplete(central) = try await b.nextLEEvent(),
              case let .connectionComplete(peripheral) = try await a.nextLEEvent() else {
            Issue.record("no connection complete")
            throw ProbeError.unexpected
        }
        return (peripheral.handle, central.handle)
    }
}
