import ArgumentParser
import BluetideCore
import Foundation

/// Entry point of the `bluetide` executable: bootstraps logging, runs the command, and maps
/// what ended it to the exit status every command shares (``ExitStatus``): failures print one
/// line on standard error (a JSON `error` object with `--json`).
public enum BluetideMain {
    public static func run(_ arguments: [String]? = nil) async {
        let given = arguments ?? Array(CommandLine.arguments.dropFirst())
        StandardStreams.ignoreBrokenPipeSignal()
        StandardErrorLogHandler.bootstrap(level: LoggingOptions.level(in: given) ?? .warning)
        let json = given.prefix(while: { $0 != "--" }).contains("--json")
        do {
            // --log-level and -v/-vv work on every command: taken out here, before parsing.
            var command = try BluetideCommand.parseAsRoot(try LoggingOptions.split(given).rest)
            appLogger.debug("bluetide \(BluetideVersion.current): \(given.joined(separator: " "))")
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            exit(StopSignal.wasInterrupted ? ExitStatus.interrupted.rawValue : ExitStatus.success.rawValue)
        } catch let failure as CommandFailure {
            let status = StopSignal.wasInterrupted ? ExitStatus.interrupted : failure.status
            report(failure.message, status: status, field: failure.field, json: json)
        } catch let code as ExitCode where !code.isSuccess {
            // A command that already said why (e.g. interrupted by a signal) and chose its status.
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

    /// Prints the failure (prefixed `bluetide: `, or as a JSON error) and exits with `status`.
    private static func report(_ message: String, status: ExitStatus, field: String?, json: Bool) -> Never {
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
