import Bluetide
import Foundation

/// How far a sync has got, for a progress bar.
public struct RingSyncProgress: Sendable, Hashable {
    /// Steps done.
    public var done: Int
    /// Steps in all.
    public var total: Int
    /// What was just fetched, e.g. `heart rate 2026-11-20`.
    public var step: String
}

/// What a sync did.
public struct RingSyncReport: Sendable, Hashable, Codable {
    /// New rows in the database.
    public var added: Int
    /// Requests made (day-kinds fetched).
    public var fetched: Int
    /// Day-kinds skipped because an earlier sync stored them completely.
    public var skipped: Int
    /// Ring days covered, oldest first (YYYY-MM-DD).
    public var days: [String]
    /// Kinds the ring does not have (it gave no valid reply; e.g. HRV on older firmware).
    public var unavailable: [String]
}

/// Why a sync stopped early; everything stored before stays stored.
public struct RingSyncInterrupted: Error, Sendable, CustomStringConvertible {
    /// What had been stored when it stopped.
    public var report: RingSyncReport
    /// The failure.
    public var cause: any Error
    /// The step that failed.
    public var step: String

    public var description: String {
        if cause is RingStoreError {
            return "sync stopped at \(step) after adding \(report.added) samples: \(cause)"
        }
        return "sync stopped at \(step) after adding \(report.added) samples (kept): \(cause); run `bluetide ring sync` again to fetch the rest"
    }
}

/// Fetches every history kind from a ring into a ``RingStore``.
///
/// Per-day kinds (heart-rate log, steps, stress, HRV) are fetched for each of the last
/// `days` ring days, except days an earlier sync stored completely (a day is complete once it is
/// over on the ring's clock). Whole-history kinds (sleep, SpO2, temperature: V2 big data) are
/// fetched once and split by ring day. Each day of each kind is stored as it arrives.
public struct RingSync: Sendable {
    /// The session.
    public let ring: Ring
    /// Where samples go.
    public let store: RingStore
    /// The ring's identity in the store (its address).
    public let ringID: String

    public init(ring: Ring, store: RingStore, ringID: String) {
        self.ring = ring
        self.store = store
        self.ringID = ringID
    }

    /// The number of days to fetch when none is given: back to the day of the last sync, at least
    /// 1 and at most 7.
    public func defaultDays(now: Date? = nil) throws -> Int {
        let now = now ?? ring.options.clock()
        guard let last = try store.lastSync(ring: ringID) else { return 7 }
        let calendar = ring.options.calendar
        return min(7, max(1, calendar.day(at: now) - calendar.day(at: last) + 1))
    }

