import Bluetide
import BluetideDeviceModels
import Foundation
import Synchronization
import GRDB
import Testing
@testable import BluetideRing

/// Syncing the emulated ring's week into SQLite: values, idempotence, a link lost midway.
@Suite(.timeLimit(.minutes(3))) struct RingSyncTests {
    /// What the emulated ring (seed 3) sends: its synthetic person.
    let person = COLMISyntheticData(seed: 3)

    @Test func aSyncStoresTheWeekWithTheRingsValuesAndASecondSyncAddsNothing() async throws {
        try await RingRig.with(150, "two syncs") { rig in
            let store = try RingStore.inMemory()
            let ring = try await rig.open()
            let sync = RingSync(ring: ring, store: store, ringID: "ring-1")
            let now = Date()
            let first = try await sync.run(days: 7, now: now)
            #expect(first.days.count == 7)
            #expect(first.added > 0)
            #expect(first.unavailable.isEmpty)
            let count = try store.sampleCount()
            #expect(count == first.added)

            // Heart rate of a past day is exactly what the ring holds (every 30 min by default).
            let day = RingCalendar.utc.day(at: now) - 2
            let start = Date(timeIntervalSince1970: TimeInterval(day) * 86_400)
            let hr = try store.samples(from: start, to: start.addingTimeInterval(86_400), kinds: [RingSampleKind.heartRate])
            #expect(hr.count == 48)
            for sample in hr {
                let minute = Int(sample.time.timeIntervalSince(start)) / 60
                #expect(sample.value == Double(person.heartRate(day: day, minute: minute)))
                #expect(sample.unit == "bpm")
            }
            // Steps of that day add up to the ring's quarter-hour steps.
            let steps = try store.samples(from: start, to: start.addingTimeInterval(86_400), kinds: [RingSampleKind.steps])
            #expect(steps.reduce(0) { $0 + $1.value } == Double((0..<96).reduce(0) { $0 + Int(person.steps(day: day, quarter: $1)) }))
            // Sleep of the night ending that day: its minutes are the window's length.
            let window = person.sleepWindow(day: day)
            let nightStart = start.addingTimeInterval(TimeInterval(window.bedMinute - 1440) * 60)
            let sleep = try store.samples(
                from: nightStart, to: start.addingTimeInterval(TimeInterval(window.wakeMinute) * 60),
                kinds: [RingSampleKind.sleepLight, RingSampleKind.sleepDeep, RingSampleKind.sleepREM, RingSampleKind.sleepAwake])
            #expect(sleep.reduce(0) { $0 + Int($1.value) } == 1440 - window.bedMinute + window.wakeMinute)
            #expect(sleep.first?.time == nightStart)

            let second = try await sync.run(days: 7, now: now)
            #expect(second.added == 0)
            #expect(second.skipped == 6 * 4)  // past days of the per-day kinds are complete
            #expect(try store.sampleCount() == count)
            await ring.close()
        }
    }

    @Test func aLinkLostMidSyncKeepsWhatWasStoredAndTheNextSyncFinishes() async throws {
        try await RingRig.with(150, "interrupted then resumed sync") { rig in
            let store = try RingStore.inMemory()
            let reference = try RingStore.inMemory()
            let now = Date()
            let ring = try await rig.open()
            let dropped = Flag()
            do {
                _ = try await RingSync(ring: ring, store: store, ringID: "ring-1").run(days: 7, now: now) { progress in
                    if progress.done == 5, dropped.set() { Task { await rig.dropLinks() } }
                }
                Issue.record("the sync did not notice the lost link")
            } catch let interrupted as RingSyncInterrupted {
                #expect(interrupted.report.added > 0)
                #expect("\(interrupted)".contains("run `bluetide ring sync` again"))
                #expect(try store.sampleCount() == interrupted.report.added)
            }
            await ring.close()
            let kept = try store.sampleCount()

            let again = try await rig.open()
            let second = try await RingSync(ring: again, store: store, ringID: "ring-1").run(days: 7, now: now)
            #expect(second.skipped > 0)
            _ = try await RingSync(ring: again, store: reference, ringID: "ring-1").run(days: 7, now: now)
            await again.close()
            #expect(try store.sampleCount() == kept + second.added)
            #expect(try store.samples() == reference.samples())
        }
    }

    @Test func theRingKeepsLocalTimeAndSamplesAreStoredInUTC() async throws {
        try await RingRig.with(90, "sync in UTC+05:30") { rig in
            let store = try RingStore.inMemory()
            let india = RingCalendar(timeZone: TimeZone(secondsFromGMT: 5 * 3600 + 1800)!)
            let ring = try await rig.open(calendar: india)
            let now = Date()
            _ = try await RingSync(ring: ring, store: store, ringID: "ring-1").run(days: 3, now: now)
            await ring.close()
            // Ring-local midnight of two days ago is 18:30 UTC the day before.
            let day = india.day(at: now) - 2
            let localMidnightUTC = Date(timeIntervalSince1970: TimeInterval(day) * 86_400 - 19_800)
            let hr = try store.samples(from: localMidnightUTC, to: localMidnightUTC.addingTimeInterval(86_400), kinds: [RingSampleKind.heartRate])
            #expect(hr.first?.time == localMidnightUTC)
            #expect(hr.first?.value == Double(person.heartRate(day: day, minute: 0)))
        }
    }

    @Test func aLockedDatabaseIsOneLineNamingWhatWasNotStoredAndLosesNothing() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ring-lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("ring.sqlite").path
        let store = try RingStore(path: path, busyTimeout: 0.2)
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        try store.store([RingSample(time: t, kind: "heart_rate", value: 60, unit: "bpm")], kind: "heart_rate", day: "2027-01-15", complete: true, ring: "r", at: t)
        // Another program holds the write lock while we try to store.
        let other = try DatabaseQueue(path: path)
        try other.inTransaction(.exclusive) { _ in
            do {
                try store.store(
                    [RingSample(time: t.addingTimeInterval(300), kind: "heart_rate", value: 61, unit: "bpm")], kind: "heart_rate",
                    day: "2027-01-15", complete: true, ring: "r", at: t)
                Issue.record("stored into a locked database")
            } catch let error as RingStoreError {
                let text = "\(error)"
                #expect(text.contains("store 1 heart_rate samples of 2027-01-15"))
                #expect(text.contains("locked"))
                #expect(!text.contains("\n"))
            }
            return .rollback
        }
        #expect(try store.samples().map(\.value) == [60])
    }

    @Test func aFullDiskStopsTheSyncWithOneLineAndKeepsEveryDayAlreadyStored() async throws {
        try await RingRig.with(90, "sync into a full database") { rig in
            let store = try RingStore.inMemory()
            // SQLite's page limit makes the database "full" after a few days of samples.
            try await store.database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 12") }
            let ring = try await rig.open()
            do {
                _ = try await RingSync(ring: ring, store: store, ringID: "ring-1").run(days: 7)
                Issue.record("the sync did not notice the full disk")
            } catch let interrupted as RingSyncInterrupted {
                let text = "\(interrupted)"
                #expect(text.contains("is full"), "\(text)")
                #expect(text.contains("could not store "), "\(text)")
                #expect(!text.contains("\n"))
                #expect(interrupted.report.added > 0)
                #expect(try store.sampleCount() == interrupted.report.added)
            }
            await ring.close()
        }
    }

    @Test func historyRowsPutEveningSleepOnThePreviousDayAndSkipEmptySlots() throws {
        let night = COLMISleepDay(daysAgo: 1, startMinute: 1343, endMinute: 542, periods: [
            COLMISleepPeriod(stage: .light, minutes: 54), COLMISleepPeriod(stage: .noData, minutes: 10), COLMISleepPeriod(stage: .deep, minutes: 17),
        ])
        let groups = RingHistoryRows.sleep(COLMISleepHistory(days: [night]), today: 20_000, calendar: .utc)
        #expect(groups.map(\.day) == [19_999])
        let rows = try #require(groups.first?.rows)
        #expect(rows.map(\.kind) == [RingSampleKind.sleepLight, RingSampleKind.sleepDeep])
        #expect(rows[0].time == Date(timeIntervalSince1970: 19_998 * 86_400 + 1343 * 60))
        #expect(rows[1].time == Date(timeIntervalSince1970: 19_998 * 86_400 + (1343 + 64) * 60))
        let log = COLMIHeartRateLog(requestTimestamp: 0, bpmBySlot: [0, 70] + Array(repeating: 0, count: 286))
        #expect(RingHistoryRows.heartRate(log, day: 1, calendar: .utc) == [
            RingSample(time: Date(timeIntervalSince1970: 86_400 + 300), kind: RingSampleKind.heartRate, value: 70, unit: "bpm"),
        ])
    }
}

/// Set once, from any thread.
final class Flag: Sendable {
    private let value = Mutex(false)
    /// True the first time only.
    func set() -> Bool { value.withLock { was in defer { was = true }; return !was } }
}
