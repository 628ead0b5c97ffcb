import Foundation
import Synchronization
import BluetideSupport

extension Duration {
    /// The duration in seconds, as the host stack's time values are.
    var seconds: Double { inSeconds }
}
