/// Adaptive difficulty: the time a target stays lit shortens while the athlete keeps up and
/// lengthens after a miss. Pure rule: feed each step's result, read the next step's window.
///
/// After ``streakToShorten`` hits in a row the window shrinks by ``shortenFactor``; each miss
/// grows it by ``lengthenFactor`` and resets the streak. The window stays within ``range``.
public struct AdaptiveInterval: Hashable, Sendable {
    /// Allowed windows, ms (within the trainer's 1...60000).
    public let range: ClosedRange<Int>
    /// Hits in a row before the window shortens.
    public var streakToShorten: Int = 3
    /// Factor applied on a streak (below 1).
    public var shortenFactor: Double = 0.9
    /// Factor applied on a miss (above 1).
    public var lengthenFactor: Double = 1.2
    /// The current window, ms.
    public private(set) var milliseconds: Int
    /// Hits in a row since the last change.
    public private(set) var streak = 0

    /// Starts at `start` ms, kept within `range`.
    public init(start: Int, range: ClosedRange<Int> = 250...3000) {
        let lower = max(1, range.lowerBound), upper = min(60_000, max(lower, range.upperBound))
        self.range = lower...upper
        milliseconds = min(max(start, lower), upper)
    }

    /// Counts one step and returns the window for the next one, ms.
    @discardableResult
    public mutating func record(hit: Bool) -> Int {
        if hit {
            streak += 1
            if streak >= streakToShorten {
                streak = 0
                milliseconds = clamp(Int((Double(milliseconds) * shortenFactor).rounded(.down)))
            }
        } else {
            streak = 0
            milliseconds = clamp(Int((Double(milliseconds) * lengthenFactor).rounded(.up)))
        }
        return milliseconds
    }

    private func clamp(_ value: Int) -> Int { min(max(value, range.lowerBound), range.upperBound) }
}
