import BluetideProfiles
import BluetideReflex
import Foundation
import Hummingbird

extension DashboardServer {
    /// Every HTTP route: pages and their forms, static assets and the JSON endpoints.
    func routes() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        addLoginRoutes(to: router)
        let pages = self.pages
        let runs = self.runs
        let store = pages.store

        router.get("/") { _, _ in DashboardResponses.redirect("/athletes") }
        router.get("/static/dashboard.css") { _, _ in DashboardResponses.asset(DashboardStyle.css, contentType: "text/css; charset=utf-8") }
        router.get("/static/dashboard.js") { _, _ in
            DashboardResponses.asset(DashboardScript.javaScript, contentType: "text/javascript; charset=utf-8")
        }

        // Athletes
        router.get("/athletes") { _, _ in DashboardResponses.page(try pages.athletesPage()) }
        router.post("/athletes") { request, _ in
            let fields = try await DashboardResponses.form(request)
            do {
                let form = try AthleteForm.parse(fields)
                try Self.checkUniqueName(form.name, except: nil, store: store)
                let added = try store.addAthlete(form.athlete(created: pages.now()))
                return DashboardResponses.redirect("/athletes/\(added.id ?? -1)")
            } catch let errors as FormErrors {
                return DashboardResponses.page(try pages.athletesPage(fields: fields, errors: errors), status: .unprocessableContent)
            }
        }
        router.get("/athletes/:id") { request, context in
            guard let id = context.parameters.get("id", as: Int64.self),
                  let page = try pages.athletePage(id: id, notice: DashboardResponses.query(request)["saved"] != nil ? "Saved." : nil)
            else { return Self.notFound(pages, "athlete \(context.parameters.get("id") ?? "")", .athletes) }
            return DashboardResponses.page(page)
        }
        router.post("/athletes/:id") { request, context in
            guard let id = context.parameters.get("id", as: Int64.self), var athlete = try store.athlete(id: id) else {
                return Self.notFound(pages, "athlete \(context.parameters.get("id") ?? "")", .athletes)
            }
            let fields = try await DashboardResponses.form(request)
            do {
                let form = try AthleteForm.parse(fields)
                try Self.checkUniqueName(form.name, except: id, store: store)
                athlete.name = form.name
                athlete.birthDate = form.birthDate
                athlete.sex = form.sex
                athlete.stance = form.stance
                athlete.notes = form.notes
                try store.updateAthlete(athlete)
                return DashboardResponses.redirect("/athletes/\(id)?saved=1")
            } catch let errors as FormErrors {
                let page = try pages.athletePage(id: id, editFields: fields, editErrors: errors)
                return DashboardResponses.page(page ?? .empty, status: .unprocessableContent)
            }
        }
        router.post("/athletes/:id/weights") { request, context in
            guard let id = context.parameters.get("id", as: Int64.self), try store.athlete(id: id) != nil else {
                return Self.notFound(pages, "athlete \(context.parameters.get("id") ?? "")", .athletes)
            }
            let fields = try await DashboardResponses.form(request)
            do {
                let form = try WeightForm.parse(fields, today: CalendarDate(utcDayOf: pages.now()))
                try store.recordWeight(athleteID: id, date: form.date, kilograms: form.kilograms)
                return DashboardResponses.redirect("/athletes/\(id)#weight")
            } catch let errors as FormErrors {
                let page = try pages.athletePage(id: id, weightFields: fields, weightErrors: errors)
                return DashboardResponses.page(page ?? .empty, status: .unprocessableContent)
            }
        }

        // Sessions
        router.get("/sessions/:id") { _, context in
            guard let id = context.parameters.get("id", as: Int64.self), let page = try pages.sessionPage(id: id) else {
                return Self.notFound(pages, "session \(context.parameters.get("id") ?? "")", .athletes)
            }
            return DashboardResponses.page(page)
        }

