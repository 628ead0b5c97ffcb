import Bluetide
import BluetideDeviceModels
import BluetideSupport
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideRing

/// `ring watch` as a library call (``RingWatch``), in virtual time against the emulated ring,
/// which ends a measurement 60 s after it was started or last continued.
@Suite(.timeLimit(.minutes(2))) struct RingWatchTests {
    /// The events a watch reported, in order.
    final class Reported: Sendable {
        let events = Observed<[RingEvent]>([])
        func add(_ event: RingEvent) { events.append(event) }
        var readings: Int { events.value.filter { if case .reading = $0 { true } else { false } }.count }
        var streamValues: Int { events.value.filter { if case .continuousHeartRate = $0 { true } else { false } }.count }
    }

    @Test func aHeartRateMeasurementIsKeptGoingPastTheRingsMinute() async throws {
        let clock = ManualClock()
        let reported = Reported()
        try await RingRig.with(clock: clock, 90, "a 150 s watch in virtual time") { rig in
            let ring = try await rig.open()
            let ending = try await RingWatch(measurement: .realTime(.heartRate)).run(ring, stopWhen: {
                try? await clock.sleep(for: .seconds(150))
                return "end of --duration"
            }, report: reported.add)
            #expect(ending == .stopped(reason: "end of --duration"))
            await ring.close()
        }
        // About one reading a second for 150 s; a measurement never continued ends after 60.
        #expect(reported.readings >= 130, "\(reported.readings) readings")
        if case .battery = reported.events.value.first {} else { Issue.record("the battery comes first: \(reported.events.value.prefix(2))") }
    }

    @Test func theContinuousStreamIsKeptGoingToo() async throws {
        let clock = ManualClock()
        let reported = Reported()
        try await RingRig.with(clock: clock, 90, "a 120 s stream watch in virtual time") { rig in
            let ring = try await rig.open()
            _ = try await RingWatch(measurement: .continuousHeartRate).run(ring, stopWhen: {
                try? await clock.sleep(for: .seconds(120))
                return "end of --duration"
            }, report: reported.add)
            await ring.close()
        }
        #expect(reported.streamValues >= 100, "\(reported.streamValues) stream values")
        #expect(reported.readings == 0)
    }

    @Test func withoutAMeasurementNothingIsMeasured() async throws {
        let clock = ManualClock()
        let reported = Reported()
        try await RingRig.with(clock: clock, 60, "a watch without a measurement") { rig in
            let ring = try await rig.open()
            _ = try await RingWatch(measurement: .none).run(ring, stopWhen: {
                try? await clock.sleep(for: .seconds(20))
                return "end of --duration"
            }, report: reported.add)
            await ring.close()
        }
        #expect(reported.readings == 0 && reported.streamValues == 0)
        #expect(reported.events.value.contains { if case .battery = $0 { true } else { false } })
    }

    @Test func aLostLinkEndsTheWatch() async throws {
        let clock = ManualClock()
        let reported = Reported()
        try await RingRig.with(clock: clock, 60, "a watch whose link drops") { rig in
            let ring = try await rig.open()
            let watching = Task {
                try await RingWatch(measurement: .realTime(.heartRate)).run(ring, stopWhen: {
                    try? await clock.sleep(for: .seconds(3600))
                    return "end of --duration"
                }, report: reported.add)
            }
            try await reported.events.wait { $0.count >= 5 }
            await rig.dropLinks()
            #expect(try await watching.value == .linkLost)
            await ring.close()
        }
    }
}
