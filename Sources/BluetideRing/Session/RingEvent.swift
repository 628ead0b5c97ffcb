import Bluetide

/// What the ring sends by itself, outside any request/reply exchange.
public enum RingEvent: Hashable, Sendable {
    /// `73 0C`: battery level changed.
    case battery(COLMIBattery)
    /// `69`: a real-time reading (value 0 = still measuring; check ``COLMIRealTimeReading/errorCode``).
    case reading(COLMIRealTimeReading)
    /// `1E`: one reading of the continuous heart-rate stream, bpm.
    case continuousHeartRate(UInt8)
    /// `73 12`: today's totals so far.
    case activity(COLMILiveActivity)
    /// `73 xx`: another notice (new HR-log data, new SpO2 data, …), by subtype.
    case notice(subtype: UInt8)
}

/// Firmware and hardware revision strings from the Device Information service.
public struct RingDeviceInformation: Hashable, Sendable, Codable {
    /// E.g. `R02_3.00.06_240523`.
    public var firmware: String?
    /// E.g. `R02_V3.0`.
    public var hardware: String?
}
