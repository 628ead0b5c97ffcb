// STUB: stands in for the Peripheral API written on the `peripheral` branch
// (Sources/Bluetide/Peripheral/). The lead deletes this file when merging that branch.
import BluetideHost

/// The peripheral role of a ``Bluetooth`` handle (placeholder until the real API is merged).
public final class Peripheral: Sendable {
    /// The host stack the peripheral serves from.
    public let stack: HostStack

    /// A peripheral over a started `stack`.
    public init(stack: HostStack) { self.stack = stack }
}
