/// Why a benchmark could not run or its data was not intact: one line saying what went wrong and
/// what to try. A message that starts with an option (`--packet-size 9: …`) refuses that option's
/// value, so a command line can report it as bad input.
public struct BenchFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The line to show.
    public let message: String
    /// True when the failure only follows from the peer's side ending the link (so a run of both
    /// sides reports the other side's failure, the cause, instead).
    public let isLinkLoss: Bool

    public init(_ message: String, isLinkLoss: Bool = false) {
        self.message = message
        self.isLinkLoss = isLinkLoss
    }

    public var description: String { message }
}
