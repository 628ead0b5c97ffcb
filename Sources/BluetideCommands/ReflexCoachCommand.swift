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

/// `bluetide reflex coach …`: the coach side of the reflex trainer (athletes, sequences, live
/// sessions, history, CSV and SVG). To be registered under `ReflexCommand` as `coach`.
public struct ReflexCoachCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "coach",
        abstract: "Reflex trainer coach: athletes, saved sequences, live sessions, history, CSV export and charts.",
        discussion: """
            Examples:
              bluetide reflex coach athletes add "Ana Ruiz" --birth-date 2004-05-17 \\
                  --sex female
              bluetide reflex coach sequences save Jab --targets 0,3,5,1 --times 900
              bluetide reflex coach run --athlete "Ana Ruiz" --sequence Jab --emulate
              bluetide reflex coach history --athlete "Ana Ruiz"
              bluetide reflex coach serve --emulate (then open http://localhost:8080)
            """,
        subcommands: ReflexCoachCommand.subcommandTypes)

    /// The subcommands.
    static let subcommandTypes: [any ParsableCommand.Type] = [
        ReflexCoachAthletes.self, ReflexCoachSequences.self, ReflexCoachRun.self, ReflexCoachHistory.self,
        ReflexCoachExport.self, ReflexCoachChart.self, ReflexCoachServe.self, ReflexCoachPassword.self,
        ReflexCoachSession.self, ReflexCoachBoard.self, ReflexCoachProgress.self,
    ]

    /// For the lead: add this to `ReflexCommand`'s subcommands at merge.
    public static let coachSubcommand = ReflexCoachCommand.self

    public init() {}
}

/// `--db PATH`, shared by every coach command.
struct CoachDatabaseOptions: ParsableArguments {
    @Option(name: .long, help: "Coach database file (default: \(CoachStore.defaultPath())).")
    var db: String?

    func open() throws -> CoachStore {
        let path = db ?? CoachStore.defaultPath()
        do { return try CoachStore(path: path) } catch let error as CoachStoreError { throw CommandFailure(error.description) } catch {
            throw CommandFailure("cannot open the coach database \(path): \(error)")
        }
    }
}

/// Shared helpers of the coach commands.
enum CoachCLI {
    /// The athlete called `name`, or a failure listing who exists (``AthleteLookup``).
    static func athlete(_ name: String, in store: CoachStore) throws -> Athlete {
        try input { try AthleteLookup.athlete(name, in: store) }
    }

    /// Runs a library parse or lookup; its ``CoachInputError`` becomes a failure with the same
    /// line (a message that leads with the option is bad input, exit 2; an unknown athlete exit 1).
    static func input<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as CoachInputError { throw CommandFailure(error.description) }
    }

    /// `value` with `digits` decimals, rounded half away from zero like the dashboard, its charts
    /// and the CSV (62.5 % is 63 % everywhere).
    static func fixed(_ value: Double, digits: Int) -> String {
        let scale = Foundation.pow(10, Double(max(0, digits)))
        return String(format: "%.\(max(0, digits))f", (value * scale).rounded(.toNearestOrAwayFromZero) / scale)
    }

    static func milliseconds(_ value: Double?) -> String {
        value.map { CoachCLI.fixed($0, digits: 0) + " ms" } ?? "-"
    }

    static func percent(_ value: Double?) -> String {
        value.map { CoachCLI.fixed($0 * 100, digits: 0) + " %" } ?? "-"
    }

    static func summaryLine(_ s: ReactionSummary) -> String {
        "\(s.hits)/\(s.count) hit (\(percent(s.hitRate))), mean \(milliseconds(s.meanMilliseconds)), median \(milliseconds(s.medianMilliseconds)), best \(milliseconds(s.bestMilliseconds))"
    }

    static func dateText(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    static func write(_ text: String, to path: String) throws {
        do { try Data(text.utf8).write(to: URL(fileURLWithPath: path)) } catch {
            throw CommandFailure("cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// The value `rule` (one of ``InputRules``, shared with the dashboard) makes of what was given
    /// for `field` (`--date`, `NAME`), or a usage failure naming the field.
    static func checked<T>(_ field: String, _ rule: () throws(InputProblem) -> T) throws -> T {
        do { return try rule() } catch { throw CommandFailure.usage("\(field): \(error)", field: field) }
    }

    /// Maps store errors to exit-2 failures with the store's words.
    /// Runs a store call; a refusal of what the user typed (a bad sequence, name, weight or
    /// interval) is bad input (exit 2), anything else a runtime failure (exit 1).
    static func failing<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as CoachStoreError {
            throw failure(error)
        }
    }

    /// A store error as the command's failure: a refusal of what the user typed is a usage
    /// error (exit 2), anything else a runtime failure (exit 1).
    static func failure(_ error: CoachStoreError) -> CommandFailure {
        switch error {
        case .emptyName, .invalidSequence, .invalidText, .invalidMaxInterval, .invalidWeight:
            CommandFailure.usage(error.description)
        default:
            CommandFailure(error.description)
        }
    }
}
