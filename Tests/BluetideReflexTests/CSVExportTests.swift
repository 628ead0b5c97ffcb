import BluetideCharts
import BluetideProfiles
import Foundation
import Testing
@testable import BluetideReflex

@Suite("CSVExport")
struct CSVExportTests {
    /// A minimal RFC 4180 reader for checking our output: rows of fields.
    static func parse(_ text: String) -> [[String]] {
        var rows: [[String]] = [], row: [String] = [], field = "", quoted = false
        var chars = Array(text.unicodeScalars)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" {
                    if chars.first == "\"" { field.unicodeScalars.append("\""); chars.removeFirst() } else { quoted = false }
                } else { field.unicodeScalars.append(c) }
            } else if c == "\"" { quoted = true
            } else if c == "," { row.append(field); field = ""
            } else if c == "\r" && chars.first == "\n" { chars.removeFirst(); row.append(field); rows.append(row); row = []; field = ""
            } else { field.unicodeScalars.append(c) }
        }
        return rows
    }

    static func store() throws -> (CoachStore, Int64) {
        let store = try CoachStore.inMemory()
        let tricky = try store.addAthlete(Athlete(name: "Smith, \"Kid\" Jr.", created: Fixture.day0))
        try store.addAthlete(Athlete(name: "Bo", created: Fixture.day0))
        let id = try #require(tricky.id)
        let session = try store.startSession(athleteID: id, program: Fixture.program([0, 4, 2], [1000, 1500, 1000]), sequenceName: "Mix, fast",
                                             started: Fixture.day0.addingTimeInterval(0.25), deviceName: "Reflex-C1C2")
        try store.appendStep(sessionID: session, response: PunchResponse(reactionTimeMilliseconds: 412, target: 0, hit: true, step: 0))
        try store.appendStep(sessionID: session, response: PunchResponse(reactionTimeMilliseconds: 1500, target: 4, hit: false, wrongTargetFirst: true, step: 1))
        try store.appendStep(sessionID: session, response: PunchResponse(reactionTimeMilliseconds: 333, target: 2, hit: true, step: 2))
        try store.finishSession(id: session, ended: Fixture.day0.addingTimeInterval(4), complete: true)
        try store.setSessionNotes(id: session, notes: "said \"ouch\"\nloudly")
        return (store, id)
    }

    @Test func sessionsCSVQuotesAndFormats() throws {
        let (store, id) = try Self.store()
        let csv = try CSVExport.sessions(from: store, athleteID: id)
        let lines = csv.components(separatedBy: "\r\n")
        #expect(lines[0] == CSVExport.sessionColumns.joined(separator: ","))
        #expect(csv.hasSuffix("\r\n"))
        #expect(csv.contains("\"Smith, \"\"Kid\"\" Jr.\""))
        #expect(csv.contains("\"said \"\"ouch\"\"\nloudly\""), "line breaks are quoted (names refuse them; notes keep them)")
        #expect(csv.contains(",\"Mix, fast\","))
        let rows = Self.parse(csv)
        #expect(rows.count == 2)
        #expect(rows.allSatisfy { $0.count == CSVExport.sessionColumns.count })
        let row = Dictionary(uniqueKeysWithValues: zip(CSVExport.sessionColumns, rows[1]))
        #expect(row["athlete_name"] == "Smith, \"Kid\" Jr.")
        #expect(row["started"] == "2026-11-01T10:00:00.250Z")
        #expect(row["ended"] == "2026-11-01T10:00:04.000Z")
        #expect(row["complete"] == "true")
        #expect(row["steps_planned"] == "3")
        #expect(row["hits"] == "2")
        #expect(row["misses"] == "1")
        #expect(row["wrong_target_first"] == "1")
        #expect(row["hit_rate"] == "0.6667")
        #expect(row["mean_ms"] == "372.5")
        #expect(row["median_ms"] == "372.5")
        #expect(row["best_ms"] == "333")
        #expect(row["worst_ms"] == "412")
        #expect(row["stddev_ms"] == "39.5")
        #expect(row["notes"] == "said \"ouch\"\nloudly")
    }

    @Test func stepsCSVHasOneRowPerStep() throws {
        let (store, _) = try Self.store()
        let rows = Self.parse(try CSVExport.steps(from: store))
        #expect(rows[0] == CSVExport.stepColumns)
        #expect(rows.count == 4)
        // Steps count from 1; a missed step has no reaction time.
        #expect(rows[2] == ["1", "1", "Smith, \"Kid\" Jr.", "2026-11-01T10:00:00.250Z", "2", "4", "white", "1500", "false", "true", "", ""], "no strap: no heart rate")
        #expect(rows[1][4] == "1" && rows[1][10] == "412")
    }

    @Test func formulaLookingCellsAreNeutralised() {
        #expect(CSVExport.neutralised("=HYPERLINK(\"http://evil\",\"x\")") == "'=HYPERLINK(\"http://evil\",\"x\")")
        #expect(CSVExport.field("=HYPERLINK(\"http://evil\",\"x\")") == "\"'=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\"")
        #expect(CSVExport.field("+1+cmd|' /C calc'!A0") == "'+1+cmd|' /C calc'!A0")
        #expect(CSVExport.field("-2+3") == "'-2+3")
        #expect(CSVExport.field("@SUM(A1)") == "'@SUM(A1)")
        #expect(CSVExport.field("\tTAB") == "'\tTAB")
        #expect(CSVExport.field("\rCR") == "\"'\rCR\"")
        // Numbers and ordinary text stay as they are.
        #expect(CSVExport.field("-1.5") == "-1.5")
        #expect(CSVExport.field("+2") == "+2")
        #expect(CSVExport.field("Ana = fast") == "Ana = fast")
        #expect(CSVExport.field("2026-11-01T10:00:00.250Z") == "2026-11-01T10:00:00.250Z")
    }

    @Test func anAthleteNamedLikeAFormulaIsExportedAsText() throws {
        let store = try CoachStore.inMemory()
        let athlete = try store.addAthlete(Athlete(name: "=HYPERLINK(\"http://x\")", notes: "@cmd", created: Fixture.day0))
        let session = try store.startSession(athleteID: athlete.id ?? -1, program: Fixture.program([0], [900]), sequenceName: "-A",
                                             started: Fixture.day0)
        try store.appendStep(sessionID: session, response: PunchResponse(reactionTimeMilliseconds: 300, target: 0, hit: true, step: 0))
        let rows = Self.parse(try CSVExport.sessions(from: store))
        let row = Dictionary(uniqueKeysWithValues: zip(CSVExport.sessionColumns, rows[1]))
        #expect(row["athlete_name"] == "'=HYPERLINK(\"http://x\")")
        #expect(row["sequence_name"] == "'-A")
    }

    @Test func emptyDataGivesHeaderOnlyAndHitlessSessionsEmptyFigures() throws {
        #expect(CSVExport.sessions([], athletes: []) == CSVExport.sessionColumns.joined(separator: ",") + "\r\n")
        #expect(CSVExport.steps([], athletes: []) == CSVExport.stepColumns.joined(separator: ",") + "\r\n")
        let hitless = Fixture.results(id: 9, started: Fixture.day0, hitTimes: [], misses: 2)
        let rows = Self.parse(CSVExport.sessions([hitless], athletes: []))
        let row = Dictionary(uniqueKeysWithValues: zip(CSVExport.sessionColumns, rows[1]))
        #expect(row["hit_rate"] == "0.0000")
        #expect(row["mean_ms"] == "")
        #expect(row["athlete_name"] == "")
    }

    @Test func fieldQuotingFollowsRFC4180() {
        #expect(CSVExport.field("plain") == "plain")
        #expect(CSVExport.field("a,b") == "\"a,b\"")
        #expect(CSVExport.field("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(CSVExport.field("two\r\nlines") == "\"two\r\nlines\"")
        #expect(CSVExport.field("cr\r") == "\"cr\r\"")
        #expect(CSVExport.field("") == "")
    }

    @Test func writesFile() throws {
        let path = Fixture.temporaryPath("out.csv")
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let text = CSVExport.document([["a", "b,c"], ["1", "2"]])
        try CSVExport.write(text, toPath: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "a,\"b,c\"\r\n1,2\r\n")
    }

    @Test func numbersAndTimesIgnoreLocale() {
        #expect(DecimalText.fixed(372.25, 1) == "372.3")
        #expect(DecimalText.fixed(-0.04, 1) == "0.0")
        #expect(DecimalText.fixed(-2.5, 0) == "-3")
        #expect(DecimalText.fixed(0.000_012, 3) == "0.000")
        #expect(DecimalText.fixed(.nan, 2) == "")
        #expect(DecimalText.compact(412.50) == "412.5")
        #expect(DecimalText.compact(3) == "3")
        #expect(UTCCalendar.iso8601(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(UTCCalendar.iso8601(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59.000Z")
        #expect(UTCCalendar.iso8601(Date(timeIntervalSince1970: 951_782_400.5)) == "2000-02-29T00:00:00.500Z")
        #expect(CalendarDate(iso: "2024-02-29")?.startOfDayUTC == Date(timeIntervalSince1970: 1_709_164_800))
        #expect(CalendarDate(iso: "2023-02-29") == nil)
        #expect(CalendarDate(iso: "2023-1-01") == nil)
        #expect(CalendarDate(utcDayOf: Fixture.day0).iso == "2026-11-01")
    }
}