    /// Runs the sync; `progress` is called after every step.
    /// `added` is called with the samples each step stored that no earlier sync had (so a
    /// re-sync hands over nothing twice), as they are stored.
    public func run(days: Int, now: Date? = nil, progress: @Sendable (RingSyncProgress) -> Void = { _ in },
                    added: @Sendable ([RingSample]) -> Void = { _ in }) async throws -> RingSyncReport {
        let calendar = ring.options.calendar
        let now = now ?? ring.options.clock()
        let today = calendar.day(at: now)
        let dayList = (0..<max(1, days)).reversed().map { today - $0 }
        var report = RingSyncReport(added: 0, fetched: 0, skipped: 0, days: dayList.map(RingCalendar.label(day:)), unavailable: [])
        // Stress and HRV only when the ring says it has them (older firmware never answers).
        let caps = await ring.capabilities
        var perDay: [(kind: String, label: String)] = [(RingSampleKind.heartRate, "heart rate"), (RingSampleKind.steps, "steps")]
        if caps?.supportsStress ?? true { perDay.append((RingSampleKind.stress, "stress")) }
        if caps?.supportsHRV ?? true { perDay.append((RingSampleKind.hrv, "HRV")) }
        let total = dayList.count * perDay.count + 3
        var done = 0
        var step = ""

        func save(_ rows: [RingSample], kind: String, day: Int) throws {
            let new = try store.storeNew(rows, kind: kind, day: RingCalendar.label(day: day), complete: day < today, ring: ringID, at: now)
            report.added += new.count
            if !new.isEmpty { added(new) }
        }

        do {
            for (kind, label) in perDay {
                var missing = false
                for day in dayList {
                    step = "\(label) \(RingCalendar.label(day: day))"
                    defer {
                        done += 1
                        progress(RingSyncProgress(done: done, total: total, step: step))
                    }
                    if missing { continue }
                    if try store.isComplete(kind: kind, day: RingCalendar.label(day: day), ring: ringID) {
                        report.skipped += 1
                        continue
                    }
                    report.fetched += 1
                    let ago = today - day
                    var rows: [RingSample] = []
                    do {
                        switch kind {
                        case RingSampleKind.heartRate:
                            if let log = try await ring.heartRateLog(day: day) { rows = RingHistoryRows.heartRate(log, day: day, calendar: calendar) }
                        case RingSampleKind.steps:
                            if let detail = try await ring.steps(daysAgo: ago) { rows = RingHistoryRows.steps(detail, calendar: calendar) }
                        case RingSampleKind.stress:
                            if let h = try await ring.stress(daysAgo: ago) { rows = RingHistoryRows.halfHour(h, day: day, calendar: calendar) }
                        default:
                            if let h = try await ring.hrv(daysAgo: ago) { rows = RingHistoryRows.halfHour(h, day: day, calendar: calendar) }
                        }
                    } catch RingError.noValidReply where kind == RingSampleKind.hrv || kind == RingSampleKind.stress {
                        // Some firmware never answers these: skip the kind, keep going (spec §9).
                        report.unavailable.append(kind)
                        missing = true
                        continue
                    }
                    if kind == RingSampleKind.steps {
                        for k in [RingSampleKind.steps, RingSampleKind.calories, RingSampleKind.distance] {
                            try save(rows.filter { $0.kind == k }, kind: k, day: day)
                        }
                    } else {
                        try save(rows, kind: kind, day: day)
                    }
                }
            }
            let first = dayList.first ?? today
            for whole in WholeHistory.allCases {
                step = whole.rawValue
                defer {
                    done += 1
                    progress(RingSyncProgress(done: done, total: total, step: step))
                }
                guard let caps = await ring.capabilities, whole.isSupported(by: caps) else { continue }
                let groups: [(day: Int, rows: [RingSample])]
                do {
                    groups = try await whole.fetch(from: ring, today: today, calendar: calendar)
                } catch RingError.noValidReply {
                    report.unavailable.append(whole.rawValue)
                    continue
                }
                report.fetched += 1
                for group in groups where group.day >= first {
                    for kind in whole.kinds {
                        try save(group.rows.filter { $0.kind == kind }, kind: kind, day: group.day)
                    }
                }
            }
        } catch {
            try? store.recordSync(ring: ringID, started: now, finished: ring.options.clock(), added: report.added, status: "interrupted")
            throw RingSyncInterrupted(report: report, cause: error, step: step)
        }
        try store.recordSync(ring: ringID, started: now, finished: ring.options.clock(), added: report.added, status: "complete")
        return report
    }
}

/// The kinds the ring sends whole (every day it holds, one V2 big-data frame each).
enum WholeHistory: String, CaseIterable {
    case sleep, spo2 = "SpO2", temperature

    /// The sample kinds it becomes.
    var kinds: [String] {
        switch self {
        case .sleep: [RingSampleKind.sleepLight, RingSampleKind.sleepDeep, RingSampleKind.sleepREM, RingSampleKind.sleepAwake]
        case .spo2: [RingSampleKind.spo2]
        case .temperature: [RingSampleKind.temperature]
        }
    }

    /// Whether the ring's capability map says it has this history.
    func isSupported(by caps: COLMICapabilities) -> Bool {
        switch self {
        case .sleep: true
        case .spo2: caps.supportsSpO2
        case .temperature: caps.supportsTemperature
        }
    }

    /// Fetches it and splits it by ring day.
    func fetch(from ring: Ring, today: Int, calendar: RingCalendar) async throws -> [(day: Int, rows: [RingSample])] {
        switch self {
        case .sleep: RingHistoryRows.sleep(try await ring.sleep(), today: today, calendar: calendar)
        case .spo2: RingHistoryRows.spo2(try await ring.spo2History(), today: today, calendar: calendar)
        case .temperature: RingHistoryRows.temperature(try await ring.temperatureHistory(), today: today, calendar: calendar)
        }
    }
}
