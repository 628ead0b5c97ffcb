import Bluetide
import BluetideBase
@testable import BluetideEmulation
import BluetideDeviceModels
import BluetideSupport
import Synchronization
import Testing

/// Emulated devices tick on the clock of the host they serve on: in a world on a manual clock
/// they run in virtual time, never on the wall clock.
@Suite(.timeLimit(.minutes(2))) struct EmulatedPeripheralClockTests {
    @Test func aStrapInAManualClockWorldNotifiesOncePerVirtualSecond() async throws {
        let manual = ManualClock()
        let world = VirtualWorld(clock: BluetideClock(manual))
        let strap = try await world.emulate([HeartRateModel(seed: 7)], name: "Clocked HRM")
        let bluetooth = try await world.openHost()
        let count = 8
        let arrivals: [Duration]
        do {
            arrivals = try await manual.advancing {
                // A limit on the world's clock: a device that never notifies ends here, not in a hang.
                try await withTimeLimit(.seconds(60), clock: manual, onTimeout: { BluetideError.timedOut(operation: "\(count) heart-rate values", seconds: 60) }) {
                    let connection = try await bluetooth.central.connect(to: strap.address)
                    var times: [Duration] = []
                    for try await value in try await connection.notifications(of: .heartRateMeasurement) where !value.isEmpty {
                        times.append(manual.now.offset)
                        if times.count == count { break }
                    }
                    await connection.disconnect()
                    return times
                }
            }
        } catch {
            await world.close()
            throw error
        }
        await world.close()
        try #require(arrivals.count == count)
        // The strap makes one measurement per second of the world's time (its 1 Hz), however
        // much wall time passed: the first is due 1 s after it started, the eighth 8 s after it
        // started. (On the wall clock, the few milliseconds of wall time the
        // virtual run takes would yield none, and the 60 s limit would end the test.) The
        // instants are read when the test's task gets to each value, so a starved machine may
        // show values late or bunched, never early: only lower bounds are pinned here; the
        // exact pace of the ticks is pinned by the next test.
        #expect(arrivals[0] >= .seconds(1), "virtual arrivals: \(arrivals)")
        #expect(arrivals[count - 1] >= .seconds(count), "virtual arrivals: \(arrivals)")
    }

    @Test func aStrapOnAManualClockIsTickedExactlyOncePerInterval() async throws {
        // The peripheral alone (no central): its tick sleeps on the manual clock; every interval
        // the clock moves wakes it exactly once, and nothing happens while the clock stands still.
        // The clock moves at once, before the tick task may have run at all: its grid starts
        // when the device starts, so the first tick is still due at 0.25 s.
        let manual = ManualClock()
        let world = VirtualWorld(clock: BluetideClock(manual))
        let counter = TickCounter()
        let strap = try await world.emulate([CountingModel(counter: counter)], name: "Ticks")
        defer { Task { await world.close() } }
        #expect(strap.deviceNames == ["counting"])
        #expect(counter.ticks == 0)
        // Ticks are due at fixed instants of the world's clock: whether the tick task already
        // sleeps when the clock moves or only gets there afterwards, each step makes one tick.
        for step in 1...10 {
            manual.advance(by: .milliseconds(250))
            // An event wait with a generous limit: a tick that never comes fails here, not in a hang.
            try await withTimeLimit(.seconds(30), onTimeout: { BluetideError.timedOut(operation: "tick \(step)", seconds: 30) }) {
                await counter.waitForTicks(step)
            }
            #expect(counter.ticks == step)
            #expect(abs(counter.lastNow - Double(step) * 0.25) < 1e-9, "model time is the world's time")
        }
        // Once the tick task sleeps again, nothing more is due until the clock moves.
        await manual.waitForSleepers(1)
        for _ in 0..<100 { await Task.yield() }
        #expect(counter.ticks == 10)
    }

    @Test func ticksKeepTheirPaceAndNeverBurstAfterAStall() {
        var ticks = ModelTicks(interval: 0.1, start: 2)
        #expect(abs(ticks.next - 2.1) < 1e-12)
        ticks.advance(now: 2.1)
        #expect(abs(ticks.next - 2.2) < 1e-12)
        // Woken late (work took 30 ms): the next tick stays on the 0.1 s grid.
        ticks.advance(now: 2.23)
        #expect(abs(ticks.next - 2.3) < 1e-12)
        // Starved for 5 s: one tick one interval later, not fifty at once.
        ticks.advance(now: 7.3)
        #expect(abs(ticks.next - 7.4) < 1e-12)
    }
}

/// Counts the ticks of ``CountingModel`` (shared with the test).
final class TickCounter: Sendable {
    private struct State {
        var ticks = 0
        var lastNow = 0.0
        var waiters: [(Int, CheckedContinuation<Void, Never>)] = []
    }
    private let state = Mutex(State())

    var ticks: Int { state.withLock { $0.ticks } }
    var lastNow: Double { state.withLock { $0.lastNow } }

    func tick(now: Double) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.ticks += 1
            state.lastNow = now
            let ready = state.waiters.filter { $0.0 <= state.ticks }.map(\.1)
            state.waiters.removeAll { $0.0 <= state.ticks }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// Returns once `count` ticks have happened (an event wait: the tick runs right after the advance).
    func waitForTicks(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.ticks >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }
}

/// A device that only counts its ticks (every 0.25 s).
struct CountingModel: DeviceModel {
    let name = "counting"
    let counter: TickCounter

    var advertising: AdvertisingHints { AdvertisingHints(localName: "Ticks", serviceUUIDs: [BluetoothUUID(0xFFF0)]) }
    var services: [EmulatedService] {
        [EmulatedService(BluetoothUUID(0xFFF0), [EmulatedCharacteristic(BluetoothUUID(0xFFF1), [.notify])])]
    }
    var tickInterval: Double { 0.25 }

    func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? { nil }
    mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        .rejected(attError: EmulatedATTError.writeNotPermitted)
    }
    mutating func tick(now: Double) -> [EmulatedOutput] {
        counter.tick(now: now)
        return []
    }
}
