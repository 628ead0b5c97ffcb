import Foundation

/// Numeric lines an emulated serial device prints by itself, as a robot prints its sensor
/// readings: a sine (period 4 s, amplitude 1, three decimals), a counter, or both, as
/// `key=value` pairs, `rate` lines a second (`sine=0.309 counter=3\n`). For the plotter
/// (`bluetide uart plot`) and the tests; pure: the time is passed in, and line *i* carries the
/// values of time *i* / `rate`, so the output depends on nothing but the calls.
public struct NumericLineStream: Hashable, Sendable {
    /// What each line carries.
    public enum Series: String, Hashable, Sendable, CaseIterable {
        /// `sine=…`
        case sine
        /// `counter=…` (0, 1, 2, …)
        case counter
        /// `sine=… counter=…`
        case both
    }

    /// What each line carries.
    public let series: Series
    /// Lines per second (0.1 … 1000).
    public let rate: Double
    private var start: Double?
    private var emitted = 0

    /// Most lines one call returns after a long pause (older ones are skipped, as a device's
    /// UART would not buffer them either).
    public static let catchUpLimit = 100

    /// A stream of `series` at `rate` lines a second (clamped to 0.1 … 1000).
    public init(series: Series, rate: Double = 10) {
        self.series = series
        self.rate = min(max(rate.isFinite ? rate : 10, 0.1), 1000)
    }

    /// The lines due by `now` (seconds; the first call starts the stream and gives line 0).
    public mutating func lines(now: Double) -> [String] {
        let origin = start ?? now
        start = origin
        let due = Int(((now - origin) * rate).rounded(.down)) + 1
        if due - emitted > Self.catchUpLimit { emitted = due - Self.catchUpLimit }
        var out: [String] = []
        while emitted < due {
            out.append(Self.line(series, index: emitted, rate: rate))
            emitted += 1
        }
        return out
    }

    /// Line `index` of a stream of `series` at `rate`, with its `\n`.
    public static func line(_ series: Series, index: Int, rate: Double) -> String {
        let sine = String(format: "%.3f", sin(2 * Double.pi * (Double(index) / rate) / 4))
        let value = sine == "-0.000" ? "0.000" : sine
        switch series {
        case .sine: return "sine=\(value)\n"
        case .counter: return "counter=\(index)\n"
        case .both: return "sine=\(value) counter=\(index)\n"
        }
    }
}
