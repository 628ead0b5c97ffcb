import BluetideDemo
import BluetideSupport
import Synchronization
import Testing

/// Issue 22 item 3: the demo is a library (BluetideDemo) the command only parses for and prints;
/// here it runs without the command or its argument parser.
@Suite struct DemoWorldTests {
    final class Events: Sendable {
        private let events = Mutex<[DemoEvent]>([])
        func add(_ event: DemoEvent) { events.withLock { $0.append(event) } }
        var all: [DemoEvent] { events.withLock { $0 } }
    }

    /// The trainer is driven through BluetideRide's FTMS control (control asked for, then the ERG
    /// target, each answered success), the ring through BluetideRing's session (battery, then
    /// real-time heart rate), the punch program through BluetideReflexCoach's commands.
    /// In virtual time: the world, its devices' pace and the demo's limits run on one manual
    /// clock, so a busy machine makes the run slower, never different.
    @Test func everyDeviceIsDrivenThroughItsAppLibrary() async throws {
        let events = Events()
        let manual = ManualClock()
        let world = DemoWorld(seed: 11, liveSeconds: 1, clock: BluetideClock(manual), emit: events.add)
        do { try await manual.advancing { try await world.run() } } catch {
            await world.shutDown()
            throw error
        }
        await world.shutDown()
        let all = events.all
        func lines(_ device: String) -> [String] { all.filter { $0.device == device && ($0.kind == "write" || $0.kind == "value") }.map(\.summary) }
        let trainer = lines("ftms-bike")
        let control = trainer.filter { $0.hasPrefix("control point") }
        #expect(control.count == 4, "two requests, each answered: \(control)")
        #expect(zip(control, control.dropFirst()).enumerated().allSatisfy { index, pair in
            index % 2 == 1 || (pair.0.hasPrefix("control point ←") && pair.1.hasPrefix("control point → response to"))
        }, "\(control)")
        let ring = lines("colmi-r02")
        #expect(ring.first == "← battery request", "\(ring)")
        let battery = try #require(ring.firstIndex { $0.contains("battery") && !$0.hasPrefix("←") }, "\(ring)")
        let start = try #require(ring.firstIndex(of: "← start real-time heart rate"), "\(ring)")
        #expect(battery < start, "the battery reply comes before the measurement starts: \(ring)")
        #expect(ring.contains { $0.hasPrefix("real-time heart rate") }, "\(ring)")
        let punch = all.filter { $0.device == "punch" }
        #expect(punch.filter { $0.fields["reactionMs"] != nil }.count == 5)
        #expect(all.last?.kind == "done")
    }
}
