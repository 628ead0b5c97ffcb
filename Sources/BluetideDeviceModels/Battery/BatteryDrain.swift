import BluetideBase
import BluetideProfiles

/// A battery that drains one percent every `secondsPerPercent` and notifies Battery Level (0x2A19)
/// on each change; it jumps back to 100 % after reaching 0 (someone charged it) so a long run
/// keeps producing values. Used by the battery model and embedded in other models.
public struct BatteryDrain: Hashable, Sendable {
    /// Current level, percent.
    public private(set) var percent: UInt8
    /// Seconds per percent.
    public var secondsPerPercent: Double
    private var accumulated: Double = 0
    private var lastTime: Double?

    /// Memberwise initialiser.
    public init(percent: UInt8 = 100, secondsPerPercent: Double = 120) {
        self.percent = min(percent, 100)
        self.secondsPerPercent = max(secondsPerPercent, 0.001)
    }

    /// The Battery service with its level characteristic (read + notify).
    public var service: EmulatedService {
        EmulatedService(.battery, [
            EmulatedCharacteristic(.batteryLevel, [.read, .notify], initialValue: BatteryLevel(percent: percent).bytes)
        ])
    }

    /// The encoded level.
    public var value: [UInt8] { BatteryLevel(percent: percent).bytes }

    /// Advances to `now`; returns a notification when the level changed.
    public mutating func tick(now: Double) -> [EmulatedOutput] {
        guard let last = lastTime else {
            lastTime = now
            return []
        }
        guard now > last else { return [] }
        lastTime = now
        accumulated += now - last
        var changed = false
        while accumulated >= secondsPerPercent {
            accumulated -= secondsPerPercent
            percent = percent == 0 ? 100 : percent - 1
            changed = true
        }
        return changed ? [EmulatedOutput(.batteryLevel, value)] : []
    }
}
