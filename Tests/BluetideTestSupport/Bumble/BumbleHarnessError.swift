/// A failure of the Bumble harness, with enough context to diagnose it from the test log
/// (usually the process's recent stdout and stderr lines).
public struct BumbleHarnessError: Error, CustomStringConvertible {
    /// What went wrong, including the child's recent output where useful.
    public let description: String

    /// An error with this message.
    public init(description: String) {
        self.description = description
    }
}
