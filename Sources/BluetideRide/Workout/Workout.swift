/// A power target of a workout step: a fraction of FTP, absolute watts, or none (free ride).
public enum WorkoutPower: Sendable, Hashable, Codable {
    /// A fraction of the rider's FTP (0.75 = 75 %).
    case ftpFraction(Double)
    /// Absolute watts.
    case watts(Double)
    /// No target: the rider chooses.
    case free

    /// The power in watts for a rider with `ftp` watts; nil for free riding.
    public func watts(ftp: Double) -> Double? {
        switch self {
        case let .ftpFraction(fraction): fraction * ftp
        case let .watts(watts): watts
        case .free: nil
        }
    }
}

/// One step of a structured workout: a duration, and a target that holds (start = end) or ramps
/// from start to end.
public struct WorkoutStep: Sendable, Hashable, Codable {
    /// What the step is, e.g. `warmup`, `steady`, `interval on`, `ramp`, `cooldown`, `free ride`.
    public var kind: String
    /// Length, seconds.
    public var durationSeconds: Double
    /// Target at the start of the step.
    public var startPower: WorkoutPower
    /// Target at the end of the step (same as start for a steady step).
    public var endPower: WorkoutPower
    /// Suggested cadence, rpm.
    public var cadenceRpm: Double?

    /// A step; `endPower` defaults to `startPower` (steady).
    public init(kind: String, durationSeconds: Double, startPower: WorkoutPower, endPower: WorkoutPower? = nil, cadenceRpm: Double? = nil) {
        self.kind = kind
        self.durationSeconds = durationSeconds
        self.startPower = startPower
        self.endPower = endPower ?? startPower
        self.cadenceRpm = cadenceRpm
    }

    /// The target `seconds` into the step for a rider with `ftp` watts, interpolated on a ramp.
    public func targetWatts(after seconds: Double, ftp: Double) -> Double? {
        guard let start = startPower.watts(ftp: ftp) else { return nil }
        guard let end = endPower.watts(ftp: ftp), durationSeconds > 0 else { return start }
        let fraction = min(max(seconds / durationSeconds, 0), 1)
        return start + (end - start) * fraction
    }
}

/// A structured ERG workout (from a Zwift `.zwo`, an `.erg`/`.mrc` file or a FIT workout): steps played one
/// after the other, each setting the trainer's target power.
public struct Workout: Sendable, Hashable, Codable {
    /// The workout's name.
    public var name: String
    /// What it is for, when the file says.
    public var summary: String?
    /// The steps, in order.
    public var steps: [WorkoutStep]
    /// The FTP the file was written for, W (`.erg` files carry one).
    public var fileFTP: Double?

    /// A workout with these parts.
    public init(name: String, summary: String? = nil, steps: [WorkoutStep], fileFTP: Double? = nil) {
        self.name = name
        self.summary = summary
        self.steps = steps
        self.fileFTP = fileFTP
    }

    /// Length, seconds.
    public var totalSeconds: Double { steps.reduce(0) { $0 + $1.durationSeconds } }

    /// Where the workout stands `elapsed` seconds in.
    public func position(at elapsed: Double) -> WorkoutPosition {
        var start = 0.0
        for (index, step) in steps.enumerated() {
            if elapsed < start + step.durationSeconds {
                return WorkoutPosition(
                    stepIndex: index, stepCount: steps.count, stepElapsedSeconds: max(0, elapsed - start),
                    stepDurationSeconds: step.durationSeconds, elapsedSeconds: max(0, elapsed), totalSeconds: totalSeconds,
                    isFinished: false)
            }
            start += step.durationSeconds
        }
        return WorkoutPosition(
            stepIndex: max(steps.count - 1, 0), stepCount: steps.count, stepElapsedSeconds: steps.last?.durationSeconds ?? 0,
            stepDurationSeconds: steps.last?.durationSeconds ?? 0, elapsedSeconds: totalSeconds, totalSeconds: totalSeconds,
            isFinished: true)
    }

    /// The target power `elapsed` seconds in for a rider with `ftp` watts (whole watts); nil in a
    /// free-ride step and after the end.
    public func targetWatts(at elapsed: Double, ftp: Double) -> Int? {
        let position = position(at: elapsed)
        guard !position.isFinished, position.stepIndex < steps.count else { return nil }
        return steps[position.stepIndex].targetWatts(after: position.stepElapsedSeconds, ftp: ftp).map { Int($0.rounded()) }
    }

    /// Reads a workout file by its extension: `.zwo` (Zwift XML), `.erg` (watts) or `.mrc`
    /// (percent of FTP).
    public static func parse(_ text: String, fileName: String) throws -> Workout {
        let lower = fileName.lowercased()
        let base = String(fileName.split(separator: "/").last ?? Substring(fileName))
        if lower.hasSuffix(".zwo") { return try ZwiftWorkoutParser.parse(text, fallbackName: base) }
        if lower.hasSuffix(".erg") || lower.hasSuffix(".mrc") { return try ERGWorkoutParser.parse(text, fallbackName: base) }
        if lower.hasSuffix(".fit") { throw WorkoutParseError(line: nil, message: "\(base): a FIT workout is binary: read it with parse(bytes:fileName:)") }
        throw WorkoutParseError(line: nil, message: "\(base): unknown workout format; expected a .zwo, .erg, .mrc or .fit file")
    }

    /// Reads a workout file's `bytes` by its extension: `.fit` (a FIT workout file) as binary,
    /// the others as UTF-8 text (see ``parse(_:fileName:)``).
    public static func parse(bytes: [UInt8], fileName: String) throws -> Workout {
        guard fileName.lowercased().hasSuffix(".fit") else {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw WorkoutParseError(line: nil, message: "\(fileName): not UTF-8 text; expected a .zwo, .erg or .mrc file, or a .fit workout")
            }
            return try parse(text, fileName: fileName)
        }
        return try FITWorkoutParser.parse(bytes, fallbackName: String(fileName.split(separator: "/").last ?? Substring(fileName)))
    }
}

/// A workout file that could not be read: where and why.
public struct WorkoutParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 1-based line, when known.
    public var line: Int?
    /// What was wrong.
    public var message: String

    /// An error at `line`.
    public init(line: Int?, message: String) {
        self.line = line
        self.message = message
    }

    /// `line 12: …`.
    public var description: String { line.map { "line \($0): \(message)" } ?? message }
}
