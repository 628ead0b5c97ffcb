import Bluetide
import BluetideDeviceModels
import BluetideSupport
import Foundation
import Synchronization
import Testing
@testable import BluetideRing

/// The ring session's own waits — reply time limits, retry pauses, raw-sample times — run on the
/// connection's clock: on a ``ManualClock`` they pass in virtual time, at the virtual instants
/// the options say, with no real waiting (the hang guards are far shorter than the virtual
/// time that passes).
@Suite(.timeLimit(.minutes(2))) struct RingVirtualTimeTests {
    @Test func aRingThatNeverAnswersTimesOutExactlyWhenTheVirtualClockPassesEachLimit() async throws {
        let clock = ManualClock()
        let writes = VirtualInstants(clock)
        try await RingRig.with(model: SilentRing(opcode: COLMIOpcode.battery, writes: writes), clock: clock, 60, "a silent ring") { rig in
            var options = rig.options(retries: 2)
            options.replyTimeout = .seconds(40)
            options.retryPause = .seconds(15)
            let ring = try await rig.open(options: options)
            // By default the session waits on its connection's clock: the host's manual one.
            #expect(ring.waitClock.manual === clock)
            let start = clock.now
            do {
                _ = try await ring.battery()
                Issue.record("the silent ring answered")
            } catch let error as RingError {
                guard case let .noValidReply(command, attempts, last) = error else { Issue.record("\(error)"); return }
                #expect(command == "battery" && attempts == 3)
                #expect(last == "no complete reply within 40.0 seconds", "\(last)")
            }
            // Three limits of 40 s and two pauses of 15 s passed on the manual clock: 150 s of
            // virtual time, far more than the 60 s wall-clock hang guard. The bounds allow the
            // link's latency and the virtual time that passes while a starved machine carries a
            // packet between tasks (up to about 2 s seen with two CPU hogs), and still fail for
            // a missing pause (−15 s) or an extra attempt (+55 s).
            let elapsed = start.duration(to: clock.now)
            #expect(elapsed >= .seconds(150) && elapsed < .seconds(155), "\(elapsed)")
            // Each request was written again one limit and one pause after the previous one: the
            // k-th write reached the ring (k − 1) × 55 s after the start. Measured from the start,
            // not from the previous write, whose arrival a starved machine may note late.
            let times = writes.instants
            #expect(times.count == 3, "\(times)")
            for (index, time) in times.enumerated() {
                let after = start.duration(to: time)
                let due = Duration.seconds(55 * index)
                #expect(after >= due && after < due + .seconds(5), "write \(index + 1) at \(after)")
            }
            await ring.close()
        }
    }

    @Test func aCorruptReplyIsAskedForAgainAfterExactlyTheRetryPauseOfVirtualTime() async throws {
        let clock = ManualClock()
        let writes = VirtualInstants(clock)
        let model = CorruptingRing(opcode: COLMIOpcode.battery, corruptions: 1, writes: writes)
        try await RingRig.with(model: model, clock: clock, 60, "a retry in virtual time") { rig in
            var options = rig.options(retries: 2)
            options.replyTimeout = .seconds(40)
            options.retryPause = .seconds(20)
            let ring = try await rig.open(options: options)
            let start = clock.now
            let battery = try await ring.battery()
            #expect(battery.levelPercent > 0)
            #expect(await ring.corruptPackets == 1)
            // The corrupt reply fails the attempt at once (no 40 s limit); the request is written
            // again one retry pause later (plus the link's latency), and answered.
            let times = writes.instants
            #expect(times.count == 2, "\(times)")
            if times.count == 2 {
                // Measured from the start: the first write's arrival may be noted late. Under 30 s:
                // not the 40 s reply limit, with room for a starved machine (see above).
                let after = start.duration(to: times[1])
                #expect(after >= .seconds(20) && after < .seconds(30), "\(after)")
            }
            let elapsed = start.duration(to: clock.now)
            #expect(elapsed >= .seconds(20) && elapsed < .seconds(30), "\(elapsed)")
            await ring.close()
        }
    }

    @Test func rawSampleTimesAndAnExplicitWaitClockAreTheSessions() async throws {
        // An explicit wait clock replaces the connection's: here a manual clock of its own that
        // nobody moves, so every raw sample's time is exactly zero.
        let still = ManualClock()
        try await RingRig.with(120, "raw samples on a still clock") { rig in
            var options = rig.options()
            options.waitClock = BluetideClock(still)
            let ring = try await rig.open(options: options)
            #expect(ring.waitClock.manual === still)
            #expect(rig.bluetooth.central.clock.isContinuous)
            try await ring.startRawStream()
            var seen = 0
            for await sample in ring.rawSamples {
                #expect(sample.seconds == 0)
                seen += 1
                if seen == 3 { break }
            }
            #expect(seen == 3)
            await ring.close()
        }
    }
}

/// The instants on a manual clock at which something happened (in order).
final class VirtualInstants: Sendable {
    private let clock: ManualClock
    private let times = Mutex<[ManualClock.Instant]>([])

    init(_ clock: ManualClock) { self.clock = clock }

    func record() {
        let now = clock.now
        times.withLock { $0.append(now) }
    }

    var instants: [ManualClock.Instant] { times.withLock { $0 } }
}

/// The emulated ring, but requests with one opcode are taken and never answered; it notes the
/// virtual instant of each.
struct SilentRing: DeviceModel {
    var inner = COLMIRingModel(seed: 3)
    let opcode: UInt8
    let writes: VirtualInstants

    var name: String { inner.name }
    var advertising: AdvertisingHints { inner.advertising }
    var services: [EmulatedService] { inner.services }
    var tickInterval: Double { inner.tickInterval }
    var acceptsOneCentralAtATime: Bool { true }
    func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? { inner.read(characteristic, now: now) }
    mutating func tick(now: Double) -> [EmulatedOutput] { inner.tick(now: now) }

    mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        guard bytes.first == opcode else { return inner.write(characteristic, bytes, now: now) }
        writes.record()
        return .accepted([])
    }
}
