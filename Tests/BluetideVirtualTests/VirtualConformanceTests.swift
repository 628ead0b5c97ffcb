import BluetideBase
import BluetideHCI
import Testing
@testable import BluetideVirtual

/// What Linux (6.1 hci_sync), BlueZ and Bumble need from a controller: every command of their
/// init and connection set-up answered with the exact return parameter length, a Supported
/// Commands bitmap that tells the truth, and link-layer procedures that take connection
/// intervals, Command Status first.
@Suite(.timeLimit(.minutes(1))) struct VirtualConformanceTests {
    /// Sends a command and returns its Command Complete's return parameters (status first).
    private func returned(_ host: HostProbe, _ opcode: UInt16, _ parameters: [UInt8] = [],
                          sourceLocation: SourceLocation = #_sourceLocation) async throws -> [UInt8] {
        try await host.runRaw(opcode, parameters, sourceLocation: sourceLocation).returnParameters
    }

    @Test func linuxInitSequenceForAnLEOnlyControllerGetsFullLengthAnswers() async throws {
        // The commands hci_init1..4_sync and le_init2..4 send to a controller with this
        // bitmap and these features, with the return parameter lengths the kernel checks.
        let host = HostProbe(await VirtualLink().attachController())
        let sequence: [(opcode: UInt16, parameters: [UInt8], length: Int)] = [
            (0x0C03, [], 1),  // Reset
            (0x1003, [], 9),  // Read Local Supported Features
            (0x1001, [], 9),  // Read Local Version Information
            (0x1009, [], 7),  // Read BD_ADDR
            (0x1002, [], 65),  // Read Local Supported Commands
            (0x2003, [], 9),  // LE Read Local Supported Features
            (0x2002, [], 4),  // LE Read Buffer Size
            (0x201C, [], 9),  // LE Read Supported States: 1 < 9 made Linux give up on the controller
            (0x0C01, [0, 0xE0, 0, 2, 0, 0x80, 0, 0x20], 1),  // Set Event Mask (LE-only form)
            (0x2001, [0x5F, 0x1A, 0x02, 0, 0, 0, 0, 0], 1),  // LE Set Event Mask
            (0x204B, [], 3),  // LE Read Transmit Power
            (0x200F, [], 2),  // LE Read Filter Accept List Size
            (0x2010, [], 1),  // LE Clear Filter Accept List
            (0x202F, [], 9),  // LE Read Maximum Data Length
            (0x2023, [], 5),  // LE Read Suggested Default Data Length
            (0x203B, [], 2),  // LE Read Number Of Supported Advertising Sets
            (0x2024, [0xFB, 0, 0x48, 0x08], 1),  // LE Write Suggested Default Data Length
            (0x2031, [0, 3, 3], 1),  // LE Set Default PHY
        ]
        for step in sequence {
            let answer = try await returned(host, step.opcode, step.parameters)
            #expect(answer.first == 0, "opcode \(String(step.opcode, radix: 16)) succeeds")
            #expect(answer.count == step.length, "opcode \(String(step.opcode, radix: 16)) returns \(step.length) bytes")
        }
        // Pinned values: all Core 5.0 states, 16 accept list entries, ±20 dBm.
        #expect(try await returned(host, 0x201C) == [0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x03, 0, 0])
        #expect(try await returned(host, 0x200F) == [0, 16])
        #expect(try await returned(host, 0x204B) == [0, 0xEC, 20])
    }

    @Test func theSupportedCommandsBitmapTellsTheTruth() async throws {
        let host = HostProbe(await VirtualLink().attachController())
        let bitmap = try await host.succeed(HCIReadLocalSupportedCommands()).commands
        // Pinned octets (Core Vol 4 Part E 6.27): 25 = LE Set Event Mask … Set Advertising Data
        // (bit 3 reserved), 26 = all, 27 = all (LE Encrypt is bit 6, LE Rand bit 7), 28 = bits 0-6.
        #expect(Array(bitmap[25...28]) == [0xF7, 0xFF, 0xFF, 0x7F])
        #expect(bitmap[2] == 0x80 && bitmap[10] == 0xE4 && bitmap[38] == 0x80)
        // Every command with its bit set is known (any answer but Unknown HCI Command)…
        let listed = VirtualControllerProfile.commands + VirtualControllerProfile.extendedCommands
            + VirtualControllerProfile.encryptionCommands
        for command in listed where command.opcode != 0x0C35 {  // Host NOCP is never answered, by spec
            #expect(bitmap[command.octet] & (1 << UInt8(command.bit)) != 0)
            await host.controller.send(.command(opcode: HCIOpcode(rawValue: command.opcode), parameters: []))
            let event = try await host.nextEvent()
            switch event {
            case let .commandComplete(cc):
                #expect(cc.opcode.rawValue == command.opcode && cc.status != .unknownCommand, "\(String(command.opcode, radix: 16))")
            case let .commandStatus(cs):
                #expect(cs.opcode.rawValue == command.opcode && cs.status != .unknownCommand, "\(String(command.opcode, radix: 16))")
            default:
                Issue.record("unexpected \(event) for \(String(command.opcode, radix: 16))")
            }
        }
        // …and every set bit is one of them.
        var expected = [UInt8](repeating: 0, count: 64)
        for command in listed { expected[command.octet] |= 1 << UInt8(command.bit) }
        #expect(bitmap == expected)
        // Commands without a bit get Command Status "Unknown HCI Command".
        for opcode: UInt16 in [0x2025, 0x2027, 0x1004, 0x0C14, 0xFC01] {
            await host.controller.send(.command(opcode: HCIOpcode(rawValue: opcode), parameters: []))
            #expect(try await host.nextEvent() == .commandStatus(HCICommandStatus(status: .unknownCommand, opcode: HCIOpcode(rawValue: opcode))))
        }
    }

    @Test func procedureEventsComeAfterCommandStatusAndAConnectionInterval() async throws {
        let pair = try await LinkPair()
        try await pair.advertiseA()
        // A one-second interval: the procedure cannot have ended before the next command.
        let slow = LEConnectionParameters(intervalMin: 800, intervalMax: 800, maxLatency: 0, supervisionTimeout: 600)
        #expect(try await pair.b.start(LECreateConnection(peerAddress: pair.addressA, ownAddressType: .random, connection: slow)) == .success)
        guard case let .connectionComplete(central) = try await pair.b.nextLEEvent(),
              case let .connectionComplete(peripheral) = try await pair.a.nextLEEvent() else { Issue.record("no connection"); return }
        #expect(central.interval == 800)

        #expect(try await pair.b.start(LEReadRemoteFeatures(handle: central.handle)) == .success)
        try await pair.b.expectNothingPending()
        guard case let .readRemoteFeaturesComplete(features) = try await pair.b.nextLEEvent() else { Issue.record("no features"); return }
        #expect(features.handle == central.handle && features.features.contains(.encryption))

        // Version exchange: Read Remote Version Information Complete (0x0C), 8 bytes.
        await pair.b.controller.send(.command(opcode: HCIOpcode(rawValue: 0x041D), parameters: [UInt8(central.handle), 0]))
        #expect(try await pair.b.nextEvent() == .commandStatus(HCICommandStatus(status: .success, opcode: HCIOpcode(rawValue: 0x041D))))
        try await pair.b.expectNothingPending()
        #expect(await pair.b.next() == .event(code: 0x0C, parameters: [0, UInt8(central.handle), 0, 0x0C, 0xFF, 0xFF, 0, 0]))

        #expect(try await pair.b.succeed(LESetDataLength(handle: central.handle, txOctets: 251, txTime: 2120)).handle == central.handle)
        try await pair.b.expectNothingPending()
        guard case .dataLengthChange = try await pair.b.nextLEEvent() else { Issue.record("no data length change"); return }
        guard case .dataLengthChange = try await pair.a.nextLEEvent() else { Issue.record("no data length change"); return }

        #expect(try await pair.b.start(LESetPHY(handle: central.handle, txPHYs: 0b10, rxPHYs: 0b10)) == .success)
        try await pair.b.expectNothingPending()
        #expect(try await pair.b.nextLEEvent() == .phyUpdateComplete(.init(handle: central.handle, txPHY: .le2M, rxPHY: .le2M)))
        #expect(try await pair.a.nextLEEvent() == .phyUpdateComplete(.init(handle: peripheral.handle, txPHY: .le2M, rxPHY: .le2M)))

        let fast = LEConnectionParameters(intervalMin: 24, intervalMax: 24, maxLatency: 0, supervisionTimeout: 72)
        #expect(try await pair.b.start(LEConnectionUpdate(handle: central.handle, connection: fast)) == .success)
        try await pair.b.expectNothingPending()
        #expect(try await pair.b.nextLEEvent() == .connectionUpdateComplete(.init(handle: central.handle, interval: 24, latency: 0, supervisionTimeout: 72)))
    }

    @Test func completionsComeAfterDeliveryAndBufferCreditsAreHonoured() async throws {
        let pair = try await LinkPair()
        let handles = try await pair.connect()
        await pair.link.setLatency(.seconds(1))
        // 16 buffers: the 17th packet sent before any delivery overflows and is dropped.
        for i in 0..<17 {
            await pair.b.controller.send(.acl(handle: handles.b, boundary: .firstFlushable, broadcast: 0, data: [UInt8(i)]))
        }
        #expect(await pair.b.next() == .event(code: 0x1A, parameters: [0x01]), "Data Buffer Overflow, ACL")
        try await pair.b.expectNothingPending()  // nothing delivered yet, so nothing completed
        for i in 0..<16 {
            #expect(await pair.a.next() == .acl(handle: handles.a, boundary: .firstFlushable, broadcast: 0, data: [UInt8(i)]))
        }
        for _ in 0..<16 {
            #expect(try await pair.b.nextEvent() == .numberOfCompletedPackets(.init(entries: [.init(handle: handles.b, completedPackets: 1)])))
        }
    }

    @Test func theFilterAcceptListFiltersInitiating() async throws {
        let pair = try await LinkPair()
        try await pair.advertiseA()
        // Add A (random address type 1), then connect with initiator filter policy 1 and no peer.
        let a = pair.addressA.value
        let entry: [UInt8] = [1] + (0..<6).map { UInt8(truncatingIfNeeded: a >> (8 * UInt64($0))) }
        #expect(try await returned(pair.b, 0x2011, entry) == [0])
        #expect(try await returned(pair.b, 0x2011, [7] + entry.dropFirst()) == [0x12], "address type 7 is invalid")
        let request = LECreateConnection(peerAddress: BluetoothAddress(value: 0), ownAddressType: .random, initiatorFilterPolicy: 1)
        #expect(try await pair.b.start(request) == .success)
        guard case let .connectionComplete(central) = try await pair.b.nextLEEvent() else { Issue.record("no connection"); return }
        #expect(central.peerAddress == pair.addressA)
        #expect(try await returned(pair.b, 0x2012, entry) == [0])
        #expect(try await returned(pair.b, 0x2010) == [0])
    }

    @Test func theScheduleRunsActionsInDueOrderKeepingInsertionOrderForTies() {
        var schedule = LinkSchedule()
        let zero = LinkTime.seconds(3)
        schedule.add(.completed(controller: 1, handle: 3), at: zero + .milliseconds(30))
        schedule.add(.completed(controller: 1, handle: 1), at: zero + .milliseconds(10))
        schedule.add(.completed(controller: 1, handle: 2), at: zero + .milliseconds(10))
        #expect(schedule.nextDeadline == zero + .milliseconds(10))
        #expect(schedule.takeDue(now: zero + .milliseconds(9)).isEmpty)
        #expect(schedule.takeDue(now: zero + .milliseconds(10)) == [.completed(controller: 1, handle: 1), .completed(controller: 1, handle: 2)])
        #expect(schedule.nextDeadline == zero + .milliseconds(30))
        schedule.removeAll { $0 == .completed(controller: 1, handle: 3) }
        #expect(schedule.nextDeadline == nil && schedule.count == 0)
    }
}
