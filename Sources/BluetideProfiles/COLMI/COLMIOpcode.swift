import BluetideBase

/// V1 command ids (byte 0 of every packet). A reply echoes its request's opcode.
public enum COLMIOpcode {
    /// 0x01 set date/time; the reply is a capability map.
    public static let setTime: UInt8 = 0x01
    /// 0x02 camera / gesture mode.
    public static let camera: UInt8 = 0x02
    /// 0x03 battery.
    public static let battery: UInt8 = 0x03
    /// 0x04 phone name / app version.
    public static let phoneName: UInt8 = 0x04
    /// 0x05 display settings (rings with a screen; colmi-docs calls 0x05 "palm screen").
    public static let display: UInt8 = 0x05
    /// 0x08 power off (Gadgetbridge) or reboot (tahnok), payload `01`.
    public static let powerOff: UInt8 = 0x08
    /// 0x0A user preferences.
    public static let userPreferences: UInt8 = 0x0A
    /// 0x10 blink the LED twice.
    public static let blinkTwice: UInt8 = 0x10
    /// 0x15 heart-rate log for a day (multi-packet).
    public static let heartRateLog: UInt8 = 0x15
    /// 0x16 heart-rate log settings.
    public static let heartRateLogSettings: UInt8 = 0x16
    /// 0x1E continuous heart-rate stream.
    public static let continuousHeartRate: UInt8 = 0x1E
    /// 0x21 goals.
    public static let goals: UInt8 = 0x21
    /// 0x2C automatic SpO2 toggle.
    public static let autoSpO2: UInt8 = 0x2C
    /// 0x2F packet-size indicator (unsolicited).
    public static let packetSize: UInt8 = 0x2F
    /// 0x36 automatic stress toggle.
    public static let autoStress: UInt8 = 0x36
    /// 0x37 stress history (multi-packet).
    public static let stressHistory: UInt8 = 0x37
    /// 0x38 automatic HRV toggle.
    public static let autoHRV: UInt8 = 0x38
    /// 0x39 HRV history (multi-packet).
    public static let hrvHistory: UInt8 = 0x39
    /// 0x3A automatic temperature toggle.
    public static let autoTemperature: UInt8 = 0x3A
    /// 0x3C device-support flags.
    public static let deviceSupport: UInt8 = 0x3C
    /// 0x43 steps / sport detail for a day (multi-packet).
    public static let sportDetail: UInt8 = 0x43
    /// 0x50 find device (flash the LED about 10 s).
    public static let findDevice: UInt8 = 0x50
    /// 0x69 start/continue a real-time measurement; also each reading.
    public static let realTimeStart: UInt8 = 0x69
    /// 0x6A stop a real-time measurement.
    public static let realTimeStop: UInt8 = 0x6A
    /// 0x73 device notification (unsolicited).
    public static let deviceNotification: UInt8 = 0x73
    /// 0xA1 raw sensor stream.
    public static let rawSensor: UInt8 = 0xA1
    /// 0xBC big data (V2 characteristics only; never a V1 packet).
    public static let bigData: UInt8 = 0xBC
    /// 0xFF factory reset, payload `66 66`.
    public static let factoryReset: UInt8 = 0xFF

    /// A short name for an opcode, e.g. `battery`, or `0x7e` when unknown.
    public static func name(_ opcode: UInt8) -> String {
        switch opcode {
        case setTime: return "set time"
        case camera: return "camera"
        case battery: return "battery"
        case phoneName: return "phone name"
        case display: return "display"
        case powerOff: return "power off"
        case userPreferences: return "user preferences"
        case blinkTwice: return "blink twice"
        case heartRateLog: return "HR log"
        case heartRateLogSettings: return "HR-log settings"
        case continuousHeartRate: return "continuous HR"
        case goals: return "goals"
        case autoSpO2: return "auto SpO2"
        case packetSize: return "packet size"
        case autoStress: return "auto stress"
        case stressHistory: return "stress history"
        case autoHRV: return "auto HRV"
        case hrvHistory: return "HRV history"
        case autoTemperature: return "auto temperature"
        case deviceSupport: return "device support"
        case sportDetail: return "sport detail"
        case findDevice: return "find device"
        case realTimeStart: return "real-time"
        case realTimeStop: return "real-time stop"
        case deviceNotification: return "notification"
        case rawSensor: return "raw sensor"
        case bigData: return "big data"
        case factoryReset: return "factory reset"
        default: return "0x\([opcode].hexString)"
        }
    }
}
