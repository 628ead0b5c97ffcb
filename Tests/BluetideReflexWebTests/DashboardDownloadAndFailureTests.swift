import BluetideReflex
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import BluetideReflexWeb

/// The athlete page's CSV download, and forms whose data the store could not keep.
@Suite struct DashboardDownloadAndFailureTests {
    @Test func theAthletePageOffersItsResultsAsCSV() async throws {
        try await DashboardFixture.withRouter { client, fixture in
            let athlete = try #require(fixture.sample.athletes.first)
            let id = try #require(athlete.id)
            let page = try await client.get("/athletes/\(id)")
            #expect(page.text.contains("href=\"/athletes/\(id)/export.csv\" download"))
            #expect(page.text.contains("href=\"/athletes/\(id)/export.csv?per=session\" download"))

            let steps = try await client.get("/athletes/\(id)/export.csv")
            #expect(steps.status == .ok)
            #expect(steps.headers[.contentType] == "text/csv; charset=utf-8")
            #expect(steps.headers[.contentDisposition] == "attachment; filename=\"\(CSVExport.fileName(athlete: athlete.name, perSession: false))\"")
            #expect(steps.text == (try CSVExport.steps(from: fixture.store, athleteID: id)))
            #expect(steps.text.hasPrefix(CSVExport.stepColumns.joined(separator: ",") + "\r\n"))

            let sessions = try await client.get("/athletes/\(id)/export.csv?per=session")
            #expect(sessions.text == (try CSVExport.sessions(from: fixture.store, athleteID: id)))
            #expect(sessions.headers[.contentDisposition]?.contains("-sessions.csv") == true)

            #expect(try await client.get("/athletes/999999/export.csv").status == .notFound)
            #expect(try await client.execute(uri: "/athletes/\(id)/export.csv", method: .post).status == .methodNotAllowed)
        }
    }

    @Test func exportFileNamesAreSafe() {
        #expect(CSVExport.fileName(athlete: "Ana Ruiz", perSession: false) == "ana-ruiz-steps.csv")
        #expect(CSVExport.fileName(athlete: "../../etc/passwd\"", perSession: true) == "etc-passwd-sessions.csv")
        #expect(CSVExport.fileName(athlete: "Zoë", perSession: false) == "zo-steps.csv")
        #expect(CSVExport.fileName(athlete: "ÅÅ", perSession: false) == "athlete-steps.csv")
    }

    @Test func aFormTheStoreCouldNotKeepComesBackWithItsValuesAndTheReason() async throws {
        let fixture = try await DashboardFixture.make()
        defer { Task { await fixture.close() } }
        let fields = FormFields([("name", "Bea Stone"), ("birthDate", "2001-02-03"), ("sex", "f"), ("stance", "southpaw"),
                                 ("notes", "left hook <b>"), ("_csrf", "secret")])
        let error = CoachStoreError.storage(action: "store the new athlete \"Bea Stone\"", reason: "the disk is full; free some space and try again")
        let response = DashboardServer.notStored(error, fields: fields) { try fixture.server.pages.athletesPage(fields: fields, errors: $0) }
        #expect(response.status == .internalServerError)
        let html = try #require(await Self.text(of: response))
        #expect(html.contains("Nothing was saved: could not store the new athlete &quot;Bea Stone&quot;: the disk is full; free some space and try again."))
        #expect(html.contains("name=\"name\" value=\"Bea Stone\""), "the typed name is kept")
        #expect(html.contains("name=\"birthDate\" value=\"2001-02-03\""))
        #expect(html.contains("<option value=\"southpaw\" selected>"))
        #expect(html.contains("left hook &lt;b&gt;</textarea>"))

        let busy = CoachStoreError.storage(action: "store the weigh-in", reason: "another program kept the database busy for too long; try again when it is done")
        #expect(DashboardServer.notStored(busy, fields: fields) { _ in nil as HTML? }.status == .serviceUnavailable)
    }

    @Test func whenEvenTheFormCannotBeShownTheTypedValuesAreListed() async throws {
        struct Broken: Error {}
        let fields = FormFields([("kilograms", "63,5"), ("date", "2026-11-18"), ("_csrf", "secret")])
        let error = CoachStoreError.damaged(path: "/tmp/coach.sqlite", detail: "page 3 is corrupt")
        let response = DashboardServer.notStored(error, fields: fields) { _ in throw Broken() }
        let html = try #require(await Self.text(of: response))
        #expect(html.contains("Nothing was saved: the coach database /tmp/coach.sqlite is damaged"))
        #expect(html.contains("<dt>kilograms</dt><dd>63,5</dd>"))
        #expect(html.contains("<dt>date</dt><dd>2026-11-18</dd>"))
        #expect(!html.contains("secret"), "the CSRF token is not echoed")
    }

    /// The body of a response built in memory.
    static func text(of response: Response) async -> String? {
        let collector = BodyCollector()
        try? await response.body.write(collector)
        return await collector.text
    }
}

/// Collects a response body written in memory.
actor BodyCollector: ResponseBodyWriter {
    private var buffer = ByteBuffer()
    var text: String { String(buffer: buffer) }
    func write(_ buffer: ByteBuffer) async throws {
        var copy = buffer
        self.buffer.writeBuffer(&copy)
    }
    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
