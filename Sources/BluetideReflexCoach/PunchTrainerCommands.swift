import Bluetide
import BluetideProfiles

/// The writes that run a program on a Punch trainer, shared by the coach and the demo: the two
/// sequences (targets, then times: the device checks their lengths against each other), then a
/// control command. Answers come as notifications (``PunchUUID/response``, ``PunchUUID/control``):
/// subscribe before ``start(on:countdownSeconds:)``.
public enum PunchTrainerCommands {
    /// Writes `program`'s targets and step times to the trainer on `connection`.
    public static func load(_ program: PunchProgram, on connection: Connection) async throws {
        try await connection.write(program.sequence, to: PunchUUID.sequence)
        try await connection.write(program.timeSequence, to: PunchUUID.timeSequence)
    }

    /// Starts the loaded program: at once (`01`), or after a countdown of `countdownSeconds` (`03 n`).
    public static func start(on connection: Connection, countdownSeconds: UInt8? = nil) async throws {
        let command: PunchControlCommand = countdownSeconds.map { .countdownStart(seconds: $0) } ?? .start
        try await connection.write(command, to: PunchUUID.control)
    }
}
