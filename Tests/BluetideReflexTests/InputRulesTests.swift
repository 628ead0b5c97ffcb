import BluetideReflex
import Testing

/// The one set of input rules the CLI, the dashboard and the store share.
@Suite struct InputRulesTests {
    @Test func kilogramsAreDecimalsAbove0AndBelow500() throws {
        #expect(try InputRules.kilograms("63.5") == 63.5)
        #expect(try InputRules.kilograms(" 63,5 ") == 63.5)
        #expect(try InputRules.kilograms("63") == 63)
        #expect(try InputRules.kilograms(".5") == 0.5)
        #expect(try InputRules.kilograms("499.99") == 499.99)
        for refused in ["0x10", "1e-300", "1E2", "inf", "nan", "0", "500", "-3", "63.5.1", "63,5,1", "6 3", ".", "", "٦٣", "63kg", "0x1p4"] {
            #expect(throws: InputProblem.self, "\(refused.debugDescription) is refused") { try InputRules.kilograms(refused) }
        }
        let problem = try #require(inputProblem { try InputRules.kilograms("0x10") })
        #expect(problem.description == "expected kilograms above 0 and below 500, as a decimal number like 63.5, got \"0x10\"")
        #expect(try #require(inputProblem { try InputRules.kilograms("  ") }).got == nil)
    }

    @Test func datesAreISODaysFrom1900To2100() throws {
        #expect(try InputRules.date("2004-05-17") == CalendarDate(year: 2004, month: 5, day: 17))
        #expect(try InputRules.date("1900-01-01").year == 1900)
        #expect(try InputRules.date("2100-12-31").year == 2100)
        for refused in ["0001-01-01", "9999-12-31", "1899-12-31", "2101-01-01", "2023-02-29", "17/05/2004", "2004-5-17", ""] {
            #expect(throws: InputProblem.self, "\(refused)") { try InputRules.date(refused) }
        }
        #expect(try #require(inputProblem { try InputRules.date("0001-01-01") }).expected.contains("between 1900 and 2100"))
    }

    @Test func namesRefuseControlCharactersAndNameTheFault() throws {
        #expect(try InputRules.name("  Ana Ruiz ") == "Ana Ruiz")
        #expect(try InputRules.name("Zoë Ō'Brien-Łukasz") == "Zoë Ō'Brien-Łukasz")
        let nul = try #require(inputProblem { try InputRules.name("Ana\u{0}Ruiz") })
        #expect(nul.description == "expected a name of 1 to 100 characters without control characters, got \"Ana\\u{0}Ruiz\"")
        #expect(throws: InputProblem.self) { try InputRules.name("Ana\nRuiz") }
        #expect(throws: InputProblem.self) { try InputRules.name("Ana\u{1B}[31m") }
        #expect(throws: InputProblem.self) { try InputRules.name("A\u{85}B") }
        #expect(throws: InputProblem.self) { try InputRules.name(String(repeating: "a", count: 101)) }
        #expect(try InputRules.name(String(repeating: "a", count: 100)).count == 100)
        #expect(throws: InputProblem.self) { try InputRules.name(String(repeating: "a", count: 61), maximum: InputRules.maximumSequenceNameLength) }
        #expect(try #require(inputProblem { try InputRules.name(" \t ") }).got == nil)
    }

    @Test func freeTextAllowsLineBreaksOnlyWhereAsked() throws {
        #expect(try InputRules.text("left\nright\ttab", maximum: 40, lineBreaks: true) == "left\nright\ttab")
        #expect(throws: InputProblem.self) { try InputRules.text("left\nright", maximum: 40) }
        #expect(throws: InputProblem.self) { try InputRules.text("nul\u{0}", maximum: 40, lineBreaks: true) }
        #expect(throws: InputProblem.self) { try InputRules.text("12345", maximum: 4) }
    }

    @Test func theStoreAppliesTheSameNameRule() throws {
        let store = try CoachStore.inMemory()
        let error = try #require(storeError { try store.addAthlete(Athlete(name: "Ana\u{0}", created: Fixture.day0)) })
        #expect(error.description.hasPrefix("athlete name: expected a name of 1 to 100 characters without control characters"))
        #expect(try store.athletes().isEmpty, "nothing cut at the NUL was stored")
    }
}

/// The problem `body` finds (nil when it finds none).
func inputProblem(_ body: () throws -> some Any) -> InputProblem? {
    do { _ = try body() } catch { return error as? InputProblem }
    return nil
}

/// The store error `body` throws (nil when it throws none).
func storeError(_ body: () throws -> some Any) -> CoachStoreError? {
    do { _ = try body() } catch { return error as? CoachStoreError }
    return nil
}
