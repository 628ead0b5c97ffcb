import Testing
@testable import BluetideCommands

/// The environment's yes/no settings: which spellings turn them on, and what virtual time and
/// one thread follow from them.
@Suite struct EnvironmentFlagTests {
    @Test func aFlagIsOnForOneTrueOrYesInAnyCaseAndOffOtherwise() {
        for yes in ["1", "true", "TRUE", "Yes", "yes"] {
            #expect(EnvironmentFlag.isOn("X", in: ["X": yes]), "\(yes)")
        }
        for no in ["0", "false", "no", "", "2", "on"] {
            #expect(!EnvironmentFlag.isOn("X", in: ["X": no]), "\(no)")
        }
        #expect(!EnvironmentFlag.isOn("X", in: [:]), "unset")
        #expect(!EnvironmentFlag.isOn("X", in: ["Y": "1"]), "another variable")
    }

    @Test func virtualTimeAlsoRunsTheProcessOnOneThread() {
        #expect(!BluetideMain.runsOnOneThread(environment: [:]))
        #expect(BluetideMain.runsOnOneThread(environment: ["BLUETIDE_ONE_THREAD": "1"]))
        #expect(BluetideMain.runsOnOneThread(environment: ["BLUETIDE_VIRTUAL_TIME": "yes"]))
        #expect(!BluetideMain.runsOnOneThread(environment: ["BLUETIDE_ONE_THREAD": "0", "BLUETIDE_VIRTUAL_TIME": "no"]))
        #expect(VirtualTimeOption.isRequested(["BLUETIDE_VIRTUAL_TIME": "True"]))
        #expect(!VirtualTimeOption.isRequested(["BLUETIDE_ONE_THREAD": "1"]), "one thread alone is not virtual time")
    }
}
