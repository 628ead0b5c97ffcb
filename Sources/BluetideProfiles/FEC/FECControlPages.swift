import BluetideBase

/// Page 48 (0x30) Basic Resistance, app → trainer: a percentage of the maximum, not newtons.
public struct FECBasicResistance: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    public static let pageNumber: UInt8 = 48
    /// Total resistance, 0.5 % units (0-200 = 0-100 %).
    public var totalResistanceHalfPercent: UInt8

    public init(totalResistanceHalfPercent: UInt8) { self.totalResistanceHalfPercent = totalResistanceHalfPercent }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let name = "FE-C page 48"
        try readFECPageNumber(Self.pageNumber, name, from: &reader)
        try reader.skip(6, "\(name).reserved")
        totalResistanceHalfPercent = try reader.readUInt8("\(name).total resistance")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.pageNumber)
        writer.pad(6, with: 0xFF)
        writer.write(totalResistanceHalfPercent)
    }

    /// Resistance in percent of the maximum.
    public var resistancePercent: Double { Double(totalResistanceHalfPercent) / 2 }
    public var description: String { "page 48 basic resistance \(trainerFormat(resistancePercent, decimals: 1)) %" }
}

/// Page 49 (0x31) Target Power (ERG), app → trainer.
public struct FECTargetPower: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    public static let pageNumber: UInt8 = 49
    /// Target power, 0.25 W units (0-4000 W).
    public var targetPowerQuarterWatts: UInt16

    public init(targetPowerQuarterWatts: UInt16) { self.targetPowerQuarterWatts = targetPowerQuarterWatts }
    /// A target of `watts` (rounded to 0.25 W, clamped to 0-16383.75 W).
    public init(watts: Double) {
        let quarters = (watts * 4).rounded()
        targetPowerQuarterWatts = quarters.isNaN ? 0 : UInt16(max(0, min(65535, quarters)))
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let name = "FE-C page 49"
        try readFECPageNumber(Self.pageNumber, name, from: &reader)
        try reader.skip(5, "\(name).reserved")
        targetPowerQuarterWatts = try reader.read(UInt16.self, "\(name).target power")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.pageNumber)
        writer.pad(5, with: 0xFF)
        writer.write(targetPowerQuarterWatts)
    }

    /// Target power in W.
    public var watts: Double { Double(targetPowerQuarterWatts) / 4 }
    public var description: String { "page 49 target power \(trainerFormat(watts, decimals: 2)) W" }
}

/// Page 50 (0x32) Wind Resistance, app → trainer (simulation mode).
public struct FECWindResistance: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    public static let pageNumber: UInt8 = 50
    /// Wind resistance coefficient, 0.01 kg/m units; 0xFF = default 0.51.
    public var windResistanceHundredthKgPerMeter: UInt8
    /// Wind speed, km/h + 127 (0-254 = −127 to +127 km/h); 0xFF = default 0.
    public var windSpeedOffsetKmh: UInt8
    /// Drafting factor, 0.01 units (0-100 = 0.00-1.00); 0xFF = default 1.0.
    public var draftingFactorHundredths: UInt8

    public init(
        windResistanceHundredthKgPerMeter: UInt8 = 0xFF, windSpeedOffsetKmh: UInt8 = 0xFF, draftingFactorHundredths: UInt8 = 0xFF
    ) {
        self.windResistanceHundredthKgPerMeter = windResistanceHundredthKgPerMeter
        self.windSpeedOffsetKmh = windSpeedOffsetKmh
        self.draftingFactorHundredths = draftingFactorHundredths
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let name = "FE-C page 50"
        try readFECPageNumber(Self.pageNumber, name, from: &reader)
        try reader.skip(4, "\(name).reserved")
        windResistanceHundredthKgPerMeter = try reader.readUInt8("\(name).wind resistance coefficient")
        windSpeedOffsetKmh = try reader.readUInt8("\(name).wind speed")
        draftingFactorHundredths = try reader.readUInt8("\(name).drafting factor")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.pageNumber)
        writer.pad(4, with: 0xFF)
        writer.write(windResistanceHundredthKgPerMeter)
        writer.write(windSpeedOffsetKmh)
        writer.write(draftingFactorHundredths)
    }

    /// Wind resistance coefficient in kg/m (0xFF gives the default 0.51).
    public var windResistanceKgPerMeter: Double {
        windResistanceHundredthKgPerMeter == 0xFF ? 0.51 : Double(windResistanceHundredthKgPerMeter) / 100
    }
    /// Wind speed in km/h, positive is a headwind (0xFF gives the default 0).
    public var windSpeedKmh: Int { windSpeedOffsetKmh == 0xFF ? 0 : Int(windSpeedOffsetKmh) - 127 }
    /// Drafting factor (0xFF gives the default 1.0).
    public var draftingFactor: Double { draftingFactorHundredths == 0xFF ? 1.0 : Double(draftingFactorHundredths) / 100 }

    public var description: String {
        "page 50 wind resistance: Cw \(trainerFormat(windResistanceKgPerMeter, decimals: 2)) kg/m, "
            + "wind \(windSpeedKmh) km/h, drafting \(trainerFormat(draftingFactor, decimals: 2))"
    }
}

