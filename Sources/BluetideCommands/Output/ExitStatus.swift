import Foundation

/// The exit status of every `bluetide` command, the same for all of them (and written in
/// `bluetide --help`): scripts can tell bad input from a device that did not answer.
enum ExitStatus: Int32, Sendable, CaseIterable {
    /// The command did what it was asked.
    case success = 0
    /// Something failed while running: a device not found, a link lost, a transport refused.
    case failure = 1
    /// Bad input or usage: an unknown option, a value out of range, hex that is not hex.
    case usage = 2
    /// Stopped by Ctrl-C (SIGINT) before it finished on its own: 128 + SIGINT, as shells report it.
    case interrupted = 130

    /// The word used for it in JSON errors (`error.code`).
    var code: String {
        switch self {
        case .success: "ok"
        case .failure: "failure"
        case .usage: "usage"
        case .interrupted: "interrupted"
        }
    }

    /// The exit-status paragraph of `bluetide --help`.
    static let helpText = """
        Exit status (every command): 0 success, 1 runtime failure (device not found, link lost, \
        transport refused), 2 bad input or usage, 130 interrupted (Ctrl-C).
        """
}
