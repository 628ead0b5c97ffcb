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
        let (ticks, virtual, readingTimes) = try await EmulatedRig.with(["ftms-bike"], "ticks on the manual clock") { rig in
            let source = LiveRideSource(
                central: rig.bluetooth.central, requests: [.init(.trainer, device: EmulatedRig.address(0).description)], configuration: .onRig())
            let events = try await source.start()
            let started = rig.manual.now
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
            await source.stop()
            return (ticks, virtual, readingTimes)
        }
        #expect(ticks == [1, 2, 3])
        // The third tick came when the manual clock reached 3 s past the start (a few of the
        // driver's 10 ms steps later at most). On the monotonic clock the devices' own ticks
        // would have moved the manual clock far past it while three real seconds passed.
        #expect(virtual >= .milliseconds(2900) && virtual < .milliseconds(3500), "\(virtual)")
        // Readings are stamped on the same clock: within the three virtual seconds.
        #expect(!readingTimes.isEmpty)
        #expect(readingTimes.allSatisfy { $0 >= 0 && $0 <= 3.5 }, "\(readingTimes)")
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
        let (message, waited) = try await guarded("an unconfirmed FE-C command", seconds: 120) {
            try await manual.advancing { () -> (String, Duration) in
                let world = VirtualWorld(clock: BluetideClock(manual))
                do {
                    _ = try await world.emulate([SilentFECTrainer()], address: address)
                    let bluetooth = try await world.openHost()
                    let connection = try await bluetooth.central.connect(to: address, timeout: .seconds(30))
                    let control = FECTrainerControl(
                        connection: connection, device: RideDevice(role: .fecTrainer, address: address.string), timeout: .seconds(5))
                    let before = manual.now
                    var message = ""
                    do { try await control.setTargetPower(watts: 200) } catch { message = "\(error)" }
                    let waited = before.duration(to: manual.now)
                    await world.close()
                    return (message, waited)
                } catch {
                    await world.close()
                    throw error
                }
            }
        }
        #expect(message.contains("no page 71 within 5"), "\(message)")
        // Five seconds of the manual clock (and a few of its driver's 10 ms steps), not five of
        // the wall clock, during which the manual clock would have run far past it.
        #expect(waited >= .seconds(5) && waited < .milliseconds(5500), "\(waited)")
    }
}