/// Page 51 (0x33) Track Resistance (simulation grade), app → trainer.
public struct FECTrackResistance: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    public static let pageNumber: UInt8 = 51
    /// Grade as (grade % + 200) / 0.01, uint16 (20000 = 0 %); 0xFFFF = default 0 %.
    public var gradeOffsetHundredthPercent: UInt16
    /// Coefficient of rolling resistance, 5×10⁻⁵ units; 0xFF = default 0.004.
    public var rollingResistance5e5: UInt8

    public init(gradeOffsetHundredthPercent: UInt16 = 0xFFFF, rollingResistance5e5: UInt8 = 0xFF) {
        self.gradeOffsetHundredthPercent = gradeOffsetHundredthPercent
        self.rollingResistance5e5 = rollingResistance5e5
    }
    /// A grade of `percent` (−200 to +455.34 %, rounded to 0.01 %) and the given Crr raw value.
    public init(gradePercent: Double, rollingResistance5e5: UInt8 = 0xFF) {
        let raw = ((gradePercent + 200) * 100).rounded()
        gradeOffsetHundredthPercent = raw.isNaN ? 20000 : UInt16(max(0, min(65534, raw)))
        self.rollingResistance5e5 = rollingResistance5e5
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let name = "FE-C page 51"
        try readFECPageNumber(Self.pageNumber, name, from: &reader)
        try reader.skip(4, "\(name).reserved")
        gradeOffsetHundredthPercent = try reader.read(UInt16.self, "\(name).grade")
        rollingResistance5e5 = try reader.readUInt8("\(name).rolling resistance coefficient")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.pageNumber)
        writer.pad(4, with: 0xFF)
        writer.write(gradeOffsetHundredthPercent)
        writer.write(rollingResistance5e5)
    }

    /// Grade in percent (0xFFFF gives the default 0 %).
    public var gradePercent: Double {
        gradeOffsetHundredthPercent == 0xFFFF ? 0 : Double(gradeOffsetHundredthPercent) / 100 - 200
    }
    /// Rolling resistance coefficient (0xFF gives the default 0.004).
    public var rollingResistanceCoefficient: Double {
        rollingResistance5e5 == 0xFF ? 0.004 : Double(rollingResistance5e5) * 5e-5
    }

    public var description: String {
        "page 51 track resistance: grade \(trainerFormat(gradePercent, decimals: 2)) %, "
            + "Crr \(trainerFormat(rollingResistanceCoefficient, decimals: 5))"
    }
}

