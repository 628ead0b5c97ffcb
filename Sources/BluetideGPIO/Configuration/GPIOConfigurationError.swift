/// Why a GPIO configuration file was refused: where (line number, key), what was expected and
/// what was found.
public struct GPIOConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based line in the file, when the problem is on one line.
    public var line: Int?
    /// The full key (`debounce-ms`, `target.2.led`, `sim.miss-probability`), when there is one.
    public var key: String?
    /// What is wrong and, where useful, how to fix it.
    public var message: String

    public init(line: Int?, key: String?, message: String) {
        self.line = line
        self.key = key
        self.message = message
    }

    /// `line 3: debounce-ms: expected …, found "…"`.
    public var description: String {
        var parts: [String] = []
        if let line { parts.append("line \(line)") }
        if let key { parts.append(key) }
        parts.append(message)
        return parts.joined(separator: ": ")
    }

    static func invalid(_ key: String, line: Int?, expected: String, found: String) -> GPIOConfigurationError {
        GPIOConfigurationError(line: line, key: key, message: "expected \(expected), found \"\(found)\"")
    }
}
