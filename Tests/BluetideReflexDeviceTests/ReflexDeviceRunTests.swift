import Bluetide
import BluetideGPIO
import BluetideHost
import BluetideProfiles
import BluetideSupport
import BluetideReflexDevice
import BluetideTestSupport
import BluetideTransport
import Foundation
import Testing

/// `reflex device`'s session as a library call (``ReflexDeviceRun``), without the argument
/// parser: in virtual time on a manual clock, the device, its simulated athlete and a bare
/// coach stack on one virtual link.
@Suite struct ReflexDeviceRunTests {
    static func options() -> ReflexDeviceOptions {
        var configuration = GPIOConfiguration.reflexDefault
        configuration.backend = .sim
        configuration.simulationSeed = 11
        configuration.athlete.missProbability = 0
        configuration.athlete.wrongTargetProbability = 0
        configuration.athlete.maximumReactionMilliseconds = 200  // inside the 300 ms steps below
        configuration.athlete.minimumReactionMilliseconds = min(configuration.athlete.minimumReactionMilliseconds, 150)
        return ReflexDeviceOptions(configuration: configuration, name: "Reflex-Run")
    }

    /// A virtual link on `clock`, its name.
    static func link(on clock: ManualClock) async -> String {
        let name = "reflex-run-\(UUID().uuidString)"
        await Bluetooth.prepareVirtualLink(named: name, clock: BluetideClock(clock))
        return name
    }

    @Test func aCoachRunsASequenceAndTheRunEndsWhenItsDurationPasses() async throws {
        let clock = ManualClock()
        let link = await Self.link(on: clock)
        let (events, sink) = AsyncStream.makeStream(of: ReflexDeviceEvent.self)
        let run = ReflexDeviceRun(transport: "virtual:\(link)", options: Self.options(), duration: .seconds(60))
        try await TestTime.within(120, "a device run in virtual time") {
            try await clock.advancing {
                let serving = Task { try await run.run(clock: BluetideClock(clock), stopWhen: { try? await clock.sleep(for: .seconds(3600)) }, events: { sink.yield($0) }) }
                var seen = events.makeAsyncIterator()
                guard case let .started(name, address) = await seen.next() else { Issue.record("no started event first"); return }
                #expect(name == "Reflex-Run")
                let coach = HostStack(
                    transport: await VirtualTransport.attach(toLinkNamed: link),
                    configuration: .init(randomAddress: .randomStatic(0x0C0A_C400_0777), commandTimeout: 30), clock: clock)
                try await coach.start()
                let connection = try await coach.connect(to: address, timeout: 5)
                let punch = try #require(try await connection.gatt.discoverDatabase().first { $0.service.uuid == PunchUUID.service })
                func handle(_ uuid: BluetoothUUID) throws -> GATTCharacteristic {
                    try #require(punch.characteristics.first { $0.characteristic.uuid == uuid }).characteristic
                }
                let control = try await connection.gatt.subscribe(to: try handle(PunchUUID.control))
                try await connection.gatt.write(handle: try handle(PunchUUID.sequence).valueHandle, value: [2, 5, 1])
                try await connection.gatt.write(handle: try handle(PunchUUID.timeSequence).valueHandle, value: [0x2C, 0x01, 0x2C, 0x01, 0x2C, 0x01])
                try await connection.gatt.write(handle: try handle(PunchUUID.control).valueHandle, value: [0x01])
                var last: [UInt8]?
                for await status in control where status.first == 0x12 || status.first == 0xE0 {
                    last = status
                    break
                }
                #expect(last?.first == 0x12, "the run finished: \(String(describing: last))")
                var tally = ReflexDeviceTally()
                var summary: ReflexDeviceTally.Summary?
                while summary == nil, let event = await seen.next() { summary = tally.add(event) }
                #expect(summary?.steps == 3)
                #expect(summary?.hits == 3, "the athlete never misses here")
                #expect(summary?.finished == true)
                let started = clock.now
                let ending = try await serving.value
                #expect(ending == .durationPassed)
                #expect(started.duration(to: clock.now) <= .seconds(60), "ends within its duration of virtual time")
                await coach.close()
            }
        }
    }

    @Test func theCallersStopEndsTheRunAndEveryEventWasHandedOn() async throws {
        let clock = ManualClock()
        let link = await Self.link(on: clock)
        let (stop, stopNow) = AsyncStream.makeStream(of: Void.self)
        let handed = Observed<[ReflexDeviceEvent]>([])
        let run = ReflexDeviceRun(transport: "virtual:\(link)", options: Self.options())
        let ending = try await TestTime.within(120, "a stopped device run") {
            try await clock.advancing {
                try await run.run(clock: BluetideClock(clock), stopWhen: {
                    for await _ in stop { return }
                }, events: { event in
                    handed.update { $0.append(event) }
                    if case .started = event { stopNow.yield() }
                })
            }
        }
        #expect(ending == .stopped)
        #expect(handed.value.count == 1)
        if case .started = handed.value.first {} else { Issue.record("expected the started event, got \(handed.value)") }
    }

    @Test func aTransportThatDoesNotOpenIsCannotOpenWithTheSpec() async throws {
        let run = ReflexDeviceRun(transport: "no-such-transport:7", options: Self.options())
        do {
            _ = try await run.run(stopWhen: {}, events: { _ in })
            Issue.record("expected an error")
        } catch {
            guard case let .cannotOpen(transport, _) = error else { Issue.record("expected cannotOpen, got \(error)"); return }
            #expect(transport == "no-such-transport:7")
            #expect(error.description.hasPrefix("cannot start the Bluetooth host on no-such-transport:7: "))
        }
    }

    @Test func theTallyCountsARunAndStartsAgainWithANewSequence() throws {
        var tally = ReflexDeviceTally()
        let address = BluetoothAddress.randomStatic(1)
        #expect(tally.add(.status(.stopped)) == nil, "a run without a step has no summary")
        #expect(tally.add(.response(PunchResponse(reactionTimeMilliseconds: 300, target: 1, hit: true, step: 1))) == nil)
        #expect(tally.add(.response(PunchResponse(reactionTimeMilliseconds: 0, target: 2, hit: false, step: 2))) == nil)
        #expect(tally.add(.response(PunchResponse(reactionTimeMilliseconds: 200, target: 3, hit: true, wrongTargetFirst: true, step: 3))) == nil)
        let ended = tally.add(.coachDisconnected(address, stoppedRun: true))
        let summary = try #require(ended)
        #expect(summary.steps == 3)
        #expect(summary.hits == 2)
        #expect(summary.misses == 1)
        #expect(summary.wrongTargets == 1)
        #expect(summary.finished == false)
        #expect(summary.meanReactionMilliseconds == 250)
        #expect(summary.bestReactionMilliseconds == 200)
        // The count starts again: a new sequence drops what came before it.
        _ = tally.add(.response(PunchResponse(reactionTimeMilliseconds: 400, target: 1, hit: true, step: 1)))
        _ = tally.add(.sequenceReceived(try PunchSequence(targets: [1])))
        _ = tally.add(.response(PunchResponse(reactionTimeMilliseconds: 100, target: 1, hit: true, step: 1)))
        let finished = tally.add(.status(.finished(stepsDone: 1)))
        let next = try #require(finished)
        #expect(next.steps == 1)
        #expect(next.finished)
        #expect(next.meanReactionMilliseconds == 100)
        #expect(tally.add(.coachDisconnected(address, stoppedRun: false)) == nil, "a coach leaving without stopping a run ends nothing")
    }
}
