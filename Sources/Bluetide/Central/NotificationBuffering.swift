/// How many notified values a sequence of ``Connection/notifications(of:buffering:)`` holds for
/// a reader that falls behind, and which ones it gives up when full.
///
/// A device does not wait for a slow reader (BLE notifications cannot be paused, and holding the
/// host's reader would stall every link of the adapter), so a sequence's buffer is bounded and
/// what does not fit is dropped and counted in ``Connection/droppedNotifications``: memory stays
/// bounded however long a consumer stops reading.
public enum NotificationBuffering: Sendable, Equatable {
    /// Keeps the newest `count` values; older ones are dropped (a reader that catches up sees
    /// the device's latest state: sensors, live values).
    case newest(Int)
    /// Keeps the oldest `count` values; newer ones are dropped (a reader that catches up sees
    /// an unbroken run from where it stopped).
    case oldest(Int)

    /// The default: the newest 4096 values (about 2 MB at the largest ATT values).
    public static let standard = NotificationBuffering.newest(4096)

    /// The values held at most (at least 1).
    public var capacity: Int {
        switch self {
        case let .newest(count), let .oldest(count): max(count, 1)
        }
    }

    /// The stream policy for element type `T`.
    func policy<T>(of _: T.Type) -> AsyncThrowingStream<T, any Error>.Continuation.BufferingPolicy {
        switch self {
        case .newest: .bufferingNewest(capacity)
        case .oldest: .bufferingOldest(capacity)
        }
    }
}
