import Bluetide
import BluetideDeviceModels
import BluetideSupport
import Foundation
import Testing
@testable import BluetideCommands
@testable import BluetideRing

/// The COLMI family: names to models, and each emulated member.
@Suite struct RingFamilyNameTests {
    @Test func advertisedNamesPickTheModel() {
        // Name patterns of Gadgetbridge's ring coordinators; R02_341C from colmi_r02_client #6.
        let cases: [(String, String?)] = [
            ("R02_341C", "r02"), ("R03_0A1B", "r03"), ("R06_FFFF", "r06"), ("COLMI R07_1234", "r07"), ("R09_00AA", "r09"),
            ("COLMI R09_00AA", "r09"), ("COLMI R10_1A2B", "r10"), ("R10_1A2B", "r10"), ("R11_12AB", "r11"), ("R11C_12AB", "r11"),
            ("COLMI R12_0001", "r12"), ("H59_0001", "h59"), ("Bluetide HRM", nil), ("RY02_1234", nil),
        ]
        for (name, id) in cases {
            #expect(COLMIRingModelInfo.matching(name: name)?.id == id, "\(name)")
        }
        // Every emulator profile's name is its own model's.
        for info in COLMIRingModelInfo.family where info.id != "r07" {
            let model = COLMIRingModel(seed: 1, model: info)
            #expect(model.name == "colmi-\(info.id)")
            #expect(COLMIRingModelInfo.matching(name: model.advertising.localName ?? "")?.id == info.id, "\(info.id)")
        }
    }
}

@Suite(.timeLimit(.minutes(2))) struct RingFamilySessionTests {
    static func model(_ id: String) throws -> COLMIRingModel {
        COLMIRingModel(seed: 4, model: try #require(COLMIRingModelInfo.withID(id)))
    }

    @Test func theR10IsRecognisedItsSettingsRoundTripAndItsSleepNeedsTheTwoByteRequest() async throws {
        try await RingRig.with(model: try Self.model("r10"), clock: ManualClock(), 90, "R10") { rig in
            let ring = try await rig.open(retries: 0)
            #expect(await ring.model?.id == "r10")
            #expect(await ring.capabilities?.supportsTemperature == true)
            let changes = try ["temperature=off", "hr-interval=20", "weight=80", "sleep-goal=420", "time-format=12h"].map { try RingSettingChange(parsing: $0) }
            let after = try await ring.changeSettings(changes)
            #expect(after.monitoring[.temperature] == false && after.heartRateLog.intervalMinutes == 20)
            #expect(after.profile.weightKilograms == 80 && after.goals.sleepMinutes == 420 && after.profile.timeFormat == 1)
            // Sleep: the session sends `ff 01`, which the R10 answers.
            let sleep = try await ring.sleep()
            #expect(!sleep.days.isEmpty)
            // The 1-byte request gets no answer from it (the reply limit passes in virtual time).
            do {
                _ = try await ring.exchange(COLMIBigDataFrame.sleepRequest(.all).bytes, .bigData(id: COLMIBigDataID.sleep), "sleep (1 byte)", bigData: true)
                Issue.record("the R10 answered the 1-byte sleep request")
            } catch let error as RingError {
                #expect("\(error)".contains("no valid reply"))
            }
            // A display key fails naming the model.
            do {
                try await ring.changeSettings([try RingSettingChange(parsing: "display=off")])
                Issue.record("display accepted")
            } catch let error as RingError {
                #expect("\(error)".hasPrefix("the COLMI R10 has no screen"), "\(error)")
            }
            await ring.close()
        }
    }

    @Test func theR12TakesDisplaySettings() async throws {
        try await RingRig.with(model: try Self.model("r12"), 60, "R12") { rig in
            let ring = try await rig.open()
            #expect(await ring.model?.displayName == "COLMI R12")
            #expect(await ring.hasScreen)
            let after = try await ring.changeSettings(try ["brightness=5", "hand=right", "display-from=06:30"].map { try RingSettingChange(parsing: $0) })
            #expect(after.display == COLMIDisplaySettings(enabled: true, leftHand: false, brightness: 5, allDay: false, fromMinuteOfDay: 390, toMinuteOfDay: 1320))
            #expect(after.text(of: .displayFrom) == "06:30")
            await ring.close()
        }
    }

    @Test func theR09AsksForABond() async throws {
        try await RingRig.with(model: try Self.model("r09"), 60, "R09") { rig in
            let ring = try await rig.open()
            #expect(await ring.model?.mayAskForBond == true)
            #expect(try await ring.deviceSupportFlags() & 0x08 != 0)
            await ring.close()
        }
    }
}

/// Bonding when the ring asks for it (`3C` flag 0x08).
@Suite(.timeLimit(.minutes(2))) struct RingBondingTests {
    @Test func anR09AskingForABondGetsAnEncryptedLinkAndAnR02IsNotAsked() async throws {
        try await RingRig.with(model: try RingFamilySessionTests.model("r09"), 60, "R09 bond") { rig in
            let ring = try await rig.open()
            #expect(await ring.bondRequested)
            #expect(await ring.connection.securityLevel > .none)
            // Commands still work on the encrypted link.
            #expect(try await ring.battery().levelPercent > 0)
            await ring.close()
        }
        try await RingRig.with(model: try RingFamilySessionTests.model("r02"), 60, "R02 no bond") { rig in
            let ring = try await rig.open()
            #expect(await !ring.bondRequested)
            #expect(await ring.connection.securityLevel == .none)
            // Not even asked: no 3C request was written.
            await ring.close()
            for await event in rig.peripheral.events {
                if case let .wrote(_, _, _, value, _) = event { #expect(value.first != COLMIOpcode.deviceSupport) }
                if case .disconnected = event { break }
            }
        }
    }
}
