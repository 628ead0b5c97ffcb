import Synchronization

/// Keeps the warnings about a damaged value log readable: the first ``limit`` go on to the
/// reporter as they come, the rest are only counted, so a file whose body is garbage costs a few
/// lines and one count (``summary``) instead of a warning per line (it was 103 MB of them).
public final class ValueLogWarningLimit: Sendable {
    /// Warnings passed on before the rest are only counted.
    public let limit: Int
    private let report: @Sendable (ValueLogWarning) -> Void
    private let counted = Mutex(0)

    /// Passes the first `limit` warnings to `report` and counts every one.
    public init(limit: Int = 5, report: @escaping @Sendable (ValueLogWarning) -> Void) {
        self.limit = max(0, limit)
        self.report = report
    }

    /// Counts `warning`, and passes it on while fewer than ``limit`` were.
    public func warn(_ warning: ValueLogWarning) {
        let count = counted.withLock { count in
            count += 1
            return count
        }
        if count <= limit { report(warning) }
    }

    /// Warnings counted so far.
    public var count: Int { counted.withLock { $0 } }

    /// Warnings counted but not passed on.
    public var suppressed: Int { max(0, count - limit) }

    /// `12345 damaged lines in all; only the first 5 were shown`, nil when every warning was shown.
    public var summary: String? {
        let count = count
        guard count > limit else { return nil }
        return "\(count) damaged lines in all; only the first \(limit) were shown"
    }
}
