import Bluetide
import BluetideEmulation
import BluetideDeviceModels
import BluetideSupport
import Foundation
import Testing
@testable import BluetideRing

/// The ring session against the emulated ring, in one process.
@Suite(.timeLimit(.minutes(2))) struct RingSessionTests {
    @Test func openSetsTheClockAndCommandsGetTheirReplies() async throws {
        try await RingRig.with(90, "ring commands") { rig in
            let ring = try await rig.open()
            let capabilities = try #require(await ring.capabilities)
            #expect(capabilities.supportsSpO2 && capabilities.usesNewSleepProtocol)
            let battery = try await ring.battery()
            #expect(battery.levelPercent > 0 && battery.levelPercent <= 100)
            let info = try await ring.deviceInformation()
            #expect(info.firmware == "R02_3.00.06_240523")
            #expect(info.hardware == "R02_V3.0")
            let settings = try await ring.setHeartRateLog(enabled: true, intervalMinutes: 10)
            #expect(settings.enabled && settings.intervalMinutes == 10)
            // Today's log (the emulated clock started now and was set to now, UTC).
            let today = RingCalendar.utc.day(at: Date())
            let log = try #require(try await ring.heartRateLog(day: today))
            #expect(log.bpmBySlot.count == 288)
            // Seven days back: steps exist; eight days back: none.
            #expect(try await ring.steps(daysAgo: 6) != nil)
            #expect(try await ring.steps(daysAgo: 8) == nil)
            #expect(try await ring.heartRateLog(day: today - 9) == nil)
            let sleep = try await ring.sleep()
            #expect(sleep.days.count == 7)
            #expect(try await ring.spo2History().days.count == 7)
            try await ring.findDevice()
            await ring.close()
        }
    }

    @Test func realTimeHeartRateStreamsUntilClosedAndCloseStopsTheMeasurement() async throws {
        try await RingRig.with(60, "real-time readings") { rig in
            let ring = try await rig.open()
            try await ring.startMeasurement(.heartRate)
            var values: [UInt8] = []
            for await r in ring.readings where r.type == .heartRate {
                values.append(r.value)
                if values.filter({ $0 != 0 }).count >= 2 { break }
            }
            #expect(values.prefix(2) == [0, 0])  // "measuring" first, like the real ring
            #expect(values.dropFirst(2).allSatisfy { (40...200).contains($0) })
            await ring.close()
            // The stop request was written before the disconnect.
            var sawStop = false
            for await event in rig.peripheral.events {
                if case let .wrote(_, _, _, value, _) = event, value.first == COLMIOpcode.realTimeStop { sawStop = true; break }
                if case .disconnected = event { break }
            }
            #expect(sawStop)
        }
    }

    @Test func rawStreamAndContinuousHeartRateAreStoppedOnClose() async throws {
        try await RingRig.with(60, "raw stream and continuous HR") { rig in
            let ring = try await rig.open()
            try await ring.startRawStream()
            try await ring.startContinuousHeartRate()
            var kinds: Set<String> = []
            for await sample in ring.rawSamples {
                kinds.insert(sample.kind)
                #expect(sample.packet.first == COLMIOpcode.rawSensor && sample.seconds >= 0)
                if kinds == ["ppg", "accelerometer", "spo2"] { break }
            }
            var bpm: UInt8 = 0
            for await event in ring.events {
                if case let .continuousHeartRate(value) = event { bpm = value; break }
            }
            #expect((40...200).contains(bpm))
            await ring.close()
            // Both stop requests were written before the disconnect: A1 02 and 1E 02.
            var stops: [[UInt8]] = []
            for await event in rig.peripheral.events {
                if case let .wrote(_, _, _, value, _) = event, [COLMIOpcode.rawSensor, COLMIOpcode.continuousHeartRate].contains(value.first) {
                    stops.append(Array(value.prefix(2)))
                }
                if case .disconnected = event { break }
            }
            #expect(stops.contains([0xA1, 0x02]) && stops.contains([0x1E, 0x02]), "\(stops)")
        }
    }

    @Test func aCorruptReplyIsAskedForAgainThenSucceeds() async throws {
        try await RingRig.with(model: CorruptingRing(opcode: COLMIOpcode.battery, corruptions: 1), clock: ManualClock(), 60, "battery after a corrupt reply") { rig in
            let ring = try await rig.open()
            let battery = try await ring.battery()
            #expect(battery.levelPercent > 0)
            #expect(await ring.corruptPackets == 1)
            await ring.close()
        }
    }

    @Test func corruptRepliesEveryTimeEndInAClearError() async throws {
        try await RingRig.with(model: CorruptingRing(opcode: COLMIOpcode.battery, corruptions: 100), clock: ManualClock(), 60, "battery with corrupt replies") { rig in
            let ring = try await rig.open(retries: 2)
            do {
                _ = try await ring.battery()
                Issue.record("a corrupt reply was accepted")
            } catch let error as RingError {
                guard case let .noValidReply(command, attempts, last) = error else { Issue.record("\(error)"); return }
                #expect(command == "battery")
                #expect(attempts == 3)
                #expect(last.contains("checksum"))
                #expect(!"\(error)".contains("\n"))
            }
            #expect(await ring.corruptPackets == 3)
            await ring.close()
        }
    }

    @Test func theEmulatedRingTakesOneCentralAtATime() async throws {
        try await RingRig.with(90, "second central") { rig in
            let ring = try await rig.open()
            // While connected, the ring does not advertise: a second central finds nothing.
            let other = try await Bluetooth.open(transport: "virtual:\(rig.linkName)")
            let seen = try await other.central.discover(timeout: .seconds(2))
            #expect(!seen.contains { $0.address == rig.ringAddress })
            await ring.close()
            // Once free, it advertises again.
            var found = false
            for _ in 0..<5 where !found {
                found = try await other.central.discover(timeout: .seconds(2)).contains { $0.address == rig.ringAddress }
            }
            #expect(found)
            await other.close()
        }
    }
}
