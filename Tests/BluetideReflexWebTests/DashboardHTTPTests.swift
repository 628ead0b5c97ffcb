import BluetideReflex
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import BluetideReflexWeb

/// Every page, form and JSON endpoint over HTTP (Hummingbird's router test client), against
/// the sample gym.
@Suite struct DashboardHTTPTests {
    @Test func athletesPageListsEveryoneAndEscapesTheirNames() async throws {
        try await DashboardFixture.withRouter { client, fixture in
            let home = try await client.get("/")
            #expect(home.status == .seeOther && home.headers[.location] == "/athletes")
            let page = try await client.get("/athletes")
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.text.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"))
            for athlete in fixture.sample.athletes {
                #expect(page.text.contains(">\(athlete.name)</a>"))
            }
            #expect(occurrences(of: "<tr data-athlete=", in: page.text) == 3)

            let added = try await client.post("/athletes", [("name", "<script>alert(1)</script> & Co"), ("stance", "orthodox")])
            #expect(added.status == .seeOther)
            let location = try #require(added.headers[.location])
            #expect(location.hasPrefix("/athletes/"))
            let list = try await client.get("/athletes")
            #expect(list.text.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co"))
            #expect(!list.text.contains("<script>alert"))
            let detail = try await client.get(location)
            #expect(detail.text.contains("<title>&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co · Reflex coach</title>"))
            #expect(!detail.text.contains("<script>alert"))
        }
    }

