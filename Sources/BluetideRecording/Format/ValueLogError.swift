/// A line of a value log that could not be read: where (1-based line number), which field, what
/// was expected there and what was found.
public struct ValueLogLineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 1-based line number in the file (the header is line 1).
    public var line: Int
    /// The field at fault, e.g. `value`, or `JSON` for a syntax error, `record` for a line that
    /// is not an object.
    public var field: String
    /// What the format requires there.
    public var expected: String
    /// What the line holds instead.
    public var found: String

    /// An error at 1-based `line` in `field`.
    public init(line: Int, field: String, expected: String, found: String) {
        self.line = line
        self.field = field
        self.expected = expected
        self.found = found
    }

    /// `line 3, field "value": expected an even number of hex digits, found "03a"`.
    public var description: String {
        "line \(line), field \"\(field)\": expected \(expected), found \(found)"
    }
}

/// Why a value log could not be written or read.
public enum ValueLogError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The operating system refused an operation on the file: `operation` (`open`, `write`,
    /// `read`, `sync`, `close`) on `path`, with the OS error number and its message.
    case io(operation: String, path: String, code: Int32, message: String)
    /// A line of the log is malformed (or the header is missing or of another format/version).
    case malformedLine(ValueLogLineError)
    /// A record cannot be written in the format, e.g. a timestamp that is not a finite number ≥ 0.
    case unrepresentable(field: String, reason: String)
    /// The writer was already closed.
    case closed(path: String)

    public var description: String {
        switch self {
        case let .io(operation, path, code, message):
            return "cannot \(operation) \(path): \(message) (errno \(code))"
        case let .malformedLine(error):
            return "malformed value log: \(error)"
        case let .unrepresentable(field, reason):
            return "cannot write record: field \"\(field)\" \(reason)"
        case let .closed(path):
            return "value log \(path) is already closed"
        }
    }
}
