import BluetideBase

/// FTMS advertising Service Data (for service UUID 0x1826): flags uint8 + machine type uint16.
///
/// `01 20 00` = an available indoor bike. Lets a scanner pick trainers before connecting.
public struct FitnessMachineServiceData: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// Flags bit 0: the machine is available for a connection.
    public var machineAvailable: Bool
    /// Kinds of machine this device is.
    public var machineTypes: MachineTypes

    /// Machine type bits (uint16).
    public struct MachineTypes: TrainerNamedFlags {
        public var rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        public static let treadmill = Self(rawValue: 1 << 0)
        public static let crossTrainer = Self(rawValue: 1 << 1)
        public static let stepClimber = Self(rawValue: 1 << 2)
        public static let stairClimber = Self(rawValue: 1 << 3)
        public static let rower = Self(rawValue: 1 << 4)
        public static let indoorBike = Self(rawValue: 1 << 5)
        public static let bitNames: [Int: String] = [
            0: "treadmill", 1: "cross trainer", 2: "step climber", 3: "stair climber", 4: "rower", 5: "indoor bike",
        ]
    }

    public init(machineAvailable: Bool, machineTypes: MachineTypes) {
        self.machineAvailable = machineAvailable
        self.machineTypes = machineTypes
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        machineAvailable = try reader.readUInt8("Fitness Machine Service Data.flags") & 0x01 != 0
        machineTypes = MachineTypes(rawValue: try reader.read(UInt16.self, "Fitness Machine Service Data.machine type"))
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(UInt8(machineAvailable ? 1 : 0))
        writer.write(machineTypes.rawValue)
    }

    public var description: String { "\(machineTypes)\(machineAvailable ? ", available" : ", not available")" }
}
