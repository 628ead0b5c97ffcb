import Bluetide
import BluetideSupport
import Synchronization
import Testing
@testable import BluetideRide

/// ``RideBridgeRun`` without the argument parser: an emulated FTMS bike read and re-served on
/// the rig's controller, in virtual time.
@Suite(.serialized) struct RideBridgeRunTests {
    /// A reader session over the rig's FTMS bike (model 0) and a bridge named `name` on the rig's
    /// own controller.
    static func bridge(_ rig: EmulatedRig, name: String) -> (RideSession, RideBridge) {
        let reader = RideSession(source: LiveRideSource(
            central: rig.bluetooth.central, requests: [.init(.trainer, device: EmulatedRig.address(0).description)], configuration: .onRig()))
        return (reader, RideBridge(session: reader, peripheral: rig.bluetooth.peripheral, configuration: .init(name: name)))
    }

    @Test func bridgesUntilTheDurationAndReportsInOrder() async throws {
        try await EmulatedRig.with(["ftms-bike"], "a bridge run to its duration") { rig in
            let (reader, bridge) = Self.bridge(rig, name: "Run Bridge")
            let kinds = Mutex<[String]>([])
            let ticks = Mutex(0)
            let before = rig.manual.now
            let ending = try await RideBridgeRun(duration: .seconds(4), clock: BluetideClock(rig.manual)).run(reader, bridge: bridge) { event in
                switch event {
                case .started: kinds.withLock { $0.append("started") }
                case .serving: kinds.withLock { $0.append("serving") }
                case let .sample(sample): if sample.trigger == .tick { ticks.withLock { $0 += 1 } }
                case .notice, .bridge: break
                }
            }
            let virtual = before.duration(to: rig.manual.now)
            await bridge.stop()
            await reader.stop()
            #expect(ending == .duration)
            #expect(virtual >= .seconds(4), "\(virtual)")
            #expect(kinds.withLock { $0 } == ["started", "serving"])
            #expect(ticks.withLock { $0 } >= 2)
        }
    }

    /// A bridge over a session that cannot start says why, in the session's words.
    @Test func aSessionThatCannotStartIsAStartError() async throws {
        try await EmulatedRig.with([], "a bridge run without devices") { rig in
            let reader = RideSession(source: LiveRideSource(
                central: rig.bluetooth.central, requests: [.init(.trainer)], configuration: .onRig(scanSeconds: 2)))
            let bridge = RideBridge(session: reader, peripheral: rig.bluetooth.peripheral)
            do throws(RideBridgeRunError) {
                _ = try await RideBridgeRun(clock: BluetideClock(rig.manual)).run(reader, bridge: bridge) { _ in }
                Issue.record("the run started without a trainer")
            } catch {
                guard case let .start(message) = error else { Issue.record("\(error)"); return }
                #expect(message.contains("not found"), "\(message)")
            }
            await bridge.stop()
            await reader.stop()
        }
    }
}
