import ArgumentParser
import BluetideBase
import Foundation

/// Entry point of the `bluetide` executable: bootstraps logging, runs the command, and maps
/// what ended it to the exit status every command shares (``ExitStatus``): failures print one
/// line on standard error (a JSON `error` object with `--json`).
public enum BluetideMain {
    /// Whether the process should run every job on one thread: when the environment asks for
    /// virtual time (``VirtualTimeOption``), whose clock moves only once the queued work has
    /// had its turn, or for one thread outright (`BLUETIDE_ONE_THREAD=1`: task and actor
    /// hand-overs then never wake another thread; measured in docs/benchmarks.md).
    public static func runsOnOneThread(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        VirtualTimeOption.isRequested(environment) || EnvironmentFlag.isOn("BLUETIDE_ONE_THREAD", in: environment)
    }

    public static func run(_ arguments: [String]? = nil) async {
        let given = arguments ?? Array(CommandLine.arguments.dropFirst())
        StandardStreams.ignoreBrokenPipeSignal()
        StandardErrorLogHandler.bootstrap(level: LoggingOptions.level(in: given) ?? .warning)
        BackendSchemes.register()
        let json = given.prefix(while: { $0 != "--" }).contains("--json")
        do {
            // --log-level and -v/-vv work on every command: taken out here, before parsing.
            var command = try parse(try LoggingOptions.split(given).rest)
            appLogger.debug("bluetide \(BluetideVersion.current): \(given.joined(separator: " "))")
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            // Ctrl-C that the command handled (it stopped cleanly): with --json the promised
            // `interrupted` error line, then 130.
            if StopSignal.wasInterrupted { report("interrupted (Ctrl-C)", status: .interrupted, field: nil, json: json, quietAsText: true) }
            exit(ExitStatus.success.rawValue)
        } catch let failure as CommandFailure {
            let status = StopSignal.wasInterrupted ? ExitStatus.interrupted : failure.status
            report(failure.message, status: status, field: failure.field, json: json)
        } catch let code as ExitCode where !code.isSuccess {
            // A command that already said why (e.g. interrupted by a signal) and chose its status.
            if code.rawValue == ExitStatus.interrupted.rawValue {
                report("interrupted (Ctrl-C)", status: .interrupted, field: nil, json: json, quietAsText: true)
            }
            exit(code.rawValue)
        } catch {
            // Help and version requests exit 0 as usual; every other parser error is a usage
            // error (status 2) in one line that names the bad argument and the help (JSON:
            // ArgumentParser's message).
            if BluetideCommand.exitCode(for: error).isSuccess { BluetideCommand.exit(withError: error) }
            if error is CancellationError { report("interrupted", status: .interrupted, field: nil, json: json) }
            let message = BluetideCommand.fullMessage(for: error)
            let line = String(UsageErrorLine.describe(error, arguments: given).dropFirst("bluetide: ".count))
            report(json ? BluetideCommand.message(for: error) : line, status: .usage, field: usageField(message), json: json)
        }
    }

    /// Parses the command line; one refused only for a negative number read as an option is
    /// parsed again with the number as a value (``NegativeNumberArguments``).
    static func parse(_ arguments: [String]) throws -> any ParsableCommand {
        do { return try BluetideCommand.parseAsRoot(arguments) } catch {
            guard let repaired = NegativeNumberArguments.repaired(arguments, after: error),
                  let command = try? BluetideCommand.parseAsRoot(repaired) else { throw error }
            return command
        }
    }

    /// Prints the failure (prefixed `bluetide: `, or as a JSON error) and exits with `status`;
    /// `quietAsText` prints only the JSON form (a Ctrl-C the command already ended on).
    private static func report(_ message: String, status: ExitStatus, field: String?, json: Bool, quietAsText: Bool = false) -> Never {
        if quietAsText && !json { exit(status.rawValue) }
        let line = json ? JSONOutput.error(message, status: status, field: field) : (message.hasPrefix("Error:") || message.hasPrefix("Usage:") ? message : "bluetide: \(message)")
        StandardStreams.error.line(line)
        exit(status.rawValue)
    }

    /// The option an ArgumentParser message names ("Unknown option '--foo'"), if any.
    private static func usageField(_ message: String) -> String? {
        guard let start = message.range(of: "'-") else { return nil }
        let rest = message[start.upperBound...]
        let name = "-" + rest.prefix(while: { $0 != "'" && $0 != " " && $0 != "=" && $0 != "<" })
        return name.count > 1 ? name : nil
    }
}
