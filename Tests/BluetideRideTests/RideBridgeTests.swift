import Bluetide
import Foundation
import Testing
@testable import BluetideRide

/// The bridge on Bluetide's own virtual radio: emulated devices read by one host, which serves
/// FTMS on the same controller; a second host (the "app") rides it as an FTMS trainer.
@Suite(.serialized) struct RideBridgeTests {
    /// What a test gets: the app's ride and source, the bridge, and the app's own host.
    struct Bridged {
        let rider: RideSession
        let client: LiveRideSource
        let bridge: RideBridge
        let reader: RideSession
        let app: Bluetooth
    }

    /// Starts `models` (devices of `kinds`, in order), a reader with the bridge named `name` on its
    /// controller, and an app riding the bridge; runs `body`; stops everything whether it threw.
    /// The whole test runs in the rig's virtual time (the rig's world on a manual clock): the
    /// hosts' own limits (set-up, control answers) are the library's defaults.
    func bridged(
        _ models: [String], kinds: [RideDeviceRequest.Kind], name: String, _ body: @escaping @Sendable (Bridged) async throws -> Void
    ) async throws {
        try await EmulatedRig.with(models, "the bridge \(name)") { rig in try await Self.bridged(rig, kinds: kinds, name: name, body) }
    }

    private static func bridged(
        _ rig: EmulatedRig, kinds: [RideDeviceRequest.Kind], name: String, _ body: (Bridged) async throws -> Void
    ) async throws {
        let requests = kinds.enumerated().map { RideDeviceRequest($0.element, device: EmulatedRig.address($0.offset).description) }
        let reader = RideSession(source: LiveRideSource(central: rig.bluetooth.central, requests: requests, configuration: .onRig()))
        let bridge = RideBridge(session: reader, peripheral: rig.bluetooth.peripheral, configuration: .init(name: name))
        let app = try await rig.world.openHost(configuration: EmulatedRig.hostConfiguration)
        let client = LiveRideSource(central: app.central, requests: [.init(.trainer, device: name)], configuration: .onRig(scanSeconds: 30))
        let rider = RideSession(source: client)
        var pump: Task<Void, Never>?
        func stop() async {
            pump?.cancel()
            await rider.stop()
            await app.close()
            await bridge.stop()
            await reader.stop()
            await rig.close()
        }
        do {
            let readings = try await reader.start()
            try await bridge.start()
            pump = Task { for await sample in readings { await bridge.publish(sample) } }
            try await body(Bridged(rider: rider, client: client, bridge: bridge, reader: reader, app: app))
        } catch {
            await stop()
            throw error
        }
        await stop()
    }

    @Test func aBluetideFTMSClientRidesAnEmulatedTacxThroughTheBridge() async throws {
        try await bridged(["tacx-fec", "heart-rate"], kinds: [.trainer, .heartRate], name: "Bridge Test") { b in
            let events = b.bridge.events
            // The app finds an FTMS trainer, asks for control and sets 180 W.
            let stream = try await b.rider.start()
            #expect(await b.client.devices.map(\.role) == [.ftmsTrainer])
            // The bridge passes the Tacx's own Device Information through (issue 21 item 2).
            let information = try #require(await b.client.trainerInformation, "the bridge serves 0x180A")
            #expect(information.manufacturerName == "Tacx")
            #expect(information.modelNumber == "Neo (emulated)")
            #expect(information.serialNumber?.isEmpty == false)
            #expect(information == (await b.reader.source.trainerInformation), "the trainer's values, unchanged")
            try await b.rider.setTarget(.power(watts: 180))
            let seen = try await guarded("180 W through the bridge", seconds: 90) { try await samples(stream) { settled($0, at: 180, tolerance: 3) } }
            let last = try #require(seen.last)
            #expect(last.sources[.power] == "Bridge Test")
            #expect(last.heartRateBpm != nil, "the strap's heart rate comes through Indoor Bike Data")
            #expect(await b.reader.latest?.target == .power(watts: 180), "the reader's session holds the app's target")

            // Out of the bridge's range: refused with invalid parameter, named by the app's control.
            let control = try #require(await b.rider.trainer)
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
            let who = "app \(b.app.address)"
            #expect(texts == [
                "\(who): request control → success",
                "\(who): set target power 180 W → trainer confirmed → success",
                "\(who): set target power 2500 W → invalid parameter",
            ])
        }
    }

    @Test func sensorsWithoutATrainerAreServedAndCommandsFailCleanly() async throws {
        try await bridged(["csc", "cycling-power"], kinds: [.speedCadence, .power], name: "Sensor Bridge") { b in
            let stream = try await b.rider.start()
            // Speed from the CSC wheel, power and cadence from the meter: one FTMS trainer to the app.
            let seen = try await guarded("speed, cadence and power through the bridge") {
                try await samples(stream) { $0.last.map { $0.speedKmh != nil && $0.powerWatts != nil && $0.cadenceRpm != nil } ?? false }
            }
            #expect((seen.last?.speedKmh ?? 0) > 10)
            // No trainer behind the bridge: its Device Information names the bridge itself.
            let information = try #require(await b.client.trainerInformation)
            #expect(information.manufacturerName == "Bluetide")
            #expect(information.modelNumber == "Bluetide FTMS Bridge")
            #expect(information.serialNumber == nil)
            #expect(information.softwareRevision == BluetideVersion.current)
            // No trainer behind the bridge: ERG is answered "operation failed", naming the request.
            await #expect(throws: TrainerControlError(
                request: "set target power 200 W",
                reason: "the trainer answered \"operation failed\" (0x04): the trainer could not do it now; try again")) {
                try await b.rider.setTarget(.power(watts: 200))
            }
        }
    }

    @Test func anFTMSTrainerBehindTheBridgeFollowsTheAppThroughAReset() async throws {
        try await bridged(["ftms-bike"], kinds: [.trainer], name: "FTMS Bridge") { b in
            let stream = try await b.rider.start()
            let control = try #require(await b.rider.trainer)
            try await b.rider.setTarget(.power(watts: 230))
            _ = try await guarded("230 W through the bridge to the FTMS trainer", seconds: 90) {
                try await samples(stream) { settled($0, at: 230, tolerance: 3) }
            }
            // Reset releases control on the bridge (and the trainer behind it): the app asks again.
            try await control.reset()
            let events = b.bridge.events
            let reset = try await guarded("the reset's event") { () -> String? in
                for await event in events where event.text.contains(": reset") { return event.text }
                return nil
            }
            #expect(reset == "app \(b.app.address): reset → trainer confirmed → success")
            try await b.rider.setTarget(.power(watts: 160))
            let seen = try await guarded("160 W after the reset", seconds: 90) { try await samples(stream) { settled($0, at: 160, tolerance: 3) } }
            #expect(seen.last?.target == .power(watts: 160))
        }
    }
}
