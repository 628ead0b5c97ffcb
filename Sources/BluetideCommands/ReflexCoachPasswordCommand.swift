import ArgumentParser
import Bluetide
import BluetideBase
import BluetideEmulation
import BluetideDeviceModels
import BluetideProfiles
import BluetideReflex
import BluetideReflexCoach
import BluetideReflexEmulation
import BluetideReflexWeb
import BluetideTransport
import BluetideGateway
import Foundation

// MARK: password

/// `password`: sets the coach's dashboard password (needed by `serve --lan`), stored hashed.
struct ReflexCoachPassword: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "password",
        abstract: "Set the coach's password for the dashboard on the network (serve --lan); stored only as a salted hash.",
        discussion: """
            Asks twice on a terminal; reads one line from standard input otherwise.

            Examples:
              bluetide reflex coach password
              printf '%s\\n' "$GYM_PASSWORD" | \\
                  bluetide reflex coach password --db ~/gym.sqlite
            """)
    @OptionGroup var database: CoachDatabaseOptions
    @OptionGroup var output: CoachOutputOptions

    /// Checks and stores `password`; returns the line to print.
    func set(_ password: String) throws -> String {
        do { try CoachCLI.failing { try DashboardPassword.set(password, in: try database.open()) } } catch let error as DashboardPasswordError {
            if case .refused = error { throw CommandFailure.usage(error.description, field: error.field) }
            throw CommandFailure(error.description)
        }
        return "password set: `serve --lan` now asks every phone for it"
    }

    func run() async throws {
        let password: String
        if isatty(STDIN_FILENO) != 0 {
            guard let first = getpass("New dashboard password: ").map({ String(cString: $0) }),
                  let second = getpass("Again: ").map({ String(cString: $0) })
            else { throw CommandFailure.usage("no password given", field: "password") }
            guard first == second else { throw CommandFailure.usage("the two passwords differ; nothing was changed", field: "password") }
            password = first
        } else {
            guard let line = readLine(strippingNewline: true) else { throw CommandFailure.usage("no password on standard input: pipe it in, one line", field: "password") }
            password = line
        }
        let line = try set(password)
        output.emit([CoachOutput(line, type: "password-set", ["message": .string(line)])])
    }
}
