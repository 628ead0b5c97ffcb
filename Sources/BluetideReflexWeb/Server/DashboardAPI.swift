import BluetideReflex
import Foundation
import Hummingbird

/// JSON shapes of the API (`/api/...`).
enum DashboardJSON {
    /// `/api/athletes/{id}`.
    struct AthleteDetail: Encodable, Sendable {
        var athlete: Athlete
        var weights: [WeightEntry]
        var statistics: AthleteStatistics
        var sessions: [SessionStatistics]
    }

    /// `/api/athletes`: one line per athlete.
    struct AthleteLine: Encodable, Sendable {
        var athlete: Athlete
        var sessions: Int
    }

    /// `/api/sessions/{id}`.
    struct SessionDetail: Encodable, Sendable {
        var statistics: SessionStatistics
        var steps: [StepResult]
    }

    /// `POST /api/run` accepted.
    struct RunStarted: Encodable, Sendable {
        var run: Int
        var athlete: String
        var sequence: String
    }
}

extension DashboardServer {
    /// `/api/athletes`, `/api/athletes/{id}`, `/api/sessions/{id}`, `/api/sequences`, `/api/run`
    /// (GET state; POST athlete + sequence to start), `/api/run/stop`.
    func addAPIRoutes(to router: Router<BasicRequestContext>) {
        let store = pages.store
        let runs = self.runs
        router.get("/api/athletes") { _, _ in
            let sessions = try store.sessions()
            return DashboardResponses.json(try store.athletes().map { athlete in
                DashboardJSON.AthleteLine(athlete: athlete, sessions: sessions.filter { $0.athleteId == athlete.id }.count)
            })
        }
        router.get("/api/athletes/:id") { _, context in
            guard let id = context.parameters.get("id", as: Int64.self), let athlete = try store.athlete(id: id) else {
                return DashboardResponses.json(APIError("no athlete with id \(context.parameters.get("id") ?? "")"), status: .notFound)
            }
            let results = try store.results(athleteID: id)
            return DashboardResponses.json(DashboardJSON.AthleteDetail(
                athlete: athlete, weights: try store.weightHistory(athleteID: id), statistics: ReflexStatistics.athlete(results),
                sessions: results.map(ReflexStatistics.session)))
        }
        router.get("/api/sessions/:id") { _, context in
            guard let id = context.parameters.get("id", as: Int64.self), let session = try store.session(id: id) else {
                return DashboardResponses.json(APIError("no session with id \(context.parameters.get("id") ?? "")"), status: .notFound)
            }
            let steps = try store.steps(sessionID: id)
            return DashboardResponses.json(DashboardJSON.SessionDetail(
                statistics: ReflexStatistics.session(SessionResults(session: session, steps: steps)), steps: steps))
        }
        router.get("/api/sequences") { _, _ in DashboardResponses.json(try store.sequences()) }
        router.get("/api/run") { _, _ in DashboardResponses.json(await runs.snapshot) }
        router.post("/api/run") { request, _ in
            let fields = try await DashboardResponses.form(request)
            do {
                let form = try RunForm.parse(fields, store: store)
                let number = try await runs.start(athlete: form.athlete, sequence: form.sequence)
                return DashboardResponses.json(DashboardJSON.RunStarted(run: number, athlete: form.athlete.name, sequence: form.sequence.name),
                                               status: .accepted)
            } catch let errors as FormErrors {
                return DashboardResponses.json(APIError("the run form has errors", fields: errors), status: .unprocessableContent)
            } catch let refusal as RunRefusal {
                return DashboardResponses.json(APIError(refusal.description), status: .conflict)
            }
        }
        router.post("/api/run/stop") { _, _ in
            let stopped = await runs.stop()
            return DashboardResponses.json(["stopped": stopped])
        }
    }
}
