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
            } catch let error as CoachStoreError {
                return Self.notStored(error, fields: fields) { try pages.athletesPage(fields: fields, errors: $0) }
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
            } catch let error as CoachStoreError {
                return Self.notStored(error, fields: fields) { try pages.athletePage(id: id, editFields: fields, editErrors: $0) }
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
            } catch let error as CoachStoreError {
                return Self.notStored(error, fields: fields) { try pages.athletePage(id: id, weightFields: fields, weightErrors: $0) }
            }
        }

        router.get("/athletes/:id/export.csv") { request, context in
            guard let id = context.parameters.get("id", as: Int64.self), let athlete = try store.athlete(id: id) else {
                return Self.notFound(pages, "athlete \(context.parameters.get("id") ?? "")", .athletes)
            }
            let perSession = DashboardResponses.query(request)["per"] == "session"
            let csv = perSession ? try CSVExport.sessions(from: store, athleteID: id) : try CSVExport.steps(from: store, athleteID: id)
            return DashboardResponses.csv(csv, fileName: CSVExport.fileName(athlete: athlete.name, perSession: perSession))
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
            } catch let error as CoachStoreError {
                return Self.notStored(error, fields: fields) { try pages.sequenceEditorPage(fields: fields, errors: $0) }
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
            } catch let error as CoachStoreError {
                return Self.notStored(error, fields: fields) { try pages.sequencesPage(randomFields: fields, randomErrors: $0) }
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
            } catch let error as CoachStoreError {
                return Self.notStored(error, fields: fields) {
                    try pages.runPage(athleteID: athleteID, sequenceName: sequenceName, errors: $0)
                }
            }
        }
        // Games and the gym's screen
        router.post("/game") { request, _ in
            let fields = try await DashboardResponses.form(request)
            do {
                let form = try GameForm.parse(fields, store: store)
                try await runs.startGame(mode: form.mode, athletes: form.athletes, sequence: form.sequence)
                return DashboardResponses.redirect("/tv")
            } catch let errors as FormErrors {
                return DashboardResponses.page(try pages.runPage(gameErrors: errors), status: .unprocessableContent)
            } catch let refusal as RunRefusal {
                if case .invalidGame = refusal {
                    return DashboardResponses.page(try pages.runPage(gameRefusal: refusal.description), status: .unprocessableContent)
                }
                return DashboardResponses.page(try pages.runPage(gameRefusal: refusal.description), status: .conflict)
            }
        }
        router.get("/tv") { _, _ in DashboardResponses.page(try pages.tvPage()) }
        router.get("/tv/board") { request, _ in
            let sequence = DashboardResponses.query(request)["sequence"].flatMap { $0.isEmpty ? nil : $0 }
            return DashboardResponses.page(try pages.tvBoards(sequence: sequence))
        }
        router.get("/static/tv.js") { _, _ in
            DashboardResponses.asset(TVScript.javaScript, contentType: "text/javascript; charset=utf-8")
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

    /// The answer when the store could not keep a submitted form: the form again with what was
    /// typed and the store's sentence above it (`503` when the database was busy, `500`
    /// otherwise). If even the form cannot be shown, a plain page lists the typed values.
    static func notStored(_ error: CoachStoreError, fields: FormFields, form: (FormErrors) throws -> HTML?) -> Response {
        let errors = FormErrors([], notice: "Nothing was saved: \(error.description). What you typed is kept below; try again.")
        let status: HTTPResponse.Status = error.description.contains("busy") ? .serviceUnavailable : .internalServerError
        if let page = try? form(errors) { return DashboardResponses.page(page, status: status) }
        let typed = fields.pairs.filter { $0.name != "_csrf" }.map { pair -> HTML in "<dt>\(pair.name)</dt><dd>\(pair.value)</dd>" }
        return DashboardResponses.page(PageLayout.page(title: "Not saved", section: .athletes, body: """
            <section class="card"><div class="errors" role="alert" id="form-notice"><p>\(errors.notice ?? "")</p></div>
            <p>What you typed:</p><dl id="typed">\(typed)</dl></section>
            """), status: status)
    }

    /// Runs a store change, turning the store's refusals of the sequence into form errors
    /// (storage failures go on as they are, to ``notStored(_:fields:form:)``).
    static func storeErrorsAsFields<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as CoachStoreError {
            let field: String
            switch error {
            case .storage, .cannotOpen, .damaged: throw error
            case .emptyName: field = "name"
            case .invalidMaxInterval: field = "maxInterval"
            default: field = "targets"
            }
            throw FormErrors([FieldError(field: field, label: "Sequence", expected: "a sequence the trainer accepts", got: "\(error)")])
        }
    }
}
