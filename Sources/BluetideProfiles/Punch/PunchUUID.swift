import BluetideBase

/// GATT identifiers of the reflex trainer's "Punch" service. All share the base
/// `6D5E850D-C8C0-4EA9-BDA3-B7D1xxxxD22A`.
public enum PunchUUID {
    static func make(_ short: UInt16) -> BluetoothUUID {
        BluetoothUUID(high: 0x6D5E_850D_C8C0_4EA9, low: 0xBDA3_B7D1_0000_D22A | UInt64(short) << 16)
    }

    /// Primary service `6D5E850D-C8C0-4EA9-BDA3-B7D10001D22A`.
    public static let service = make(0x0001)
    /// punchResponse (read, notify): one ``PunchResponse`` per step.
    public static let response = make(0x0002)
    /// punchTimeSequence (read, write): ``PunchTimeSequence``.
    public static let timeSequence = make(0x0003)
    /// punchSequence (read, write): ``PunchSequence``.
    public static let sequence = make(0x0004)
    /// punchControl (write, notify): ``PunchControlCommand`` written, ``PunchControlStatus`` notified.
    public static let control = make(0x0005)

    /// Default advertised-name prefix (`Reflex-XXXX`).
    public static let namePrefix = "Reflex"
    /// ATT error code the device returns when a written sequence is invalid (application error).
    public static let invalidSequenceATTError: UInt8 = 0x80
}
