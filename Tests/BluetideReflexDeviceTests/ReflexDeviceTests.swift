import Bluetide
import BluetideGPIO
import BluetideHost
import BluetideProfiles
import BluetideSupport
@testable import BluetideReflexDevice
import BluetideTransport
import Foundation
import Testing

/// The device end to end over a virtual link: a bare HostStack plays the coach; the device runs
/// the simulated GPIO backend. The link, both stacks, the device and its simulated athlete run
/// on one manual clock in virtual time (``ManualClock/advancing(step:yields:_:)``), so a
/// sequence's steps, reaction times and gaps pass the same way however busy the machine is.
@Suite struct ReflexDeviceTests {
    /// A device and a connected coach on a fresh link.
    struct World {
        let linkName: String
        let device: ReflexDevice<ManualClock>
        let deviceStack: HostStack
        let coachStack: HostStack
        let link: HostConnection
        let handles: [BluetoothUUID: UInt16]
        let events: Mailbox<ReflexDeviceEvent>

        func characteristic(_ uuid: BluetoothUUID) -> UInt16 { handles[uuid] ?? 0 }

        func close() async {
            await device.stop()
            await coachStack.close()
            await deviceStack.close()
        }
    }

    static func configuration(miss: Double = 0, wrong: Double = 0) -> GPIOConfiguration {
        var configuration = GPIOConfiguration.reflexDefault
        configuration.backend = .sim
        configuration.simulationSeed = 7
        configuration.athlete.missProbability = miss
        configuration.athlete.wrongTargetProbability = wrong
        return configuration
    }

    /// Runs `body` in virtual time on a fresh manual clock (under the hang guards of its steps).
    static func inVirtualTime(_ body: @escaping @Sendable (ManualClock) async throws -> Void) async throws {
        let clock = ManualClock()
        try await TestTime.within(120, "the test in virtual time") { try await clock.advancing { try await body(clock) } }
    }

    static func start(on clock: ManualClock, _ configuration: GPIOConfiguration = configuration(), name: String? = nil) async throws -> World {
        let linkName = "reflex-device-\(UUID().uuidString)"
        await Bluetooth.prepareVirtualLink(named: linkName, clock: BluetideClock(clock))
        let address = BluetoothAddress.randomStatic(0x00C0_FFEE_1A2B)
        var deviceConfiguration = Bluetooth.Configuration(address: address, deviceName: "Reflex", commandTimeout: .seconds(30))
        deviceConfiguration.clock = BluetideClock(clock)
        let deviceBluetooth = try await Bluetooth.start(
            on: await VirtualTransport.attach(toLinkNamed: linkName), spec: "virtual:\(linkName)", configuration: deviceConfiguration)
        let deviceStack = deviceBluetooth.stack
        let device = try await ReflexDevice.start(
            bluetooth: deviceBluetooth, options: ReflexDeviceOptions(configuration: configuration, name: name), clock: clock)
        let events = Mailbox(device.events)
        let coachStack = HostStack(
            transport: await VirtualTransport.attach(toLinkNamed: linkName),
            configuration: .init(randomAddress: .randomStatic(0x0C0A_C400_0001), commandTimeout: 30), clock: clock)
        try await coachStack.start()
        let link = try await TestTime.within(20, "connect") { try await coachStack.connect(to: address, timeout: 5) }
        let services = try await link.gatt.discoverDatabase()
        let punch = try #require(services.first { $0.service.uuid == PunchUUID.service })
        var handles: [BluetoothUUID: UInt16] = [:]
        for c in punch.characteristics { handles[c.characteristic.uuid] = c.characteristic.valueHandle }
        return World(linkName: linkName, device: device, deviceStack: deviceStack, coachStack: coachStack, link: link, handles: handles, events: events)
    }

    static func subscribe(_ world: World, _ uuid: BluetoothUUID) async throws -> Mailbox<[UInt8]> {
        let services = try await world.link.gatt.discoverDatabase()
        let punch = try #require(services.first { $0.service.uuid == PunchUUID.service })
        let c = try #require(punch.characteristics.first { $0.characteristic.uuid == uuid })
        return Mailbox(try await world.link.gatt.subscribe(to: c.characteristic))
    }

