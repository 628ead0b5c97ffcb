import BluetideReflex
import BluetideReflexWeb
import Testing

/// `reflex coach password`'s logic, without the argument parser.
@Suite("DashboardPassword")
struct DashboardPasswordTests {
    struct Unopened: Error {}

    @Test func aRefusedPasswordNeverOpensTheStore() throws {
        let problem = try #require(PasswordHash.problem(with: ""))
        #expect(throws: DashboardPasswordError.refused(problem: problem)) {
            try DashboardPassword.set("", in: try { () throws -> CoachStore in throw Unopened() }())
        }
        #expect(DashboardPasswordError.refused(problem: problem).description == "\(problem); choose another")
        #expect(DashboardPasswordError.refused(problem: problem).field == "password")
    }

    @Test func anAcceptedPasswordIsStoredOnlyAsAHashThatVerifies() throws {
        let store = try CoachStore.inMemory()
        let password = "correct horse battery staple"
        try DashboardPassword.set(password, in: store)
        let stored = try #require(try store.setting(PasswordHash.settingKey))
        #expect(!stored.contains(password))
        #expect(PasswordHash.verify(password, against: stored))
        #expect(!PasswordHash.verify("another password here", against: stored))
    }
}
