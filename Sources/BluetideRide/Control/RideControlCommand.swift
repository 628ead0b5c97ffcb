import Foundation

/// A command typed during a ride (or sent by the live page) to change the trainer's target:
/// `erg 220` (watts), `grade 3.5` (percent, negative downhill), `resistance 30` (percent of the
/// trainer's range), `free` (back to free riding); to `pause` and `start` (resume) the ride, mark
/// a `lap`, start the ride's `workout` from its first step; or `help`. Parsing only;
/// ``RideSession/perform(_:)`` carries it out.
public enum RideControlCommand: Sendable, Hashable {
    /// Ask the trainer for a target.
    case target(RideTarget)
    /// Back to free riding (FTMS reset; FE-C a flat road).
    case free
    /// Pause: the trainer rides free and a workout's clock stops.
    case pause
    /// Go on after a pause: the target (or the workout's step) comes back.
    case resume
    /// End the current lap (its summary is the answer) and start the next.
    case lap
    /// Start the ride's workout (the one it was started with) from its first step.
    case startWorkout
    /// Show the commands.
    case help

    /// The commands, one line: what `help` answers.
    public static let usage =
        "commands: erg WATTS (0–4000), grade PERCENT (−40–40), resistance PERCENT (0–100), free, pause, start, lap, workout, help"

    /// Parses one line (case and surrounding spaces ignored; `power`/`watts` mean `erg`, `slope`
    /// means `grade`). Throws ``RideError`` saying what was expected, what came and what to try.
    public static func parse(_ line: String) throws -> RideControlCommand {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { $0.lowercased() }
        guard let verb = words.first else { throw RideError("empty command; \(usage)") }
        func number(_ name: String, _ range: ClosedRange<Double>) throws -> Double {
            guard words.count == 2 else { throw RideError("\(verb): expected one number (\(name)), found \(words.count - 1) words; e.g. `\(verb) \(Int(range.upperBound / 2))`") }
            let text = words[1].replacingOccurrences(of: "−", with: "-")
            guard let value = Double(text), value.isFinite, range.contains(value) else {
                throw RideError("\(verb): expected \(name) in \(RideFormat.fixed(range.lowerBound, 0))…\(RideFormat.fixed(range.upperBound, 0)), found \"\(words[1])\"")
            }
            return value
        }
        switch verb {
        case "erg", "power", "watts":
            return .target(.power(watts: Int(try number("watts", 0...4000).rounded())))
        case "grade", "slope":
            return .target(.grade(percent: try number("percent", -40...40)))
        case "resistance":
            return .target(.resistance(percent: try number("percent", 0...100)))
        case "free", "reset":
            guard words.count == 1 else { throw RideError("\(verb) takes no value; \(usage)") }
            return .free
        case "pause", "start", "resume", "lap", "workout":
            guard words.count == 1 else { throw RideError("\(verb) takes no value; \(usage)") }
            switch verb {
            case "pause": return .pause
            case "lap": return .lap
            case "workout": return .startWorkout
            default: return .resume
            }
        case "help", "?":
            return .help
        default:
            throw RideError("unknown command \"\(verb)\"; \(usage)")
        }
    }
}
