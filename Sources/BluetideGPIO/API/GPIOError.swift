/// Why a GPIO operation failed. Every message names the chip, the line when there is one,
/// and what the user can do about it.
public enum GPIOError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The chip device does not exist; `available` lists the chips that do (e.g. `/dev/gpiochip0`).
    case noSuchChip(chip: String, available: [String])
    /// Opening the chip or requesting lines was refused by permissions.
    case permissionDenied(chip: String)
    /// The path exists but is not a GPIO character device.
    case notAGPIOChip(chip: String)
    /// The line does not exist on the chip (valid offsets are `0 ..< lineCount`).
    case lineOutOfRange(chip: String, line: UInt32, lineCount: UInt32)
    /// The line is held by another consumer (a process or a kernel driver), named when known.
    case lineBusy(chip: String, line: UInt32, lineName: String, consumer: String)
    /// The request itself is malformed (duplicate lines, too many lines, edge detection on an output…).
    case invalidRequest(chip: String, reason: String)
    /// A value was set on, or read from, a line that is not part of the request.
    case notRequested(chip: String, line: UInt32)
    /// A value was set on a line requested as an input.
    case notAnOutput(chip: String, line: UInt32)
    /// The request was already released.
    case released(chip: String)
    /// Any other system call failure: operation, errno and its text.
    case systemCall(chip: String, operation: String, errno: Int32, message: String)

    public var description: String {
        switch self {
        case let .noSuchChip(chip, available):
            let list = available.isEmpty
                ? "no GPIO chips exist on this machine (is this a Raspberry Pi? use --gpio sim to simulate)"
                : "available chips: \(available.joined(separator: ", "))"
            return "GPIO chip \(chip) does not exist: \(list)"
        case let .permissionDenied(chip):
            return "permission denied opening GPIO chip \(chip): add your user to the gpio group "
                + "(sudo usermod -aG gpio $USER, then log in again) or run as root"
        case let .notAGPIOChip(chip):
            return "\(chip) is not a GPIO character device (expected /dev/gpiochipN)"
        case let .lineOutOfRange(chip, line, lineCount):
            return "GPIO chip \(chip) has no line \(line): valid lines are 0…\(lineCount == 0 ? 0 : lineCount - 1); "
                + "check the line map in the configuration"
        case let .lineBusy(chip, line, lineName, consumer):
            let named = lineName.isEmpty ? "" : " (\(lineName))"
            let holder = consumer.isEmpty ? "another consumer" : "\"\(consumer)\""
            return "GPIO line \(line)\(named) on \(chip) is in use by \(holder): stop that program "
                + "or driver (or disable its device-tree overlay), or pick another line in the configuration"
        case let .invalidRequest(chip, reason):
            return "invalid GPIO request on \(chip): \(reason)"
        case let .notRequested(chip, line):
            return "GPIO line \(line) on \(chip) is not part of this request: request it first"
        case let .notAnOutput(chip, line):
            return "GPIO line \(line) on \(chip) is requested as an input: its value cannot be set"
        case let .released(chip):
            return "the GPIO request on \(chip) was already released"
        case let .systemCall(chip, operation, errno, message):
            return "\(operation) on GPIO chip \(chip) failed: \(message) (errno \(errno))"
        }
    }
}