    @Test func athleteFormErrorsNameTheFieldWhatWasExpectedAndWhatCame() async throws {
        try await DashboardFixture.withRouter { client, fixture in
            let refused = try await client.post("/athletes", [("name", ""), ("birthDate", "17/05/2004"), ("sex", ""), ("stance", "crouch")])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.plainText.contains("Name: expected a name of 1 to 100 characters without control characters, got nothing"))
            #expect(refused.plainText.contains("Birth date: expected a date YYYY-MM-DD between 1900 and 2100, e.g. 2004-05-17, got \"17/05/2004\""))
            #expect(refused.plainText.contains("Stance: expected orthodox, southpaw or switch, got \"crouch\""))
            #expect(refused.text.contains("name=\"birthDate\" value=\"17/05/2004\" aria-invalid=\"true\""), "the typed value is kept and marked")
            let duplicate = try await client.post("/athletes", [("name", "ana ruiz")])
            #expect(duplicate.status == .unprocessableContent)
            #expect(duplicate.plainText.contains("Name: expected a name no other athlete has, got \"ana ruiz\""))
            #expect(try fixture.store.athletes().count == 3)
        }
    }

    @Test func athletePageShowsPersonalDataWeightsSessionsPerTargetAndCharts() async throws {
        try await DashboardFixture.withRouter { client, fixture in
            let ana = try #require(fixture.sample.athletes.first?.id)
            let page = try await client.get("/athletes/\(ana)")
            #expect(page.status == .ok)
            let html = page.text
            #expect(html.contains("<dd class=\"athlete-name\">Ana Ruiz</dd>"))
            #expect(html.contains("2004-05-17 (22 years)"))
            #expect(occurrences(of: "<tr data-session=", in: html) == 6)
            #expect(occurrences(of: "<tr data-target=", in: html) == 6, "per-target table over all sessions")
            #expect(html.contains("id=\"weights\""))
            #expect(html.contains("<figure class=\"weight-chart\" id=\"weight-chart\"><svg"), "sample athletes have several weigh-ins")
            for chart in ["trend", "targets", "latest"] { #expect(html.contains("id=\"\(chart)\"><svg")) }
            #expect(html.contains("class=\"swatch target-0\""))
            // The trend says faster or slower (issue 21 item 12), the same words as the CLI's.
            #expect(html.range(of: #"<p>Trend: [0-9]+\.[0-9] ms (faster|slower) per session"#, options: .regularExpression) != nil, "\(html)")

            let missing = try await client.get("/athletes/999")
            #expect(missing.status == .notFound && missing.text.contains("There is no athlete 999."))
            #expect(try await client.get("/athletes/abc").status == .notFound)
        }
    }

    @Test func weighInsAndEditsAreValidatedAndStored() async throws {
        try await DashboardFixture.withRouter { client, fixture in
            let ana = try #require(fixture.sample.athletes.first?.id)
            let refused = try await client.post("/athletes/\(ana)/weights", [("date", "2026-11-18"), ("kilograms", "heavy")])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.plainText.contains("Weight: expected kilograms above 0 and below 500, as a decimal number like 63.5, got \"heavy\""))
            let before = try fixture.store.weightHistory(athleteID: ana).count
            let stored = try await client.post("/athletes/\(ana)/weights", [("date", "2026-11-18"), ("kilograms", "56,9")])
            #expect(stored.status == .seeOther)
            let weights = try fixture.store.weightHistory(athleteID: ana)
            #expect(weights.count == before + 1 && weights.last?.kilograms == 56.9)
            #expect(try await client.get("/athletes/\(ana)").text.contains("56.9 kg on 2026-11-18"))

            let edit = try await client.post("/athletes/\(ana)", [("name", "Ana Ruiz Gil"), ("birthDate", "2004-05-17"), ("sex", "female"),
                                                                   ("stance", "southpaw"), ("notes", "left hook < right")])
            #expect(edit.status == .seeOther && edit.headers[.location] == "/athletes/\(ana)?saved=1")
            let athlete = try #require(try fixture.store.athlete(id: ana))
            #expect(athlete.name == "Ana Ruiz Gil" && athlete.stance == .southpaw && athlete.notes == "left hook < right")
            let badEdit = try await client.post("/athletes/\(ana)", [("name", "Marco Bianchi")])
            #expect(badEdit.status == .unprocessableContent)
            #expect(badEdit.plainText.contains("Name: expected a name no other athlete has, got \"Marco Bianchi\""))
        }
    }

    @Test func sessionPageShowsEveryStepAndItsChart() async throws {
        try await DashboardFixture.withRouter { client, fixture in
            let session = try #require(try fixture.store.sessions().first)
            let id = try #require(session.id)
            let page = try await client.get("/sessions/\(id)")
            #expect(page.status == .ok)
            #expect(occurrences(of: "<tr class=\"step-row\"", in: page.text) == session.stepCount)
            #expect(page.text.contains("<figure class=\"chart\" id=\"session-chart\"><svg"))
            #expect(page.text.contains("<span class=\"hit\">complete</span>"))
            #expect(try await client.get("/sessions/424242").status == .notFound)
        }
    }

    @Test func sequenceEditorHasLEDColouredButtonsAndValidatesSaves() async throws {
        try await DashboardFixture.withRouter { client, fixture in
            let list = try await client.get("/sequences")
            for name in fixture.sample.sequences { #expect(list.text.contains("<tr data-sequence=\"\(name)\">")) }

            let editor = try await client.get("/sequences/edit?name=Full+circle")
            #expect(editor.status == .ok)
            for colour in TargetPalette.colours {
                #expect(editor.text.contains("data-target=\"\(colour.target)\" style=\"background:\(colour.fill);border-color:\(colour.stroke)\""))
            }
            #expect(editor.text.contains("name=\"targets\" value=\"0,1,2,3,4,5,4,3,2,1\""))
            #expect(editor.text.contains("<script src=\"/static/dashboard.js\" defer></script>"))
            #expect(try await client.get("/sequences/edit?name=Nope").status == .notFound)

            let refused = try await client.post("/sequences", [("name", "Bad"), ("targets", "0,7"), ("times", "0"), ("maxInterval", "")])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.plainText.contains("Targets: expected a target 0–5 at step 2, got \"7\""))
            #expect(refused.plainText.contains("Times: expected a time of 1–60000 ms, got \"0\""))
            #expect(refused.text.contains("name=\"targets\" value=\"0,7\" aria-invalid=\"true\""))
            #expect(try fixture.store.sequence(named: "Bad") == nil)

            let saved = try await client.post("/sequences", [("name", "Hooks"), ("targets", "2,3,2,3"), ("times", "800,700,800,600"),
                                                             ("maxInterval", "1500")])
            #expect(saved.status == .seeOther && saved.headers[.location] == "/sequences/edit?name=Hooks&saved=1")
            let hooks = try #require(try fixture.store.sequence(named: "Hooks"))
            #expect(hooks.targets == [2, 3, 2, 3] && hooks.milliseconds == [800, 700, 800, 600] && hooks.maxIntervalMilliseconds == 1500)
            #expect(try await client.get("/sequences/edit?name=Hooks&saved=1").text.contains("<p class=\"notice\" role=\"status\">Saved.</p>"))
        }
    }

    @Test func randomGeneratorSavesASeededSequenceOrSaysWhy() async throws {
        try await DashboardFixture.withRouter { client, fixture in
            let refused = try await client.post("/sequences/random", [("name", "R"), ("steps", "6"), ("target", "3"), ("minTime", "500"),
                                                                      ("maxTime", "900"), ("seed", "")])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.plainText.contains("Targets: expected two or more targets, or \"allow repeats\" ticked"))
            let fields = [("name", "Random 8"), ("steps", "8"), ("target", "0"), ("target", "2"), ("target", "5"), ("minTime", "500"),
                          ("maxTime", "900"), ("seed", "99")]
            let saved = try await client.post("/sequences/random", fields)
            #expect(saved.status == .seeOther)
            let first = try #require(try fixture.store.sequence(named: "Random 8"))
            #expect(first.targets.count == 8 && Set(first.targets).isSubset(of: [0, 2, 5]))
            #expect(first.milliseconds.allSatisfy { (500...900).contains($0) })
            _ = try await client.post("/sequences/random", fields)
            #expect(try fixture.store.sequence(named: "Random 8")?.targets == first.targets, "the same seed gives the same sequence")
        }
    }

    @Test func runStartsOnceRefusesASecondRunAndStops() async throws {
        try await DashboardFixture.withRouter { client, fixture in
            let page = try await client.get("/run?athlete=1&sequence=Speed+12")
            #expect(page.text.contains("<option value=\"1\" selected>Ana Ruiz</option>"))
            #expect(page.text.contains("<option value=\"Speed 12\" selected>Speed 12 (12 steps)</option>"))
            #expect(page.text.contains("<tbody></tbody>"), "results only ever arrive over the WebSocket")

            let missing = try await client.post("/api/run", [("athlete", ""), ("sequence", "Nope")])
            #expect(missing.status == .unprocessableContent)
            let errors = try #require((missing.json as? [String: Any])?["errors"] as? [[String: Any]])
            #expect(errors.compactMap { $0["message"] as? String } == [
                "Athlete: expected an athlete chosen from the list, got nothing",
                "Sequence: expected the name of a saved sequence, got \"Nope\"",
            ])

            // No trainer on this link: the run keeps scanning, so a second start must be refused.
            let started = try await client.post("/api/run", [("athlete", "1"), ("sequence", "Jab warm-up")])
            #expect(started.status == .accepted)
            #expect((started.json as? [String: Any])?["athlete"] as? String == "Ana Ruiz")
            let second = try await client.post("/api/run", [("athlete", "2"), ("sequence", "Full circle")])
            #expect(second.status == .conflict)
            #expect((second.json as? [String: Any])?["error"] as? String
                == "a session is already running (Ana Ruiz, sequence \"Jab warm-up\"): wait for it to end, or stop it first")
            let secondForm = try await client.post("/run", [("athlete", "2"), ("sequence", "Full circle")])
            #expect(secondForm.status == .conflict && secondForm.plainText.contains("a session is already running (Ana Ruiz"))
            let state = try #require(try await client.get("/api/run").json as? [String: Any])
            #expect(state["running"] as? Bool == true)

            let stopped = try await client.post("/api/run/stop", [])
            #expect((stopped.json as? [String: Any])?["stopped"] as? Bool == true)
            await fixture.server.runs.waitUntilIdle()
            let after = try #require(try await client.get("/api/run").json as? [String: Any])
            #expect(after["running"] as? Bool == false)
            let kinds = (after["messages"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
            #expect(kinds.first == "started" && kinds.last == "ended")
        }
    }

    @Test func jsonEndpointsAndAssets() async throws {
        try await DashboardFixture.withRouter { client, fixture in
            let athletes = try #require(try await client.get("/api/athletes").json as? [[String: Any]])
            #expect(athletes.count == 3 && athletes.first?["sessions"] as? Int == 6)
            let detail = try #require(try await client.get("/api/athletes/1").json as? [String: Any])
            #expect((detail["athlete"] as? [String: Any])?["name"] as? String == "Ana Ruiz")
            #expect((detail["sessions"] as? [Any])?.count == 6 && (detail["weights"] as? [Any])?.count == 6)
            #expect(try await client.get("/api/athletes/77").status == .notFound)
            let session = try #require(try await client.get("/api/sessions/1").json as? [String: Any])
            #expect((session["steps"] as? [Any])?.count == 6)
            #expect((try await client.get("/api/sequences").json as? [Any])?.count == 3)

            let css = try await client.get("/static/dashboard.css")
            #expect(css.headers[.contentType] == "text/css; charset=utf-8")
            #expect(css.text.contains("--target-0: #D7263D;") && css.text.contains(".target-5 {"))
            let script = try await client.get("/static/dashboard.js")
            #expect(script.headers[.contentType] == "text/javascript; charset=utf-8")
            #expect(script.text.contains("new WebSocket(") && !script.text.contains("innerHTML"))
        }
    }
}
