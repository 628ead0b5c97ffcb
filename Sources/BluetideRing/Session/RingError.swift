import Bluetide

/// Why a ring command failed, in words that say what to try.
public enum RingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No valid reply after every attempt (the last problem: timeout, bad checksum, …).
    case noValidReply(command: String, attempts: Int, lastProblem: String)
    /// The link went down.
    case linkLost(String)
    /// The device has no COLMI UART service (not a ring, or not a COLMI one).
    case notARing(String)
    /// A reply arrived but says something the session cannot use.
    case unexpectedReply(command: String, detail: String)
    /// The ring does not have what was asked for (a setting, a sensor, a command).
    case unsupported(String)
    /// The ring asked for a bond (`3C` flag 0x08) and pairing failed.
    case bondFailed(String)
    /// A setting read back after a write is not what was written.
    case settingNotKept(key: String, wanted: String, found: String)

    public var description: String {
        switch self {
        case let .noValidReply(command, attempts, last):
            "the ring gave no valid reply to \(command) after \(attempts) attempt\(attempts == 1 ? "" : "s") (last: \(last)); move it closer, make sure no phone app is connected to it, and try again"
        case let .linkLost(detail):
            "the link to the ring was lost (\(detail)); bring it closer and run the command again"
        case let .notARing(detail):
            "not a COLMI ring: \(detail); pick another device with `bluetide ring pair`"
        case let .unexpectedReply(command, detail):
            "unexpected reply to \(command): \(detail)"
        case let .unsupported(detail):
            detail
        case let .bondFailed(detail):
            "the ring asks to be bonded and pairing failed (\(detail)); run the command again, or remove the ring's old bond (bluetide bonds) and put it back in pairing range"
        case let .settingNotKept(key, wanted, found):
            "the ring did not keep \(key)=\(wanted) (it reads \(found) after the write); its firmware may not support that value"
        }
    }
}