        // Sequences
        router.get("/sequences") { request, _ in
            let saved = DashboardResponses.query(request)["saved"]
            return DashboardResponses.page(try pages.sequencesPage(notice: saved.map { "Saved sequence \"\($0)\"." }))
        }
        router.get("/sequences/edit") { request, _ in
            let query = DashboardResponses.query(request)
            let name = query["name"].flatMap { $0.isEmpty ? nil : $0 }
            guard let page = try pages.sequenceEditorPage(name: name, notice: query["saved"] != nil ? "Saved." : nil) else {
                return Self.notFound(pages, "saved sequence named \"\(name ?? "")\"", .sequences)
            }
            return DashboardResponses.page(page)
        }
        router.post("/sequences") { request, _ in
            let fields = try await DashboardResponses.form(request)
            do {
                let form = try SequenceForm.parse(fields)
                let saved = try Self.storeErrorsAsFields {
                    try store.saveSequence(name: form.name, targets: form.targets, milliseconds: form.milliseconds,
                                           maxIntervalMilliseconds: form.maxIntervalMilliseconds, at: pages.now())
                }
                return DashboardResponses.redirect(DashboardPages.editorPath(saved.name) + "&saved=1")
            } catch let errors as FormErrors {
                return DashboardResponses.page(try pages.sequenceEditorPage(fields: fields, errors: errors) ?? .empty, status: .unprocessableContent)
            }
        }
        router.post("/sequences/random") { request, _ in
            let fields = try await DashboardResponses.form(request)
            do {
                let form = try RandomSequenceForm.parse(fields)
                let program: PunchProgram
                do { program = try form.generator.generate(seed: form.seed ?? UInt64.random(in: 0...UInt64.max)) } catch {
                    throw FormErrors([FieldError(field: "steps", label: "Settings", expected: "settings the generator can use", got: "\(error)")])
                }
                let saved = try Self.storeErrorsAsFields { try store.saveSequence(name: form.name, program: program, at: pages.now()) }
                return DashboardResponses.redirect(DashboardPages.editorPath(saved.name) + "&saved=1")
            } catch let errors as FormErrors {
                return DashboardResponses.page(try pages.sequencesPage(randomFields: fields, randomErrors: errors), status: .unprocessableContent)
            }
        }

        // Run
        router.get("/run") { request, _ in
            let query = DashboardResponses.query(request)
            return DashboardResponses.page(try pages.runPage(athleteID: query["athlete"].flatMap { Int64($0) }, sequenceName: query["sequence"]))
        }
        router.post("/run") { request, _ in
            let fields = try await DashboardResponses.form(request)
            let athleteID = Int64(fields.trimmed("athlete")), sequenceName = fields.trimmed("sequence")
            do {
                let form = try RunForm.parse(fields, store: store)
                try await runs.start(athlete: form.athlete, sequence: form.sequence)
                return DashboardResponses.redirect("/run")
            } catch let errors as FormErrors {
                return DashboardResponses.page(try pages.runPage(athleteID: athleteID, sequenceName: sequenceName, errors: errors),
                                               status: .unprocessableContent)
            } catch let refusal as RunRefusal {
                return DashboardResponses.page(try pages.runPage(athleteID: athleteID, sequenceName: sequenceName, refusal: refusal.description),
                                               status: .conflict)
            }
        }
        router.post("/run/stop") { _, _ in
            await runs.stop()
            return DashboardResponses.redirect("/run")
        }

        addAPIRoutes(to: router)
        return router
    }

    static func notFound(_ pages: DashboardPages, _ what: String, _ section: PageLayout.Section) -> Response {
        DashboardResponses.page(pages.notFound(what, back: section), status: .notFound)
    }

    /// Refuses a name another athlete already has (ASCII case-insensitive), as a field error.
    static func checkUniqueName(_ name: String, except id: Int64?, store: CoachStore) throws {
        if try store.athletes().contains(where: { $0.id != id && $0.name.lowercased() == name.lowercased() }) {
            throw FormErrors([FieldError(field: "name", label: "Name", expected: "a name no other athlete has", got: name)])
        }
    }

    /// Runs a store change, turning the store's refusals into form errors.
    static func storeErrorsAsFields<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as CoachStoreError {
            let field: String
            switch error {
            case .emptyName: field = "name"
            case .invalidMaxInterval: field = "maxInterval"
            default: field = "targets"
            }
            throw FormErrors([FieldError(field: field, label: "Sequence", expected: "a sequence the trainer accepts", got: "\(error)")])
        }
    }
}
