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

    /// An app riding the bridge: its requests come to the run's report as bridge events, and
    /// the run ends when stopped.
    @Test func anAppsRequestsAreReportedAndAStopEndsTheRun() async throws {
        try await EmulatedRig.with(["ftms-bike"], "a bridge run with an app") { rig in
            let (reader, bridge) = Self.bridge(rig, name: "App Bridge")
            let app = try await rig.world.openHost(configuration: EmulatedRig.hostConfiguration)
            let rider = RideSession(source: LiveRideSource(
                central: app.central, requests: [.init(.trainer, device: "App Bridge")], configuration: .onRig(scanSeconds: 30)))
            let stop = TestStop()
            let requests = Mutex<[String]>([])
            let riding = Mutex<Task<Void, any Error>?>(nil)
            func close() async {
                riding.withLock { $0 }?.cancel()
                await rider.stop()
                await app.close()
                await bridge.stop()
                await reader.stop()
            }
            let ending: RideRun.Ending
            do {
                ending = try await RideBridgeRun(duration: .seconds(300), clock: BluetideClock(rig.manual))
                    .run(reader, bridge: bridge, stopWhen: stop.wait) { event in
                        switch event {
                        case .serving:
                            // The app rides the bridge once it serves (its samples kept: dropping
                            // them would stop its session).
                            riding.withLock {
                                $0 = Task {
                                    let samples = try await rider.start()
                                    try await rider.setTarget(.power(watts: 180))
                                    for await _ in samples {}
                                }
                            }
                        case let .bridge(event) where event.kind == .request:
                            requests.withLock { $0.append(event.text) }
                            if event.text.contains("set target power 180 W") { stop.stop("the app set its target") }
                        default: break
                        }
                    }
            } catch {
                await close()
                throw error
            }
            await close()
            #expect(ending == .stopped(reason: "the app set its target"), "\(requests.withLock { $0 })")
            #expect(requests.withLock { $0 } == [
                "app \(app.address): request control → success",
                "app \(app.address): set target power 180 W → trainer confirmed → success",
            ])
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
