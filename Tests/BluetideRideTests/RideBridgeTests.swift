import Bluetide
import Foundation
import Testing
@testable import BluetideRide

/// The bridge on Bluetide's own virtual radio: an emulated Tacx FE-C trainer read by one host,
/// which serves FTMS on the same controller; a second host rides it as an FTMS trainer.
@Suite(.serialized) struct RideBridgeTests {
    @Test func aBluetideFTMSClientRidesAnEmulatedTacxThroughTheBridge() async throws {
        let rig = try await EmulatedRig.start(["tacx-fec", "heart-rate"])
        let reader = RideSession(source: LiveRideSource(
            central: rig.bluetooth.central,
            requests: [.init(.trainer, device: EmulatedRig.address(0).description), .init(.heartRate, device: EmulatedRig.address(1).description)]))
        let bridge = RideBridge(session: reader, peripheral: rig.bluetooth.peripheral, configuration: .init(name: "Bridge Test"))
        let app = try await Bluetooth.open(transport: "virtual:\(rig.linkName)")
        let client = LiveRideSource(central: app.central, requests: [.init(.trainer, device: "Bridge Test")], configuration: .init(scanSeconds: 5))
        let rider = RideSession(source: client)
        var pump: Task<Void, Never>?
        do {
            let readings = try await reader.start()
            try await bridge.start()
            pump = Task { for await sample in readings { await bridge.publish(sample) } }
            let events = bridge.events

            // The app finds an FTMS trainer, asks for control and sets 180 W.
            let stream = try await rider.start()
            #expect(await client.devices.map(\.role) == [.ftmsTrainer])
            try await rider.setTarget(.power(watts: 180))
            let seen = try await guarded("180 W through the bridge", seconds: 90) { try await samples(stream) { settled($0, at: 180, tolerance: 3) } }
            let last = try #require(seen.last)
            #expect(last.sources[.power] == "Bridge Test")
            #expect(last.heartRateBpm != nil, "the strap's heart rate comes through Indoor Bike Data")
            #expect(await reader.latest?.target == .power(watts: 180), "the reader's session holds the app's target")

            // Out of the bridge's range: refused with invalid parameter, named by the app's control.
            let control = try #require(await rider.trainer)
            await #expect(throws: TrainerControlError(
                request: "set target power 2500 W",
                reason: "the trainer answered \"invalid parameter\" (0x03): the value is outside the trainer's supported range")) {
                try await control.setTargetPower(watts: 2500)
            }
            // The bridge said what happened, in order.
            let texts = try await guarded("the bridge's events") { () -> [String] in
                var texts: [String] = []
                for await event in events where event.kind == .request {
                    texts.append(event.text)
                    if texts.count == 3 { break }
                }
                return texts
            }
            let who = "app \(app.address)"
            #expect(texts == [
                "\(who): request control → success",
                "\(who): set target power 180 W → trainer confirmed → success",
                "\(who): set target power 2500 W → invalid parameter",
            ])
        } catch {
            pump?.cancel()
            await rider.stop()
            await app.close()
            await bridge.stop()
            await reader.stop()
            await rig.close()
            throw error
        }
        pump?.cancel()
        await rider.stop()
        await app.close()
        await bridge.stop()
        await reader.stop()
        await rig.close()
    }
}
