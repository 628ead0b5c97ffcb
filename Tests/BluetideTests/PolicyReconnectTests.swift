import BluetideHCI
import BluetideTransport
import BluetideVirtual
import Foundation
import Testing
@testable import Bluetide
import BluetideHost
import BluetideSupport
import BluetideTestSupport

/// Reconnection after link loss, and the policy arithmetic.
@Suite(.timeLimit(.minutes(1))) struct PolicyReconnectTests {
    /// Waits for `event` on `events`, failing on a terminal event first.
    static func waitFor(
        _ wanted: @escaping @Sendable (ConnectionEvent) -> Bool, on connection: Connection, after start: Int = 0
    ) async throws -> [ConnectionEvent] {
        try await within(20, "connection event") {
            var seen: [ConnectionEvent] = []
            for await event in connection.events {
                seen.append(event)
                if wanted(event) { return seen }
            }
            return seen
        }
    }

    @Test func notificationsContinueAfterLinkLossWithoutDuplicatesOrSilentEnd() async throws {
        let link = uniqueLinkName()
        let peripheral = try await TestPeripheral.start(link: link, seed: 0x3333)
        let central = try await TestCentral.start(link: link)
        defer { Task { await central.close(); await peripheral.close() } }
        let connection = try await central.central.connect(to: peripheral.address, policy: fastReconnect)
        let values = try await connection.notifications(of: TestGATT.notify, as: UInt8.self)
        var iterator = values.makeAsyncIterator()
        var events = connection.events.makeAsyncIterator()
        let next1 = await events.next()
        #expect(next1 == .connected)

        var received: [UInt8] = []
        for round in 0..<3 {
            let base = UInt8(round * 20)
            for i in 1...10 { #expect(try await peripheral.notify([base + UInt8(i)]) == 1) }
            for _ in 1...10 { received.append(try #require(try await iterator.next())) }

            // The radio link breaks.
            await peripheral.controller.link.linkLoss(peripheral.controller)
            var sequence: [ConnectionEvent] = []
            while let event = await events.next() {
                sequence.append(event)
                if event == .reconnected { break }
            }
            #expect(sequence.first == .disconnected(reason: .connectionTimeout))
            #expect(sequence.contains(.reconnecting(attempt: 1)))
            #expect(sequence.last == .reconnected)
            // Nothing is delivered for values sent while nobody listens; after reconnecting the
            // subscription is back (the CCCD was written again): exactly one client gets it.
        }
        for i in 61...70 { #expect(try await peripheral.notify([UInt8(i)]) == 1) }
        for _ in 61...70 { received.append(try #require(try await iterator.next())) }
        let expected = (0..<3).flatMap { round in (1...10).map { UInt8(round * 20 + $0) } } + (61...70).map { UInt8($0) }
        #expect(received == expected)
        #expect(await connection.isConnected)
        #expect(try await connection.read(TestGATT.counter, as: UInt16.self) == 0x1234)
        #expect(await connection.mtu == 517)

        // A user disconnect does not reconnect, and ends the sequence cleanly.
        await connection.disconnect()
        let next2 = try await iterator.next()
        #expect(next2 == nil)
        var tail: [ConnectionEvent] = []
        while let event = await events.next() { tail.append(event) }
        #expect(tail.count == 1)
        if case .disconnected = tail.first {} else { Issue.record("expected a disconnected event, got \(tail)") }
        #expect(await central.central.connections().isEmpty)
    }

    @Test func aSteadyStreamSurvivesRepeatedLinkLossInOrderWithoutDuplicates() async throws {
        // In virtual time: the device's pace, the outages and the reconnects run on one manual clock.
        let clock = ManualClock()
        let link = uniqueLinkName()
        let peripheral = try await TestPeripheral.start(link: link, seed: 0x3535, clock: clock)
        let central = try await TestCentral.start(link: link, clock: clock)
        defer { Task { await central.close(); await peripheral.close() } }
        try await clock.advancing {
            let connection = try await central.central.connect(to: peripheral.address, policy: fastReconnect)
            let values = try await connection.notifications(of: TestGATT.notify, as: UInt16.self)
            let end: UInt16 = 0xFFFF
            // After the end marker comes a second one, so a value that overtook or was overtaken
            // by the end shows up (as `late`) instead of looking lost.
            let last: UInt16 = 0xFFFE
            let collector = Task {
                var got: [UInt16] = []
                var late: [UInt16] = []
                var reachedEnd = false
                for try await value in values {
                    if value == last { return (values: got, late: late, reachedEnd: reachedEnd) }
                    if value == end { reachedEnd = true } else if reachedEnd { late.append(value) } else { got.append(value) }
                }
                return (values: got, late: late, reachedEnd: false)  // the sequence ended by itself: a silent end
            }
            // The device notifies a counter every 2 ms and notes which values reached a subscriber.
            let producer = Task {
                var delivered: [(value: UInt16, clients: Int)] = []
                var i: UInt16 = 1
                while !Task.isCancelled, i < end {
                    delivered.append((i, try await peripheral.notify(i.bytes)))
                    i += 1
                    try? await clock.sleep(for: .milliseconds(2))
                }
                return delivered
            }
            var events = connection.events.makeAsyncIterator()
            _ = await events.next()
            for _ in 0..<3 {
                try await clock.sleep(for: .milliseconds(100))
                await peripheral.controller.link.linkLoss(peripheral.controller)
                while let event = await events.next(), event != .reconnected {}
            }
            try await clock.sleep(for: .milliseconds(100))
            producer.cancel()
            let delivered = try await producer.value
            while try await peripheral.notify(end.bytes) == 0 { try await clock.sleep(for: .milliseconds(5)) }
            #expect(try await peripheral.notify(last.bytes) == 1)
            let collected = try await within(20, "collect") { try await collector.value }
            let received = collected.values
            // What a failure below needs to be read: values after the end marker (reordered),
            // values the user's sequence gave up, values the host's buffers gave up.
            let dropped = connection.droppedNotifications
            var hostDropped: [String] = []
            for link in await central.stack.openConnections { hostDropped.append("link \(link.handle): \(await link.droppedValues)") }
            let context = Comment(rawValue: "late \(collected.late), sequence dropped \(dropped), host dropped \(hostDropped)")
            // One sequence across the three link losses: it did not end before the device's last value.
            #expect(collected.reachedEnd, context)
            #expect(collected.late.isEmpty, context)

            // In order, no value twice, nothing the device did not send to us.
            #expect(zip(received, received.dropFirst()).allSatisfy { $0 < $1 })
            let sentToUs = Set(delivered.filter { $0.clients == 1 }.map(\.value))
            #expect(Set(received).isSubset(of: sentToUs))
            // After the last reconnect nothing is lost (earlier, values in flight when the radio
            // broke may be).
            let lastGap = delivered.lastIndex { $0.clients == 0 } ?? 0
            let afterLastReconnect = delivered[(lastGap + 1)...].map(\.value)
            #expect(!afterLastReconnect.isEmpty)
            #expect(Array(received.suffix(afterLastReconnect.count)) == afterLastReconnect, context)
        }
    }

    /// The outage scenario in virtual time: a device goes away for 12 s, the central backs off
    /// (seconds-long, seeded waits) and reconnects when it is back. Run twice on fresh worlds,
    /// each in a fraction of a second of wall time: the events the policy prescribes (see the
    /// note on starvation below).
    @Test func aReconnectAfterAnOutageRunsInVirtualTimeTheSameWayEveryTime() async throws {
        let policy = ConnectionPolicy(
            reconnect: ConnectionPolicy.Reconnect(
                maximumAttempts: 8, delay: .seconds(1), backoffMultiplier: 2, maximumDelay: .seconds(8), jitter: 0.2,
                attemptTimeout: .seconds(1), jitterSeed: 42),
            operationTimeout: .seconds(20), setupTimeout: .seconds(20))
        let outage = Duration.seconds(12)
        func scenario() async throws -> (events: [ConnectionEvent], reconnectedAfter: Duration) {
            let clock = ManualClock()
            let link = uniqueLinkName()
            let peripheral = try await TestPeripheral.start(link: link, seed: 0x3636, readvertise: false, clock: clock)
            let central = try await TestCentral.start(link: link, clock: clock)
            defer { Task { await central.close(); await peripheral.close() } }
            return try await clock.advancing {
                let connection = try await central.central.connect(to: peripheral.address, policy: policy)
                let values = try await connection.notifications(of: TestGATT.notify)
                var events = connection.events.makeAsyncIterator()
                let first = await events.next()
                #expect(first == .connected)
                // The device goes away (the radio link breaks, it stops advertising) and comes back
                // after the outage.
                try? await peripheral.stack.stopAdvertising()
                let lost = clock.now
                await peripheral.controller.link.linkLoss(peripheral.controller)
                let back = Task {
                    try await clock.sleep(until: lost.advanced(by: outage))
                    try await peripheral.advertise()
                }
                var seen: [ConnectionEvent] = []
                while let event = await events.next() {
                    seen.append(event)
                    if event == .reconnected { break }
                    if case .failed = event { break }
                }
                let reconnectedAfter = lost.duration(to: clock.now)
                try await back.value
                // The subscription is back.
                #expect(try await peripheral.notify([0x5A]) == 1)
                var iterator = values.makeAsyncIterator()
                #expect(try await iterator.next() == [0x5A])
                return (seen, reconnectedAfter)
            }
        }
        let first = try await scenario()
        let second = try await scenario()
        // Waits before attempts 1, 2, 3… (seed 42): about 1, 2, 4, 8 s, each failed attempt 1 s:
        // the attempt that starts after 12 s finds the device.
        let delays = policy.reconnect.delays(seed: 42)
        var start = Duration.zero
        var attempts = 0
        for delay in delays {
            attempts += 1
            start += delay
            if start >= outage { break }
            start += policy.reconnect.attemptTimeout
        }
        let expected: [ConnectionEvent] = [.disconnected(reason: .connectionTimeout)]
            + (1...attempts).map { .reconnecting(attempt: $0) } + [.reconnected]
        // Both runs follow the policy: the link is lost, attempts are numbered 1, 2, 3, …, and
        // the attempt that finds the device back reconnects, never before the device is back.
        // On an idle machine both runs give exactly `expected`. Under CPU starvation the clock's
        // driver cannot see work in flight between tasks, so virtual time may pass while an
        // attempt's cancellation is on its way, and that attempt may still catch the device (a
        // full run with two CPU hogs saw attempt 3 reconnect at 13.0 s instead of attempt 4 at
        // 17.0 s): one attempt fewer, the only difference allowed.
        for run in [first, second] {
            let events = run.events
            #expect(events == expected || events == Array(expected.dropLast(2)) + [.reconnected], "\(events)")
            #expect(run.reconnectedAfter >= outage, "back at \(run.reconnectedAfter), before the device (\(outage))")
            if events == expected {
                // Not before the attempt that started after the outage. (Only a lower bound: the
                // test reads the clock when the event reaches it, which a starved machine may do
                // late.)
                #expect(run.reconnectedAfter >= start, "\(run.reconnectedAfter) vs \(start)")
            }
        }
    }

    /// Without a seed in the policy, the back-off's jitter comes from the host's random source
    /// (``Bluetooth/Configuration/randomness``): a host seeded alike draws the same jitter seeds
    /// every run, and each run backs off on the schedule its host's seed gives.
    @Test func unseededJitterComesFromTheHostsRandomSource() async throws {
        let reconnect = ConnectionPolicy.Reconnect(
            maximumAttempts: 3, delay: .milliseconds(500), backoffMultiplier: 2, maximumDelay: .seconds(4), jitter: 0.5,
            attemptTimeout: .milliseconds(500))
        #expect(reconnect.jitterSeed == nil)
        let policy = ConnectionPolicy(reconnect: reconnect, operationTimeout: .seconds(20), setupTimeout: .seconds(20))

        // The draws: a seeded host's central draws its jitter seeds from a generator seeded
        // alike every run; another seed draws others; the system's source is not seeded.
        let seeded = Bluetooth.Configuration().centralRandomness(after: .seeded(1))
        #expect(seeded.isDeterministic)
        var again = Bluetooth.Configuration().centralRandomness(after: .seeded(1))
        var other = Bluetooth.Configuration().centralRandomness(after: .seeded(2))
        var copy = seeded
        #expect(copy.next() == again.next())
        #expect(copy.next() != other.next())
        #expect(!Bluetooth.Configuration().centralRandomness(after: .system).isDeterministic)

        /// When the back-off announces attempts 2 and 3 and gives up, virtual time from the link
        /// loss, for a central whose random source is seeded with `seed`: each waits the drawn
        /// delays and each failed attempt its 0.5 s (attempt 1 is announced at the loss).
        func schedule(seed: UInt64) -> [Duration] {
            var source = HostRandomness.seeded(seed)
            let delays = reconnect.delays(seed: source.next())
            var at = Duration.zero
            return delays.map { delay in
                at += delay + reconnect.attemptTimeout
                return at
            }
        }
        // The two schedules cross (each is later than the other somewhere by more than 0.5 s:
        // about 5 s of virtual time in all, so the runs stay short on a starved machine),
        // so a run backing off on another seed's schedule, or on the system's numbers, breaks
        // the lower bounds below.
        let one = schedule(seed: 1), two = schedule(seed: 2)
        try #require(zip(one, two).contains { ($0 - $1) > .milliseconds(500) }, "\(one) \(two)")
        try #require(zip(one, two).contains { ($1 - $0) > .milliseconds(500) }, "\(one) \(two)")

        // The central's own draws, as the driver takes them on each lost link.
        func draws(seed: UInt64) async throws -> [UInt64] {
            let central = try await TestCentral.start(link: uniqueLinkName(), randomness: .seeded(seed))
            let values = (0..<3).map { _ in central.central.nextJitterSeed() }
            await central.close()
            return values
        }
        var reference = HostRandomness.seeded(1)
        let expectedDraws = (0..<3).map { _ in reference.next() }
        #expect(try await draws(seed: 1) == expectedDraws)
        #expect(try await draws(seed: 1) == expectedDraws, "the same seed draws the same jitter seeds")
        #expect(try await draws(seed: 2) != expectedDraws, "another seed draws others")

        /// The events from the link loss until the policy gives up, and the virtual time at
        /// which the test saw attempts 2 and 3 announced and the give-up.
        func run(seed: UInt64) async throws -> (events: [ConnectionEvent], times: [Duration]) {
            let clock = ManualClock()
            let link = uniqueLinkName()
            let peripheral = try await TestPeripheral.start(link: link, seed: 0x3737, readvertise: false, clock: clock)
            let central = try await TestCentral.start(link: link, clock: clock, randomness: .seeded(seed))
            defer { Task { await central.close(); await peripheral.close() } }
            return try await clock.advancing {
                let connection = try await central.central.connect(to: peripheral.address, policy: policy)
                var events = connection.events.makeAsyncIterator()
                #expect(await events.next() == .connected)
                // The device goes away for good.
                try? await peripheral.stack.stopAdvertising()
                let lost = clock.now
                await peripheral.controller.link.linkLoss(peripheral.controller)
                var seen: [ConnectionEvent] = []
                var times: [Duration] = []
                while let event = await events.next() {
                    seen.append(event)
                    if case let .reconnecting(attempt) = event, attempt > 1 { times.append(lost.duration(to: clock.now)) }
                    if case .failed = event {
                        times.append(lost.duration(to: clock.now))
                        break
                    }
                }
                return (seen, times)
            }
        }
        // The same seed backs off the same way every run (its draws, above); each seed's run
        // follows its own schedule.
        for seed: UInt64 in [1, 2] {
            let (events, times) = try await run(seed: seed)
            #expect(Array(events.prefix(4)) == [
                .disconnected(reason: .connectionTimeout), .reconnecting(attempt: 1), .reconnecting(attempt: 2),
                .reconnecting(attempt: 3),
            ], "seed \(seed): \(events)")
            #expect(events.count == 5, "seed \(seed): \(events)")
            let expected = schedule(seed: seed)
            #expect(times.count == expected.count, "seed \(seed): \(times)")
            // Only lower bounds: the test reads the clock when an event reaches it, which a
            // starved machine may do late, never early.
            for (seen, due) in zip(times, expected) {
                #expect(seen >= due - .milliseconds(1), "seed \(seed): \(times) vs the schedule \(expected)")
            }
        }
    }

    @Test func operationsDuringReconnectWaitForTheLink() async throws {
        let link = uniqueLinkName()
        let peripheral = try await TestPeripheral.start(link: link, seed: 0x3434)
        let central = try await TestCentral.start(link: link)
        defer { Task { await central.close(); await peripheral.close() } }
        let connection = try await central.central.connect(to: peripheral.address, policy: fastReconnect)
        await peripheral.controller.link.linkLoss(peripheral.controller)
        // Called while the link is down or coming back: waits, then succeeds.
        #expect(try await connection.read(TestGATT.counter, as: UInt16.self) == 0x1234)
    }

    @Test func reconnectGivesUpAndEndsStreamsWithTheError() async throws {
        let link = uniqueLinkName()
        let peripheral = try await TestPeripheral.start(link: link, seed: 0x4444, readvertise: false)
        let central = try await TestCentral.start(link: link)
        defer { Task { await central.close(); await peripheral.close() } }
        var policy = fastReconnect
        policy.reconnect.maximumAttempts = 2
        policy.reconnect.attemptTimeout = .milliseconds(200)
        let connection = try await central.central.connect(to: peripheral.address, policy: policy)
        let values = try await connection.notifications(of: TestGATT.notify)
        let events = connection.events
        try? await peripheral.stack.stopAdvertising()
        await peripheral.controller.link.linkLoss(peripheral.controller)
        var seen: [ConnectionEvent] = []
        for await event in events { seen.append(event) }
        #expect(seen.prefix(4) == [.connected, .disconnected(reason: .connectionTimeout), .reconnecting(attempt: 1), .reconnecting(attempt: 2)])
        guard case let .failed(error) = seen.last, case .reconnectFailed(attempts: 2, _) = error else {
            Issue.record("expected failed(reconnectFailed), got \(seen)")
            return
        }
        await #expect(throws: BluetideError.self) { for try await _ in values {} }
        #expect(await central.central.connections().isEmpty)
    }

    @Test func withoutReconnectALostLinkClosesWithTheReason() async throws {
        let link = uniqueLinkName()
        let peripheral = try await TestPeripheral.start(link: link, seed: 0x4545)
        let central = try await TestCentral.start(link: link)
        defer { Task { await central.close(); await peripheral.close() } }
        let connection = try await central.central.connect(to: peripheral.address, policy: .test)
        let values = try await connection.notifications(of: TestGATT.notify)
        await peripheral.controller.link.linkLoss(peripheral.controller)
        await #expect(throws: BluetideError.disconnected(reason: .connectionTimeout)) { for try await _ in values {} }
        var seen: [ConnectionEvent] = []
        for await event in connection.events { seen.append(event) }
        #expect(seen == [.disconnected(reason: .connectionTimeout)])
    }

    @Test func backoffGrowsIsCappedAndJitterStaysInBounds() {
        let plan = ConnectionPolicy.Reconnect(
            delay: .milliseconds(100), backoffMultiplier: 2, maximumDelay: .seconds(1), jitter: 0.25)
        #expect(plan.nominalDelay(beforeAttempt: 1) == .milliseconds(100))
        #expect(plan.nominalDelay(beforeAttempt: 2) == .milliseconds(200))
        #expect(plan.nominalDelay(beforeAttempt: 4) == .milliseconds(800))
        #expect(plan.nominalDelay(beforeAttempt: 5) == .seconds(1))
        #expect(plan.delay(beforeAttempt: 2, unit: 0) == .milliseconds(150))
        #expect(plan.delay(beforeAttempt: 2, unit: 0.5) == .milliseconds(200))
        #expect(plan.delay(beforeAttempt: 2, unit: 1) == .milliseconds(250))
        #expect(ConnectionPolicy.Retry(attempts: 0).attempts == 1)
        #expect(ConnectionPolicy.Reconnect().jitterSeed == nil)
    }

    @Test func seededJitterRepeatsAndStaysInBounds() {
        let plan = ConnectionPolicy.Reconnect(
            maximumAttempts: 4, delay: .milliseconds(100), backoffMultiplier: 2, maximumDelay: .seconds(1), jitter: 0.25,
            jitterSeed: 7)
        // SplitMix64 from seed 7 draws 0.3898, 0.0168, 0.9008, 0.5829: nominal ± 25 % × (2u − 1).
        #expect(plan.delays(seed: 7) == [.milliseconds(94), .milliseconds(152), .milliseconds(480), .milliseconds(833)])
        #expect(plan.delays(seed: 7) == plan.delays(seed: 7))
        #expect(plan.delays(seed: 8) != plan.delays(seed: 7))
        for seed in UInt64(0)..<200 {
            for (index, delay) in plan.delays(seed: seed).enumerated() {
                let nominal = plan.nominalDelay(beforeAttempt: index + 1)
                #expect(delay >= nominal * 0.75 && delay <= nominal * 1.25)
            }
        }
        #expect(ConnectionPolicy(preferredMTU: 9000).preferredMTU == 517)
        #expect(ConnectionPolicy.default.reconnect.isEnabled == false)
        #expect(ConnectionPolicy.resilient.reconnect.isEnabled)
    }
}