    static func times(_ ms: [UInt16]) -> [UInt8] { ms.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } }

    /// Values until one satisfies `done` (inclusive), at most 15 s (a loaded machine).
    static func until<T: Sendable>(_ box: Mailbox<T>, _ what: String, _ done: @escaping @Sendable (T) -> Bool) async throws -> [T] {
        try await TestTime.within(15, what) {
            var out: [T] = []
            while !Task.isCancelled {
                let next = await box.take(1)
                guard let value = next.first else { break }
                out.append(value)
                if done(value) { break }
            }
            return out
        }
    }

    @Test func advertisesItsNameAndTheService() async throws {
        try await Self.inVirtualTime { clock in
            let world = try await Self.start(on: clock)
            #expect(world.device.name == "Reflex-1A2B")
            #expect(ReflexDevice<ManualClock>.defaultName(for: try BluetoothAddress("C6:C5:C4:C3:C2:C1", type: .random)) == "Reflex-C2C1")
            #expect(world.handles.count == 4)
            let started = await world.events.take(2)
            #expect(started.first == .started(name: "Reflex-1A2B", address: .randomStatic(0x00C0_FFEE_1A2B)))
            #expect(started.dropFirst().first == .coachConnected(.randomStatic(0x0C0A_C400_0001)))
            // Still advertising with a coach connected: a scanner sees the name and the service.
            let scanner = HostStack(
                transport: await VirtualTransport.attach(toLinkNamed: world.linkName),
                configuration: .init(randomAddress: .randomStatic(0x05CA_0000_0001)), clock: clock)
            try await scanner.start()
            let reports = try await scanner.scan(active: true)
            let seen = try await TestTime.within(20, "advertisement with name and service") { () -> AdvertisingData? in
                var merged: AdvertisingData?
                for await report in reports where report.address == world.device.address {
                    merged = merged.map { $0.merged(withScanResponse: report.data) } ?? report.data
                    if let merged, merged.localName != nil, !merged.serviceUUIDs.isEmpty { return merged }
                }
                return nil
            }
            #expect(seen?.localName == "Reflex-1A2B")
            #expect(seen?.serviceUUIDs.contains(PunchUUID.service) == true)
            await scanner.close()
            await world.close()

            // The configured name wins over the address, and is advertised.
            var configuration = Self.configuration()
            configuration.deviceName = "Reflex-Gym"
            let named = try await Self.start(on: clock, configuration)
            #expect(named.device.name == "Reflex-Gym")
            await named.close()
        }
    }

    @Test func aCoachRunsASequenceAndGetsOneResponsePerStep() async throws {
        try await Self.inVirtualTime { clock in
            let world = try await Self.start(on: clock, Self.configuration(miss: 0.2, wrong: 0.2))
            let responses = try await Self.subscribe(world, PunchUUID.response)
            let statuses = try await Self.subscribe(world, PunchUUID.control)
            let targets: [UInt8] = [0, 1, 2, 3, 4, 5, 3, 1]
            try await world.link.gatt.write(handle: world.characteristic(PunchUUID.sequence), value: targets)
            try await world.link.gatt.write(handle: world.characteristic(PunchUUID.timeSequence), value: Self.times(Array(repeating: 1000, count: 8)))
            #expect(try await world.link.gatt.read(handle: world.characteristic(PunchUUID.sequence)) == targets)
            try await world.link.gatt.write(handle: world.characteristic(PunchUUID.control), value: [0x01])

            let status = try await Self.until(statuses, "finished") { $0.first == 0x12 }
            #expect(try status.map { try PunchControlStatus(exactly: $0) } == [.armed, .running, .finished(stepsDone: 8)])
            let steps = try (await responses.take(8)).map { try PunchResponse(exactly: $0) }
            #expect(steps.map(\.step) == (0..<8).map { UInt16($0) })
            #expect(steps.map(\.target) == targets)
            for step in steps {
                #expect(step.reactionTimeMilliseconds <= 1000)
                if !step.hit { #expect(step.reactionTimeMilliseconds == 1000) }
            }
            for target in GPIOConfiguration.reflexDefault.targets {
                #expect(await world.device.simulatedChip?.outputValue(of: target.ledLine) == false)
            }
            // Every step, start and finish reached the device's log too.
            let log = try await Self.until(world.events, "finish event") { $0 == .status(.finished(stepsDone: 8)) }
            #expect(log.filter { if case .response = $0 { true } else { false } }.count == 8)
            #expect(log.contains(.sequenceReceived(try PunchSequence(targets: targets))))
            #expect(log.contains(.command(.start)))
            await world.close()
        }
    }

    @Test func invalidSequencesAreRefusedWith0x80AndTheOldOnesKept() async throws {
        try await Self.inVirtualTime { clock in
            let world = try await Self.start(on: clock)
            let sequence = world.characteristic(PunchUUID.sequence)
            let times = world.characteristic(PunchUUID.timeSequence)
            #expect(try await world.link.gatt.read(handle: sequence) == [])  // nothing before the first write
            try await world.link.gatt.write(handle: sequence, value: [0, 1, 2])
            try await world.link.gatt.write(handle: times, value: Self.times([500, 600, 700]))
            for bad: [UInt8] in [[0, 6], [9], []] {
                await #expect(throws: GATTClientError.att(ATTErrorCode(0x80), handle: sequence, request: .writeRequest)) {
                    try await world.link.gatt.write(handle: sequence, value: bad)
                }
            }
            for bad: [UInt8] in [[0x00, 0x00], [0x61, 0xEA], [0xE8], [0xE8, 0x03, 0x01]] {
                await #expect(throws: GATTClientError.att(ATTErrorCode(0x80), handle: times, request: .writeRequest)) {
                    try await world.link.gatt.write(handle: times, value: bad)
                }
            }
            #expect(try await world.link.gatt.read(handle: sequence) == [0, 1, 2])
            #expect(try await world.link.gatt.read(handle: times) == Self.times([500, 600, 700]))
            // Statuses may not be written on punchControl, nor unknown commands.
            for bad: [UInt8] in [[0x11], [0x07], [0x03]] {
                await #expect(throws: (any Error).self) {
                    try await world.link.gatt.write(handle: world.characteristic(PunchUUID.control), value: bad)
                }
            }
            await world.close()
        }
    }

    @Test func longWritesCarryLongSequences() async throws {
        try await Self.inVirtualTime { clock in
            let world = try await Self.start(on: clock)
            let sequence = world.characteristic(PunchUUID.sequence)
            let times = world.characteristic(PunchUUID.timeSequence)
            let targets = (0..<256).map { UInt8($0 % 6) }
            try await world.link.gatt.write(handle: sequence, value: targets)  // MTU 23: prepared writes
            #expect(try await world.link.gatt.read(handle: sequence) == targets)
            let ms = (0..<256).map { UInt16(100 + $0) }
            try await world.link.gatt.write(handle: times, value: Self.times(ms))
            #expect(try await world.link.gatt.read(handle: times) == Self.times(ms))
            // 257 steps: more than a program holds (PunchSequence.maxSteps), refused with 0x80;
            // the old value stays.
            await #expect(throws: (any Error).self) {
                try await world.link.gatt.write(handle: sequence, value: targets + [0])
            }
            #expect(try await world.link.gatt.read(handle: sequence) == targets)
            await world.close()
        }
    }

    @Test func startWithLengthsDifferingNotifiesE001() async throws {
        try await Self.inVirtualTime { clock in
            let world = try await Self.start(on: clock)
            let statuses = try await Self.subscribe(world, PunchUUID.control)
            try await world.link.gatt.write(handle: world.characteristic(PunchUUID.control), value: [0x01])
            try await world.link.gatt.write(handle: world.characteristic(PunchUUID.sequence), value: [0, 1, 2])
            try await world.link.gatt.write(handle: world.characteristic(PunchUUID.timeSequence), value: Self.times([500, 600]))
            try await world.link.gatt.write(handle: world.characteristic(PunchUUID.control), value: [0x03, 0x02])
            let got = try await TestTime.within(20, "two errors") { await statuses.take(2) }
            #expect(got == [[0xE0, 0x01], [0xE0, 0x01]])
            #expect(await world.device.isRunning == false)
            await world.close()
        }
    }

    @Test func stopMidRunNotifiesStoppedAndTurnsTheLEDsOff() async throws {
        try await Self.inVirtualTime { clock in
            let world = try await Self.start(on: clock, Self.configuration(miss: 1))  // nobody hits: steps last
            let statuses = try await Self.subscribe(world, PunchUUID.control)
            try await world.link.gatt.write(handle: world.characteristic(PunchUUID.sequence), value: [2, 3])
            try await world.link.gatt.write(handle: world.characteristic(PunchUUID.timeSequence), value: Self.times([60_000, 60_000]))
            try await world.link.gatt.write(handle: world.characteristic(PunchUUID.control), value: [0x01])
            _ = try await Self.until(statuses, "running") { $0 == [0x11] }
            let chip = try #require(world.device.simulatedChip)
            #expect(await chip.outputValue(of: GPIOConfiguration.reflexDefault.targets[2].ledLine) == true)
            try await world.link.gatt.write(handle: world.characteristic(PunchUUID.control), value: [0x02])
            #expect(try await Self.until(statuses, "stopped") { $0 == [0x13] } == [[0x13]])
            for target in GPIOConfiguration.reflexDefault.targets { #expect(await chip.outputValue(of: target.ledLine) == false) }
            #expect(await world.device.isRunning == false)
            await world.close()
        }
    }

    @Test func aCoachLeavingMidRunStopsTheRunAndTheDeviceKeepsServing() async throws {
        try await Self.inVirtualTime { clock in
            let world = try await Self.start(on: clock, Self.configuration(miss: 1))
            let statuses = try await Self.subscribe(world, PunchUUID.control)
            try await world.link.gatt.write(handle: world.characteristic(PunchUUID.sequence), value: [4])
            try await world.link.gatt.write(handle: world.characteristic(PunchUUID.timeSequence), value: Self.times([60_000]))
            try await world.link.gatt.write(handle: world.characteristic(PunchUUID.control), value: [0x01])
            _ = try await Self.until(statuses, "running") { $0 == [0x11] }
            _ = try await world.link.disconnect()
            let log = try await Self.until(world.events, "coach gone") {
                if case .coachDisconnected = $0 { true } else { false }
            }
            #expect(log.last == .coachDisconnected(.randomStatic(0x0C0A_C400_0001), stoppedRun: true))
            let chip = try #require(world.device.simulatedChip)
            for target in GPIOConfiguration.reflexDefault.targets { #expect(await chip.outputValue(of: target.ledLine) == false) }
            #expect(await world.device.isRunning == false)

            // The device still advertises; the coach comes back and finds the sequences kept.
            let again = try await TestTime.within(10, "reconnect") {
                try await world.coachStack.connect(to: world.device.address, timeout: 5)
            }
            #expect(try await again.gatt.read(handle: world.characteristic(PunchUUID.sequence)) == [4])
            await world.close()
        }
    }
}
