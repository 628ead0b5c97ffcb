import BluetideBase

/// Page 54 (0x36) FE Capabilities, trainer → app (sent on request, page 70).
public struct FECCapabilities: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    public static let pageNumber: UInt8 = 54
    /// Maximum resistance, N; 0xFFFF = invalid.
    public var maximumResistanceNewtons: UInt16
    /// Control modes the trainer supports (byte 7).
    public var supportedModes: Modes

    /// Control modes (byte 7 bits 0-2).
    public struct Modes: TrainerNamedFlags {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let basicResistance = Self(rawValue: 1 << 0)
        public static let targetPower = Self(rawValue: 1 << 1)
        public static let simulation = Self(rawValue: 1 << 2)
        public static let bitNames: [Int: String] = [0: "basic resistance", 1: "target power", 2: "simulation"]
    }

    public init(maximumResistanceNewtons: UInt16, supportedModes: Modes) {
        self.maximumResistanceNewtons = maximumResistanceNewtons
        self.supportedModes = supportedModes
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let name = "FE-C page 54"
        try readFECPageNumber(Self.pageNumber, name, from: &reader)
        try reader.skip(4, "\(name).reserved")
        maximumResistanceNewtons = try reader.read(UInt16.self, "\(name).maximum resistance")
        supportedModes = Modes(rawValue: try reader.readUInt8("\(name).capabilities"))
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.pageNumber)
        writer.pad(4, with: 0xFF)
        writer.write(maximumResistanceNewtons)
        writer.write(supportedModes.rawValue)
    }

    public var description: String {
        let resistance = maximumResistanceNewtons == 0xFFFF ? "invalid" : "\(maximumResistanceNewtons) N"
        return "page 54 capabilities: maximum resistance \(resistance), modes \(supportedModes)"
    }
}

/// Page 71 (0x47) Command Status, trainer → app: the outcome of the last control page.
public struct FECCommandStatus: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    public static let pageNumber: UInt8 = 71
    /// Page number of the last command received (0xFF when none).
    public var lastCommandPage: UInt8
    /// Sequence number of that command.
    public var sequenceNumber: UInt8
    /// Outcome.
    public var status: Status
    /// Bytes 4-7: the command's data bytes echoed back.
    public var data: [UInt8]

    /// Command outcome codes.
    public struct Status: TrainerNamedCode {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let pass = Self(rawValue: 0)
        public static let fail = Self(rawValue: 1)
        public static let notSupported = Self(rawValue: 2)
        public static let rejected = Self(rawValue: 3)
        public static let pending = Self(rawValue: 4)
        public static let uninitialized = Self(rawValue: 255)
        public static let names: [UInt8: String] = [
            0: "pass", 1: "fail", 2: "not supported", 3: "rejected", 4: "pending", 255: "uninitialised",
        ]
    }

    /// `data` must be 4 bytes; shorter is padded with 0xFF, longer is cut on encode.
    public init(lastCommandPage: UInt8, sequenceNumber: UInt8, status: Status, data: [UInt8]) {
        self.lastCommandPage = lastCommandPage
        self.sequenceNumber = sequenceNumber
        self.status = status
        self.data = data
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let name = "FE-C page 71"
        try readFECPageNumber(Self.pageNumber, name, from: &reader)
        lastCommandPage = try reader.readUInt8("\(name).last command page")
        sequenceNumber = try reader.readUInt8("\(name).sequence number")
        status = Status(rawValue: try reader.readUInt8("\(name).command status"))
        data = try reader.readBytes(4, "\(name).data")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.pageNumber)
        writer.write(lastCommandPage)
        writer.write(sequenceNumber)
        writer.write(status.rawValue)
        writer.write(bytes: data.prefix(4))
        writer.pad(4 - min(data.count, 4), with: 0xFF)
    }

    public var description: String {
        "page 71 command status: page \(lastCommandPage), sequence \(sequenceNumber), \(status), data \(data.spacedHex)"
    }
}

/// Page 80 (0x50) Manufacturer's Information, trainer → app.
public struct FECManufacturerInfo: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    public static let pageNumber: UInt8 = 80
    /// Hardware revision.
    public var hardwareRevision: UInt8
    /// ANT+ manufacturer ID (e.g. 89 = Tacx).
    public var manufacturerID: UInt16
    /// Model number.
    public var modelNumber: UInt16

    public init(hardwareRevision: UInt8, manufacturerID: UInt16, modelNumber: UInt16) {
        self.hardwareRevision = hardwareRevision
        self.manufacturerID = manufacturerID
        self.modelNumber = modelNumber
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let name = "FE-C page 80"
        try readFECPageNumber(Self.pageNumber, name, from: &reader)
        try reader.skip(2, "\(name).reserved")
        hardwareRevision = try reader.readUInt8("\(name).hardware revision")
        manufacturerID = try reader.read(UInt16.self, "\(name).manufacturer ID")
        modelNumber = try reader.read(UInt16.self, "\(name).model number")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.pageNumber)
        writer.pad(2, with: 0xFF)
        writer.write(hardwareRevision)
        writer.write(manufacturerID)
        writer.write(modelNumber)
    }

    public var description: String {
        "page 80 manufacturer: ID \(manufacturerID), model \(modelNumber), hardware revision \(hardwareRevision)"
    }
}

/// Page 81 (0x51) Product Information, trainer → app.
public struct FECProductInfo: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    public static let pageNumber: UInt8 = 81
    /// Supplemental software revision; 0xFF = not used.
    public var softwareRevisionSupplemental: UInt8
    /// Main software revision.
    public var softwareRevisionMain: UInt8
    /// Serial number; 0xFFFFFFFF = none.
    public var serialNumber: UInt32

    public init(softwareRevisionSupplemental: UInt8 = 0xFF, softwareRevisionMain: UInt8, serialNumber: UInt32) {
        self.softwareRevisionSupplemental = softwareRevisionSupplemental
        self.softwareRevisionMain = softwareRevisionMain
        self.serialNumber = serialNumber
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let name = "FE-C page 81"
        try readFECPageNumber(Self.pageNumber, name, from: &reader)
        try reader.skip(1, "\(name).reserved")
        softwareRevisionSupplemental = try reader.readUInt8("\(name).software revision supplemental")
        softwareRevisionMain = try reader.readUInt8("\(name).software revision main")
        serialNumber = try reader.read(UInt32.self, "\(name).serial number")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.pageNumber)
        writer.write(UInt8(0xFF))
        writer.write(softwareRevisionSupplemental)
        writer.write(softwareRevisionMain)
        writer.write(serialNumber)
    }

    public var description: String {
        let supplement = softwareRevisionSupplemental == 0xFF ? "" : ".\(softwareRevisionSupplemental)"
        return "page 81 product: software \(softwareRevisionMain)\(supplement), serial \(serialNumber)"
    }
}
