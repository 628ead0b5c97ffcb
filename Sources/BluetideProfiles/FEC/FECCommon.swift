import BluetideBase

/// Fitness equipment state (bits 4-6 of the last byte of pages 16, 17, 25 and 26).
public struct FEState: TrainerNamedCode {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// 1: asleep or off.
    public static let asleep = Self(rawValue: 1)
    /// 2: ready.
    public static let ready = Self(rawValue: 2)
    /// 3: in use (elapsed time and distance advance only in this state).
    public static let inUse = Self(rawValue: 3)
    /// 4: finished or paused.
    public static let finished = Self(rawValue: 4)
    public static let names: [UInt8: String] = [1: "ASLEEP", 2: "READY", 3: "IN USE", 4: "FINISHED"]
}

/// Equipment type of page 16 (byte 1, bits 0-4).
public struct FECEquipmentType: TrainerNamedCode {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let general = Self(rawValue: 16)
    public static let treadmill = Self(rawValue: 19)
    public static let elliptical = Self(rawValue: 20)
    public static let stationaryBike = Self(rawValue: 21)
    public static let rower = Self(rawValue: 22)
    public static let climber = Self(rawValue: 23)
    public static let nordicSkier = Self(rawValue: 24)
    /// 25 (0x19): a trainer / stationary bike that reports page 25.
    public static let trainer = Self(rawValue: 25)
    public static let names: [UInt8: String] = [
        16: "general", 19: "treadmill", 20: "elliptical", 21: "stationary bike", 22: "rower", 23: "climber",
        24: "nordic skier", 25: "trainer",
    ]
}

/// Heart-rate data source of page 16 (byte 7, bits 0-1).
public struct FECHeartRateSource: TrainerNamedCode {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let invalid = Self(rawValue: 0)
    public static let antPlusMonitor = Self(rawValue: 1)
    public static let electromagnetic5kHz = Self(rawValue: 2)
    public static let handContact = Self(rawValue: 3)
    public static let names: [UInt8: String] = [
        0: "invalid", 1: "ANT+ HRM", 2: "EM 5 kHz", 3: "hand contact",
    ]
}

/// Reads a page's number byte and checks it is the page expected.
func readFECPageNumber(_ expected: UInt8, _ name: String, from reader: inout ByteReader) throws(DecodingError) {
    let offset = reader.offset
    let number = try reader.readUInt8("\(name).page number")
    guard number == expected else {
        throw .invalid("\(name).page number", expected: "\(expected)", found: "\(number)", at: offset)
    }
}

/// The FE state and lap toggle packed in the high nibble of a page's last byte.
func fecStateNibble(_ byte: UInt8) -> (state: FEState, lapToggle: Bool) {
    (FEState(rawValue: (byte >> 4) & 0x07), byte & 0x80 != 0)
}

/// Packs the FE state and lap toggle into a high nibble.
func fecStateNibble(_ state: FEState, _ lapToggle: Bool) -> UInt8 {
    ((state.rawValue & 0x07) << 4) | (lapToggle ? 0x80 : 0)
}
