import BluetideProfiles
import BluetideReflex
import BluetideReflexCoach
import Foundation
import Testing

/// The queries behind the coach's store commands (athletes, history, export, chart, board,
/// progress), run on an in-memory store without the argument parser.
@Suite("CoachQueries")
struct CoachQueriesTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// Ana with two complete Jab sessions (mean 400 ms, then 300 ms) and Ben with none.
    func gym() throws -> CoachStore {
        let store = try CoachStore.inMemory()
        let ana = try store.addAthlete(Athlete(name: "Ana Ruiz", created: start))
        _ = try store.addAthlete(Athlete(name: "Ben", created: start))
        _ = try store.saveSequence(name: "Jab", targets: [0, 3], milliseconds: [900, 900], at: start)
        for (round, times) in [[500, 300], [350, 250]].enumerated() {
            let began = start.addingTimeInterval(Double(round) * 3600)
            let id = try store.startSession(athleteID: ana.id ?? -1, sequenceNamed: "Jab", started: began)
            for (step, ms) in times.enumerated() {
                try store.appendStep(sessionID: id, response: PunchResponse(reactionTimeMilliseconds: UInt32(ms), target: step == 0 ? 0 : 3,
                                                                             hit: true, step: UInt16(step)))
            }
            try store.finishSession(id: id, ended: began.addingTimeInterval(10), complete: true)
        }
        return store
    }

    @Test func listCountsEachAthletesSessions() throws {
        let entries = try AthleteRoster.list(in: try gym())
        #expect(entries.map(\.athlete.name) == ["Ana Ruiz", "Ben"])
        #expect(entries.map(\.sessions) == [2, 0])
        #expect(try AthleteRoster.list(in: try CoachStore.inMemory()).isEmpty)
    }

    @Test func profileGathersWeighInsSessionsAndStrap() throws {
        let store = try gym()
        let day = try #require(CalendarDate(year: 2024, month: 3, day: 2))
        let (athlete, entry) = try AthleteRoster.recordWeight("ana ruiz", kilograms: 63.5, on: day, in: store)
        #expect(athlete.name == "Ana Ruiz" && entry.kilograms == 63.5)
        _ = try AthleteRoster.pairStrap("Ana Ruiz", device: "Strap-1", in: store)
        let profile = try AthleteRoster.profile("Ana Ruiz", in: store)
        #expect(profile.weights.map(\.date) == [day])
        #expect(profile.sessions == 2)
        #expect(profile.strap == "Strap-1")
        #expect(try AthleteRoster.removeStrap("Ana Ruiz", in: store).removed)
        #expect(try AthleteRoster.removeStrap("Ana Ruiz", in: store).removed == false)
        #expect(try AthleteRoster.profile("Ana Ruiz", in: store).strap == nil)
    }

    @Test func addingATakenNameIsRefusedWhateverItsCase() throws {
        let store = try gym()
        #expect(throws: CoachInputError(field: "NAME", .athleteExists(name: "BEN"))) {
            try AthleteRoster.add(Athlete(name: "BEN", created: start), to: store)
        }
        #expect(CoachInputError(field: "NAME", .athleteExists(name: "BEN")).description == "an athlete named \"BEN\" exists already")
        #expect(try AthleteRoster.add(Athlete(name: "Cleo", created: start), to: store).id != nil)
        #expect(try store.athletes().count == 3)
    }

    @Test func historyHasEverySessionAndTheTrend() throws {
        let store = try gym()
        let history = try AthleteHistory.of("Ana Ruiz", in: store)
        #expect(history.sessions.map(\.overall.meanMilliseconds) == [400, 300])
        let overall = try #require(history.overall)
        #expect(overall.perTarget.map(\.target) == [0, 3])
        #expect(overall.trend.millisecondsPerSession == -100)
        let empty = try AthleteHistory.of("Ben", in: store)
        #expect(empty.sessions.isEmpty && empty.overall == nil)
    }

    @Test func chartAndExportFindTheAthletesSessions() throws {
        let store = try gym()
        let id = try #require(try store.sessions().first?.id)
        let chart = try AthleteHistory.chart(id, of: "Ana Ruiz", in: store)
        #expect(chart.svg.contains("<svg") && chart.svg.contains("Ana Ruiz, session \(id)"))
        #expect(throws: CoachInputError(field: "--session", .noSuchSession(athlete: "Ben", id: id))) {
            try AthleteHistory.chart(id, of: "Ben", in: store)
        }
        #expect(CoachInputError(field: "--session", .noSuchSession(athlete: "Ben", id: 7)).description == "Ben has no session 7 (see history)")
        #expect(try AthleteHistory.csv(of: "Ana Ruiz", perSession: false, in: store).rows == 4)
        #expect(try AthleteHistory.csv(of: "Ana Ruiz", perSession: true, in: store).rows == 2)
        #expect(try AthleteHistory.csv(of: "Ben", perSession: true, in: store).rows == 0)
    }

    @Test func boardsRankBestSessionsAndRefuseAnUnknownSequence() throws {
        let store = try gym()
        let boards = try Leaderboards.boards(sequence: nil, period: .all, weightClass: nil, limit: 10, now: start, in: store)
        #expect(boards.map(\.sequence) == ["Jab"])
        #expect(boards.first?.entries.map(\.athlete.name) == ["Ana Ruiz"])
        #expect(boards.first?.entries.first?.scoreMilliseconds == 300)
        #expect(throws: CoachInputError(field: "--sequence", .noSuchSequence(name: "Hook", known: ["Jab"]))) {
            try Leaderboards.boards(sequence: "Hook", period: .all, weightClass: nil, limit: 10, now: start, in: store)
        }
        #expect(CoachInputError(field: "--sequence", .noSuchSequence(name: "Hook", known: [])).description
            == "no sequence named \"Hook\" (known: none)")
        #expect(try Leaderboards.boards(sequence: nil, period: .all, weightClass: nil, limit: 10, now: start, in: try CoachStore.inMemory()).isEmpty)
    }

    @Test func progressFollowsTheSessions() throws {
        let report = try ProgressReport.of("Ana Ruiz", in: try gym())
        #expect(report.progress.points.count == 2)
        #expect(report.progress.mean.perSession == -100)
        #expect(report.chart.contains("Ana Ruiz: progress per session"))
        #expect(report.results.flatMap(\.steps).count == 4)
    }
}
