import BluetideReflex
import Foundation
import Testing
@testable import BluetideReflexWeb

/// Form decoding and validation, and HTML escaping, without a server.
@Suite struct DashboardFormTests {
    @Test func formFieldsDecodePlusPercentAndRepeatedNames() {
        let fields = FormFields(encoded: "name=Ana+Ru%C3%ADz&target=0&target=5&notes=a%26b%3Dc&empty=&bad=%zz%4")
        #expect(fields["name"] == "Ana Ruíz")
        #expect(fields.all("target") == ["0", "5"])
        #expect(fields["notes"] == "a&b=c")
        #expect(fields["empty"] == "")
        #expect(fields["bad"] == "%zz%4")
        #expect(fields["missing"] == nil && fields.trimmed("missing") == "")
    }

    @Test func htmlInterpolationEscapesTextButNotFragments() {
        let name = "<script>alert('x')</script> & \"Co\"\u{1}"
        let bold: HTML = "<b>\(name)</b>"
        #expect(bold.markup == "<b>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;Co&quot;</b>")
        let outer: HTML = "<p>\(bold) \(42) \([HTML("<i>1</i>"), HTML("<i>2</i>")])</p>"
        #expect(outer.markup == "<p><b>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;Co&quot;</b> 42 <i>1</i><i>2</i></p>")
    }

    @Test func athleteFormNamesEachBadField() {
        let fields = FormFields([("name", "  "), ("birthDate", "17/05/2004"), ("stance", "crouch")])
        let messages = Self.messages { try AthleteForm.parse(fields) }
        #expect(messages == [
            "Name: expected a name of 1 to 100 characters without control characters, got nothing",
            "Birth date: expected a date YYYY-MM-DD between 1900 and 2100, e.g. 2004-05-17, got \"17/05/2004\"",
            "Stance: expected orthodox, southpaw or switch, got \"crouch\"",
        ])
        let good = try? AthleteForm.parse(FormFields([("name", " Ana "), ("birthDate", "2004-05-17"), ("sex", "female"), ("stance", "Southpaw")]))
        #expect(good == AthleteForm(name: "Ana", birthDate: CalendarDate(iso: "2004-05-17"), sex: "female", stance: .southpaw, notes: ""))
    }

    @Test func weightFormAcceptsACommaAndDefaultsToToday() throws {
        let today = try #require(CalendarDate(iso: "2026-11-18"))
        #expect(try WeightForm.parse(FormFields([("kilograms", "63,5")]), today: today) == WeightForm(date: today, kilograms: 63.5))
        #expect(Self.messages { try WeightForm.parse(FormFields([("kilograms", "heavy"), ("date", "yesterday")]), today: today) } == [
            "Date: expected a date YYYY-MM-DD between 1900 and 2100, e.g. 2004-05-17, got \"yesterday\"",
            "Weight: expected kilograms above 0 and below 500, as a decimal number like 63.5, got \"heavy\"",
        ])
        #expect(Self.messages { try WeightForm.parse(FormFields([("kilograms", "-3")]), today: today) }
            == ["Weight: expected kilograms above 0 and below 500, as a decimal number like 63.5, got \"-3\""])
    }

    @Test func sequenceFormChecksTargetsTimesAndTheirCounts() throws {
        let ok = try SequenceForm.parse(FormFields([("name", "Jab"), ("targets", "0, 3,5;1"), ("times", "900"), ("maxInterval", "")]))
        #expect(ok == SequenceForm(name: "Jab", targets: [0, 3, 5, 1], milliseconds: [900, 900, 900, 900], maxIntervalMilliseconds: nil))
        #expect(Self.messages { try SequenceForm.parse(FormFields([("name", ""), ("targets", "0,7,2"), ("times", "900,0,900"), ("maxInterval", "70000")])) } == [
            "Name: expected a name of 1 to 60 characters without control characters, got nothing",
            "Targets: expected a target 0–5 at step 2, got \"7\"",
            "Times: expected a time of 1–60000 ms at step 2, got \"0\"",
            "Max interval: expected empty, or 1–60000 ms, got \"70000\"",
        ])
        #expect(Self.messages { try SequenceForm.parse(FormFields([("name", "J"), ("targets", "0,1,2"), ("times", "900,900")])) }
            == ["Times: expected one time for all steps or one per step (3 steps), got \"2 times\""])
        #expect(Self.messages { try SequenceForm.parse(FormFields([("name", "J"), ("targets", ""), ("times", "900")])) }
            == ["Targets: expected at least one target: tap the coloured buttons, got nothing"])
    }

    @Test func randomFormRefusesOneTargetWithoutRepeatsAndBadRanges() throws {
        let form = try RandomSequenceForm.parse(FormFields([("name", "R"), ("steps", "8"), ("target", "1"), ("target", "4"),
                                                            ("minTime", "500"), ("maxTime", "900"), ("seed", "7")]))
        #expect(form.seed == 7 && form.generator.targets == [1, 4] && form.generator.stepCount == 8 && form.generator.avoidImmediateRepeats)
        #expect(Self.messages { try RandomSequenceForm.parse(FormFields([("name", "R"), ("steps", "0"), ("target", "2"),
                                                                         ("minTime", "900"), ("maxTime", "500"), ("seed", "-1")])) } == [
            "Steps: expected a whole number 1–256, got \"0\"",
            "Longest time: expected at least the shortest time (900 ms), got \"500\"",
            "Seed: expected empty, or a whole number ≥ 0, got \"-1\"",
        ])
        #expect(Self.messages { try RandomSequenceForm.parse(FormFields([("name", "R"), ("steps", "5"), ("target", "2"),
                                                                         ("minTime", "500"), ("maxTime", "900")])) }
            == ["Targets: expected two or more targets, or \"allow repeats\" ticked (one target cannot avoid repeats), got \"only green\""])
        // More steps than a trainer holds (256, `PunchSequence.maxSteps`) are refused on the form.
        #expect(Self.messages { try RandomSequenceForm.parse(FormFields([("name", "R"), ("steps", "300"), ("target", "1"), ("target", "4"),
                                                                         ("minTime", "500"), ("maxTime", "900")])) }
            == ["Steps: expected a whole number 1–256, got \"300\""])
    }

    @Test func liveMessagesAreCompactJSONWithTheTargetColour() throws {
        var message = LiveRunMessage(kind: .step, run: 2)
        message.step = 3
        message.target = 2
        message.colour = "green"
        message.hit = true
        message.reactionMilliseconds = 412
        #expect(message.json == #"{"colour":"green","hit":true,"kind":"step","reactionMilliseconds":412,"run":2,"step":3,"target":2}"#)
    }

    static func messages(_ body: () throws -> Any) -> [String] {
        do {
            _ = try body()
            return []
        } catch let errors as FormErrors {
            return errors.errors.map(\.description)
        } catch {
            return ["unexpected \(error)"]
        }
    }
}
