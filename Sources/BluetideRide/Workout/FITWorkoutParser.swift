/// Reads FIT workout files (`.fit` of type workout, as Garmin Connect, TrainingPeaks and
/// intervals.icu export them): the workout's name and its steps. Timed steps only (a step ending
/// on distance, heart rate, calories or the lap button cannot be ridden in ERG and is refused,
/// naming it). A power target is the middle of its custom range: values of 1000 and more are
/// watts + 1000, values below are percent of FTP; power zones and other targets (heart rate,
/// cadence, speed, open) ride free. "Repeat until steps complete" repeats the steps from the one
/// it names, for the number of times it gives in all. The step's intensity gives its kind.
public enum FITWorkoutParser {
    /// The workout in `bytes`; `fallbackName` when the file names none. Throws
    /// ``WorkoutParseError`` saying what is wrong and where.
    public static func parse(_ bytes: [UInt8], fallbackName: String) throws -> Workout {
        let messages: [FITDecodedMessage]
        do { messages = try FITDecoder.messages(bytes) } catch { throw WorkoutParseError(line: nil, message: "\(fallbackName): \(error)") }
        if let type = messages.first(where: { $0.global == 0 })?.unsigned(0), type != 5 {
            throw WorkoutParseError(line: nil, message: "\(fallbackName): a FIT file of type \(type), not a workout (type 5)")
        }
        let name = messages.first { $0.global == 26 }?.string(8) ?? fallbackName
        let stepMessages = messages.filter { $0.global == 27 }
        guard !stepMessages.isEmpty else { throw WorkoutParseError(line: nil, message: "\(fallbackName): no workout steps in the file") }
        var steps: [WorkoutStep] = []
        /// Where each FIT step's expansion starts in `steps`, by its index.
        var starts: [Int: Int] = [:]
        for (position, message) in stepMessages.enumerated() {
            let index = message.unsigned(254).map(Int.init) ?? position
            starts[index] = steps.count
            let label = "step \(index + 1)"
            let durationType = message.unsigned(1) ?? 0
            switch durationType {
            case 0, 28:  // time, repetition time: milliseconds
                guard let milliseconds = message.unsigned(2), milliseconds > 0 else {
                    throw WorkoutParseError(line: nil, message: "\(fallbackName): \(label) has no duration")
                }
                let power = Self.power(message)
                steps.append(WorkoutStep(kind: Self.kind(message.unsigned(7)), durationSeconds: Double(milliseconds) / 1000, startPower: power))
            case 6:  // repeat until steps complete: from step `duration_value`, `target_value` times in all
                guard let from = message.unsigned(2).map(Int.init), let first = starts[from], let times = message.unsigned(4), times >= 1 else {
                    throw WorkoutParseError(line: nil, message: "\(fallbackName): \(label) repeats a step that does not come before it")
                }
                let block = Array(steps[first...])
                for _ in 1..<min(Int(times), 100) { steps += block }
            default:
                throw WorkoutParseError(
                    line: nil,
                    message: "\(fallbackName): \(label) ends on something other than time (FIT duration type \(durationType)); only timed steps can be ridden")
            }
        }
        return Workout(name: name, steps: steps)
    }

    /// A step's power: the middle of its custom power range (≥ 1000: watts + 1000; below:
    /// percent of FTP), free when it has none.
    static func power(_ message: FITDecodedMessage) -> WorkoutPower {
        guard message.unsigned(3) == 4 else { return .free }
        let low = message.unsigned(5), high = message.unsigned(6)
        guard let value = low ?? high else { return .free }
        let middle = (Double(value) + Double(high ?? value)) / 2
        return middle >= 1000 ? .watts(middle - 1000) : .ftpFraction(middle / 100)
    }

    /// `warmup`, `cooldown`, `interval off` (rest, recovery) or `steady`.
    static func kind(_ intensity: UInt64?) -> String {
        switch intensity {
        case 2: "warmup"
        case 3: "cooldown"
        case 1, 4: "interval off"
        default: "steady"
        }
    }
}
