import ArgumentParser
import Foundation
import Synchronization
import Logging

/// `--log-level LEVEL`, `-v` (info) and `-vv` (debug), on every command: logs go to standard
/// error, one line each, labelled by subsystem (`bluetide.hci`, `bluetide.l2cap`, `bluetide.att`,
/// `bluetide.gatt`, `bluetide.smp`, `bluetide.transport`, `bluetide.app`).
///
/// ``BluetideMain`` reads these from the command line and bootstraps swift-log once, before the
/// command runs, so the stack's loggers (created anywhere) honour them.
struct LoggingOptions: ParsableArguments {
    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp("Log to standard error from this level up: trace, debug, info, notice, warning, error, critical (default warning).", valueName: "level"))
    var logLevel: Logger.Level?

    @Flag(name: .customShort("v"), help: "More logs: -v for info, -vv for debug.")
    var verbosity: Int

    /// The level asked for: `--log-level` wins over `-v`; warning when neither is given.
    var level: Logger.Level { logLevel ?? Self.level(verbosity: verbosity) }

    static func level(verbosity: Int) -> Logger.Level {
        switch verbosity {
        case 0: .warning
        case 1: .info
        case 2: .debug
        default: .trace
        }
    }

    /// The command line without its logging options, and the level they ask for: every command
    /// takes them (``BluetideMain`` removes them before the command's own parser sees the line).
    static func split(_ arguments: [String]) throws -> (level: Logger.Level, rest: [String]) {
        var rest: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { rest += arguments[index...]; break }
            if argument == "--log-level" || argument.hasPrefix("--log-level=") {
                let value = argument == "--log-level" ? (index + 1 < arguments.count ? arguments[index + 1] : "") : String(argument.dropFirst("--log-level=".count))
                guard Logger.Level(rawValue: value) != nil else {
                    throw CommandFailure("--log-level \(value): expected one of trace, debug, info, notice, warning, error, critical")
                }
                if argument == "--log-level" { index += 1 }
            } else if !Self.isVerbosity(argument) {
                rest.append(argument)
            }
            index += 1
        }
        return (level(in: arguments) ?? .warning, rest)
    }

    private static func isVerbosity(_ argument: String) -> Bool {
        argument.count >= 2 && argument.hasPrefix("-") && !argument.hasPrefix("--") && argument.dropFirst().allSatisfy { $0 == "v" }
    }

    /// The level a raw command line asks for (before it is parsed, to bootstrap logging first);
    /// nil when the line names an unknown level.
    static func level(in arguments: [String]) -> Logger.Level? {
        var verbosity = 0
        var explicit: Logger.Level?
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { break }
            if argument == "--log-level", index + 1 < arguments.count {
                guard let level = Logger.Level(rawValue: arguments[index + 1]) else { return nil }
                explicit = level
                index += 1
            } else if argument.hasPrefix("--log-level=") {
                guard let level = Logger.Level(rawValue: String(argument.dropFirst("--log-level=".count))) else { return nil }
                explicit = level
            } else if argument.count >= 2, argument.hasPrefix("-"), !argument.hasPrefix("--"), argument.dropFirst().allSatisfy({ $0 == "v" }) {
                verbosity += argument.count - 1
            }
            index += 1
        }
        return explicit ?? level(verbosity: verbosity)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// swift-log handler writing `LEVEL subsystem: message key=value…` lines to standard error.
struct StandardErrorLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line = "\(event.level.rawValue.uppercased()) \(label): \(event.message)"
        let merged = metadata.merging(event.metadata ?? [:], uniquingKeysWith: { _, new in new })
        for key in merged.keys.sorted() { line += " \(key)=\(merged[key]!)" }
        StandardStreams.error.line(line)
    }

    /// Bootstraps swift-log with this handler at `level` (once per process; later calls are ignored).
    static func bootstrap(level: Logger.Level) {
        LoggingBootstrap.once(level: level)
    }
}

/// swift-log may be bootstrapped only once per process; tests run several commands in one.
private enum LoggingBootstrap {
    private static let done = Mutex(false)

    static func once(level: Logger.Level) {
        let first = done.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        LoggingSystem.bootstrap { label in StandardErrorLogHandler(label: label, level: level) }
    }
}

/// The command line's own logger (`bluetide.app`).
let appLogger = Logger(label: "bluetide.app")
