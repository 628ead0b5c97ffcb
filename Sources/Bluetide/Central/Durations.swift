import Foundation
import Synchronization

extension Duration {
    /// The duration in seconds, as the host stack's time values are.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
