import Bluetide
import BluetideDeviceModels
import BluetideEmulation
import BluetideSupport
import Foundation
import Testing
@testable import BluetideRide

/// A live ride counts its ticks, its readings' times and its retry pauses on its central's clock
/// (``Central/clock``), not the monotonic one: in a world on a ``ManualClock`` they pass in
/// virtual time, the same way however busy the machine is.
@Suite(.serialized) struct LiveRideSourceClockTests {
    @Test func ticksAndReadingTimesFollowTheCentralsManualClock() async throws {
        let (ticks, virtual, wall, readingTimes) = try await EmulatedRig.with(["ftms-bike"], "ticks on the manual clock") { rig in
            let source = LiveRideSource(
                central: rig.bluetooth.central, requests: [.init(.trainer, device: EmulatedRig.address(0).description)], configuration: .onRig())
            let events = try await source.start()
            let started = rig.manual.now
            let wallStart = ContinuousClock.now
            var ticks: [Double] = []
            var readingTimes: [Double] = []
            for await event in events {
                switch event {
                case let .tick(time): ticks.append(time)
                case let .reading(reading): readingTimes.append(reading.time)
                default: break
                }
                if ticks.count == 3 { break }
            }
            let virtual = started.duration(to: rig.manual.now)
            let wall = wallStart.duration(to: .now)
            await source.stop()
            return (ticks, virtual, wall, readingTimes)
        }
        #expect(ticks == [1, 2, 3])
        // The third tick came when the manual clock reached 3 s past the start. On the monotonic
        // clock it would have taken two real seconds at least, while the devices' own ticks moved
        // the manual clock far past 3 s. A starved machine may let some virtual time pass (up to
        // 100× the real time it loses) before the source's tick reaches this loop, so a virtual
        // time past 4.5 s counts only if the ticks also took two real seconds.
        #expect(virtual >= .milliseconds(2900), "\(virtual)")
        #expect(virtual < .milliseconds(4500) || wall < .seconds(2), "\(virtual) of virtual time in \(wall)")
        // Readings are stamped on the same clock: within the virtual time the three ticks took.
        #expect(!readingTimes.isEmpty)
        #expect(readingTimes.allSatisfy { $0 >= 0 && $0 <= virtual.inSeconds + 0.01 }, "\(readingTimes) within \(virtual)")
    }
}

/// An FE-C trainer that takes every command and never confirms one (no page 71 ever comes).
struct SilentFECTrainer: DeviceModel {
    let name = "silent-fec"
    var advertising: AdvertisingHints { AdvertisingHints(localName: "Silent FE-C", serviceUUIDs: [.tacxFECService]) }
    var services: [EmulatedService] {
        [EmulatedService(.tacxFECService, [
            EmulatedCharacteristic(.tacxFECNotify, [.notify]),
            EmulatedCharacteristic(.tacxFECWrite, [.write, .writeWithoutResponse]),
        ])]
    }
    /// Nothing happens on ticks.
    var tickInterval: Double { 3600 }
    func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? { nil }
    mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome { .accepted([]) }
    mutating func tick(now: Double) -> [EmulatedOutput] { [] }
}

/// A trainer command's wait for its confirmation runs on the connection's clock.
@Suite struct TrainerControlClockTests {
    @Test func anUnconfirmedFECCommandGivesUpAfterItsTimeoutOnTheConnectionsClock() async throws {
        let manual = ManualClock()
        let address = BluetoothAddress.randomStatic(0xB1DE_5100_0000 | UInt64.random(in: 1...0xFFFF))
        let (message, waited, wall) = try await guarded("an unconfirmed FE-C command", seconds: 120) {
            try await manual.advancing { () -> (String, Duration, Duration) in
                let world = VirtualWorld(clock: BluetideClock(manual))
                do {
                    _ = try await world.emulate([SilentFECTrainer()], address: address)
                    let bluetooth = try await world.openHost()
                    let connection = try await bluetooth.central.connect(to: address, timeout: .seconds(30))
                    let control = FECTrainerControl(
                        connection: connection, device: RideDevice(role: .fecTrainer, address: address.string), timeout: .seconds(5))
                    let before = manual.now
                    let wallBefore = ContinuousClock.now
                    var message = ""
                    do { try await control.setTargetPower(watts: 200) } catch { message = "\(error)" }
                    let waited = before.duration(to: manual.now)
                    let wall = wallBefore.duration(to: .now)
                    await world.close()
                    return (message, waited, wall)
                } catch {
                    await world.close()
                    throw error
                }
            }
        }
        #expect(message.contains("no page 71 within 5"), "\(message)")
        // Five seconds of the manual clock, not five of the wall clock, during which the manual
        // clock would have run far past it. A starved machine may let some virtual time pass
        // (up to 100× the real time it loses) before the failure reaches this task — CI once saw
        // 5.57 s — so a wait past 7 s counts only if it also took five real seconds.
        #expect(waited >= .seconds(5), "\(waited)")
        #expect(waited < .seconds(7) || wall < .seconds(5), "\(waited) of virtual time in \(wall)")
    }
}
