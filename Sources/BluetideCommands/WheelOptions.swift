import ArgumentParser
import BluetideProfiles

/// `--circumference`: the wheel that turns wheel revolutions (CSC, Cycling Power) into speed and
/// distance, the one option `record`, `replay`, `ride` and `ride export` share.
struct WheelOptions: ParsableArguments {
    @Option(name: .long, help: "Wheel circumference, metres (speed and distance from CSC and power meters).")
    var circumference: Double = 2.105

    /// Refuses a wheel out of range, naming the option.
    func validated() throws {
        guard circumference.isFinite, (0.5...4).contains(circumference) else {
            throw CommandFailure("--circumference \(circumference): expected metres, 0.5…4 (2.105 for 700x25c)")
        }
    }

    /// The profile decoders' options for this wheel.
    var profileOptions: ProfileOptions { ProfileOptions(wheelCircumference: circumference) }
}