/// Page 55 (0x37) User Configuration, app → trainer; needed before simulation mode.
public struct FECUserConfiguration: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    public static let pageNumber: UInt8 = 55
    /// User weight, 0.01 kg units; 0xFFFF = invalid.
    public var userWeightHundredthKg: UInt16
    /// Bicycle wheel diameter offset, mm (4 bits); 0xF = invalid.
    public var wheelDiameterOffsetMillimeters: UInt8
    /// Bicycle weight, 0.05 kg units (12 bits); 0xFFF = invalid.
    public var bicycleWeightTwentiethKg: UInt16
    /// Bicycle wheel diameter, 0.01 m units; 0xFF = invalid.
    public var wheelDiameterCentimeters: UInt8
    /// Gear ratio (front / rear teeth), 0.03 units; 0 = invalid.
    public var gearRatioThreeHundredths: UInt8

    public init(
        userWeightHundredthKg: UInt16, wheelDiameterOffsetMillimeters: UInt8 = 0xF, bicycleWeightTwentiethKg: UInt16,
        wheelDiameterCentimeters: UInt8, gearRatioThreeHundredths: UInt8 = 0
    ) {
        self.userWeightHundredthKg = userWeightHundredthKg
        self.wheelDiameterOffsetMillimeters = wheelDiameterOffsetMillimeters & 0x0F
        self.bicycleWeightTwentiethKg = bicycleWeightTwentiethKg & 0x0FFF
        self.wheelDiameterCentimeters = wheelDiameterCentimeters
        self.gearRatioThreeHundredths = gearRatioThreeHundredths
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let name = "FE-C page 55"
        try readFECPageNumber(Self.pageNumber, name, from: &reader)
        userWeightHundredthKg = try reader.read(UInt16.self, "\(name).user weight")
        try reader.skip(1, "\(name).reserved")
        let mixed = try reader.readUInt8("\(name).wheel diameter offset and bicycle weight")
        let weightHigh = try reader.readUInt8("\(name).bicycle weight")
        wheelDiameterOffsetMillimeters = mixed & 0x0F
        bicycleWeightTwentiethKg = UInt16(mixed >> 4) | UInt16(weightHigh) << 4
        wheelDiameterCentimeters = try reader.readUInt8("\(name).wheel diameter")
        gearRatioThreeHundredths = try reader.readUInt8("\(name).gear ratio")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.pageNumber)
        writer.write(userWeightHundredthKg)
        writer.write(UInt8(0xFF))
        writer.write((wheelDiameterOffsetMillimeters & 0x0F) | UInt8(truncatingIfNeeded: bicycleWeightTwentiethKg & 0x0F) << 4)
        writer.write(UInt8(truncatingIfNeeded: bicycleWeightTwentiethKg >> 4))
        writer.write(wheelDiameterCentimeters)
        writer.write(gearRatioThreeHundredths)
    }

    /// User weight in kg, nil when invalid.
    public var userWeightKg: Double? { userWeightHundredthKg == 0xFFFF ? nil : Double(userWeightHundredthKg) / 100 }
    /// Bicycle weight in kg, nil when invalid.
    public var bicycleWeightKg: Double? {
        bicycleWeightTwentiethKg == 0xFFF ? nil : Double(bicycleWeightTwentiethKg) * 0.05
    }
    /// Wheel diameter in metres, nil when invalid.
    public var wheelDiameterMeters: Double? {
        wheelDiameterCentimeters == 0xFF ? nil : Double(wheelDiameterCentimeters) / 100
    }
    /// Gear ratio, nil when invalid.
    public var gearRatio: Double? { gearRatioThreeHundredths == 0 ? nil : Double(gearRatioThreeHundredths) * 0.03 }

    public var description: String {
        func show(_ v: Double?, _ decimals: Int, _ unit: String) -> String {
            v.map { "\(trainerFormat($0, decimals: decimals))\(unit)" } ?? "invalid"
        }
        return "page 55 user configuration: user \(show(userWeightKg, 2, " kg")), bike \(show(bicycleWeightKg, 2, " kg")), "
            + "wheel \(show(wheelDiameterMeters, 2, " m"))"
            + (wheelDiameterOffsetMillimeters == 0xF ? "" : " + \(wheelDiameterOffsetMillimeters) mm")
            + ", gear ratio \(show(gearRatio, 2, ""))"
    }
}

/// Page 70 (0x46) Request Data Page, app → trainer: asks the trainer to send a page (54, 55, …).
public struct FECRequestDataPage: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    public static let pageNumber: UInt8 = 70
    /// Slave serial number (0xFFFF when unused).
    public var slaveSerialNumber: UInt16
    /// Descriptor byte 1 (0xFF when unused).
    public var descriptor1: UInt8
    /// Descriptor byte 2 (0xFF when unused).
    public var descriptor2: UInt8
    /// Requested transmission response: bits 0-6 number of times to send, bit 7 (0x80) "send
    /// until acknowledged".
    public var requestedTransmissionResponse: UInt8
    /// The page wanted.
    public var requestedPageNumber: UInt8
    /// Command type: 0x01 = request data page.
    public var commandType: UInt8

    public init(
        requestedPageNumber: UInt8, requestedTransmissionResponse: UInt8 = 0x80, slaveSerialNumber: UInt16 = 0xFFFF,
        descriptor1: UInt8 = 0xFF, descriptor2: UInt8 = 0xFF, commandType: UInt8 = 0x01
    ) {
        self.slaveSerialNumber = slaveSerialNumber
        self.descriptor1 = descriptor1
        self.descriptor2 = descriptor2
        self.requestedTransmissionResponse = requestedTransmissionResponse
        self.requestedPageNumber = requestedPageNumber
        self.commandType = commandType
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let name = "FE-C page 70"
        try readFECPageNumber(Self.pageNumber, name, from: &reader)
        slaveSerialNumber = try reader.read(UInt16.self, "\(name).slave serial number")
        descriptor1 = try reader.readUInt8("\(name).descriptor 1")
        descriptor2 = try reader.readUInt8("\(name).descriptor 2")
        requestedTransmissionResponse = try reader.readUInt8("\(name).requested transmission response")
        requestedPageNumber = try reader.readUInt8("\(name).requested page number")
        commandType = try reader.readUInt8("\(name).command type")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.pageNumber)
        writer.write(slaveSerialNumber)
        writer.write(descriptor1)
        writer.write(descriptor2)
        writer.write(requestedTransmissionResponse)
        writer.write(requestedPageNumber)
        writer.write(commandType)
    }

    public var description: String {
        let times = requestedTransmissionResponse & 0x80 != 0
            ? "until acknowledged" : "\(requestedTransmissionResponse & 0x7F) times"
        return "page 70 request page \(requestedPageNumber) (\(times))"
    }
}
