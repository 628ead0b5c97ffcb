#if canImport(Glibc)
import Glibc
#endif

/// Puts a terminal in raw mode (keys arrive one by one, unechoed, Ctrl-C as a byte) and puts
/// it back as it was.
public final class TerminalMode: Sendable {
    private let descriptor: Int32
    private let saved: termios

    /// Switches `descriptor` (standard input by default) to raw mode; nil when it is not a terminal.
    public init?(descriptor: Int32 = STDIN_FILENO) {
        guard isatty(descriptor) == 1 else { return nil }
        var current = termios()
        guard tcgetattr(descriptor, &current) == 0 else { return nil }
        self.descriptor = descriptor
        self.saved = current
        var raw = current
        cfmakeraw(&raw)
        raw.c_oflag |= tcflag_t(OPOST | ONLCR)  // keep "\n" → "\r\n" on output so lines start at the left
        tcsetattr(descriptor, TCSANOW, &raw)
    }

    /// Puts the terminal back as it was.
    public func restore() {
        var mode = saved
        tcsetattr(descriptor, TCSANOW, &mode)
    }
}
