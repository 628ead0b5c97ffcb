import BluetideBase

/// One 8-byte ANT+ FE-C data page (byte 0 = page number), typed when Bluetide knows it.
///
/// Pages this type does not model (calibration pages 1/2, Tacx page 252, …) are kept as
/// ``raw(_:)`` with all eight bytes, so nothing is lost and they re-encode unchanged.
public enum FECPage: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// 16: elapsed time, distance, speed, heart rate, FE state.
    case generalData(FECGeneralData)
    /// 17: cycle length, incline, resistance level.
    case generalSettings(FECGeneralSettings)
    /// 25: cadence, accumulated and instantaneous power, trainer status.
    case trainerData(FECTrainerData)
    /// 26: wheel ticks, wheel period, accumulated torque.
    case trainerTorqueData(FECTrainerTorqueData)
    /// 48: basic resistance command.
    case basicResistance(FECBasicResistance)
    /// 49: target power (ERG) command.
    case targetPower(FECTargetPower)
    /// 50: wind resistance command.
    case windResistance(FECWindResistance)
    /// 51: track resistance (grade) command.
    case trackResistance(FECTrackResistance)
    /// 54: FE capabilities.
    case capabilities(FECCapabilities)
    /// 55: user configuration.
    case userConfiguration(FECUserConfiguration)
    /// 70: request data page.
    case requestDataPage(FECRequestDataPage)
    /// 71: command status.
    case commandStatus(FECCommandStatus)
    /// 80: manufacturer's information.
    case manufacturerInfo(FECManufacturerInfo)
    /// 81: product information.
    case productInfo(FECProductInfo)
    /// Any other page: its 8 bytes, page number first.
    case raw([UInt8])

    /// The page number (byte 0).
    public var pageNumber: UInt8 {
        switch self {
        case .generalData: FECGeneralData.pageNumber
        case .generalSettings: FECGeneralSettings.pageNumber
        case .trainerData: FECTrainerData.pageNumber
        case .trainerTorqueData: FECTrainerTorqueData.pageNumber
        case .basicResistance: FECBasicResistance.pageNumber
        case .targetPower: FECTargetPower.pageNumber
        case .windResistance: FECWindResistance.pageNumber
        case .trackResistance: FECTrackResistance.pageNumber
        case .capabilities: FECCapabilities.pageNumber
        case .userConfiguration: FECUserConfiguration.pageNumber
        case .requestDataPage: FECRequestDataPage.pageNumber
        case .commandStatus: FECCommandStatus.pageNumber
        case .manufacturerInfo: FECManufacturerInfo.pageNumber
        case .productInfo: FECProductInfo.pageNumber
        case .raw(let bytes): bytes.first ?? 0xFF
        }
    }

    /// Reads one page: 8 bytes, dispatched on byte 0.
    public init(from reader: inout ByteReader) throws(DecodingError) {
        try reader.require(1, "FE-C page.page number")
        switch reader.peek() {
        case FECGeneralData.pageNumber: self = .generalData(try FECGeneralData(from: &reader))
        case FECGeneralSettings.pageNumber: self = .generalSettings(try FECGeneralSettings(from: &reader))
        case FECTrainerData.pageNumber: self = .trainerData(try FECTrainerData(from: &reader))
        case FECTrainerTorqueData.pageNumber: self = .trainerTorqueData(try FECTrainerTorqueData(from: &reader))
        case FECBasicResistance.pageNumber: self = .basicResistance(try FECBasicResistance(from: &reader))
        case FECTargetPower.pageNumber: self = .targetPower(try FECTargetPower(from: &reader))
        case FECWindResistance.pageNumber: self = .windResistance(try FECWindResistance(from: &reader))
        case FECTrackResistance.pageNumber: self = .trackResistance(try FECTrackResistance(from: &reader))
        case FECCapabilities.pageNumber: self = .capabilities(try FECCapabilities(from: &reader))
        case FECUserConfiguration.pageNumber: self = .userConfiguration(try FECUserConfiguration(from: &reader))
        case FECRequestDataPage.pageNumber: self = .requestDataPage(try FECRequestDataPage(from: &reader))
        case FECCommandStatus.pageNumber: self = .commandStatus(try FECCommandStatus(from: &reader))
        case FECManufacturerInfo.pageNumber: self = .manufacturerInfo(try FECManufacturerInfo(from: &reader))
        case FECProductInfo.pageNumber: self = .productInfo(try FECProductInfo(from: &reader))
        default: self = .raw(try reader.readBytes(8, "FE-C page.data"))
        }
    }

    /// Writes the page's 8 bytes (a raw page is padded with 0xFF or cut to 8 bytes).
    public func encode(to writer: inout ByteWriter) {
        switch self {
        case .generalData(let p): p.encode(to: &writer)
        case .generalSettings(let p): p.encode(to: &writer)
        case .trainerData(let p): p.encode(to: &writer)
        case .trainerTorqueData(let p): p.encode(to: &writer)
        case .basicResistance(let p): p.encode(to: &writer)
        case .targetPower(let p): p.encode(to: &writer)
        case .windResistance(let p): p.encode(to: &writer)
        case .trackResistance(let p): p.encode(to: &writer)
        case .capabilities(let p): p.encode(to: &writer)
        case .userConfiguration(let p): p.encode(to: &writer)
        case .requestDataPage(let p): p.encode(to: &writer)
        case .commandStatus(let p): p.encode(to: &writer)
        case .manufacturerInfo(let p): p.encode(to: &writer)
        case .productInfo(let p): p.encode(to: &writer)
        case .raw(let bytes):
            writer.write(bytes: bytes.prefix(8))
            writer.pad(8 - min(bytes.count, 8), with: 0xFF)
        }
    }

    /// JSON: `{"pageNumber": 16, "generalData": {…}}`; an undecoded page is `{"pageNumber": n, "raw": "10 19 …"}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: TrainerJSONKey.self)
        try c.encode(pageNumber, forKey: TrainerJSONKey("pageNumber"))
        switch self {
        case .generalData(let p): try c.encode(p, forKey: TrainerJSONKey("generalData"))
        case .generalSettings(let p): try c.encode(p, forKey: TrainerJSONKey("generalSettings"))
        case .trainerData(let p): try c.encode(p, forKey: TrainerJSONKey("trainerData"))
        case .trainerTorqueData(let p): try c.encode(p, forKey: TrainerJSONKey("trainerTorqueData"))
        case .basicResistance(let p): try c.encode(p, forKey: TrainerJSONKey("basicResistance"))
        case .targetPower(let p): try c.encode(p, forKey: TrainerJSONKey("targetPower"))
        case .windResistance(let p): try c.encode(p, forKey: TrainerJSONKey("windResistance"))
        case .trackResistance(let p): try c.encode(p, forKey: TrainerJSONKey("trackResistance"))
        case .capabilities(let p): try c.encode(p, forKey: TrainerJSONKey("capabilities"))
        case .userConfiguration(let p): try c.encode(p, forKey: TrainerJSONKey("userConfiguration"))
        case .requestDataPage(let p): try c.encode(p, forKey: TrainerJSONKey("requestDataPage"))
        case .commandStatus(let p): try c.encode(p, forKey: TrainerJSONKey("commandStatus"))
        case .manufacturerInfo(let p): try c.encode(p, forKey: TrainerJSONKey("manufacturerInfo"))
        case .productInfo(let p): try c.encode(p, forKey: TrainerJSONKey("productInfo"))
        case .raw(let bytes): try c.encode(bytes.spacedHex, forKey: TrainerJSONKey("raw"))
        }
    }

    public var description: String {
        switch self {
        case .generalData(let p): p.description
        case .generalSettings(let p): p.description
        case .trainerData(let p): p.description
        case .trainerTorqueData(let p): p.description
        case .basicResistance(let p): p.description
        case .targetPower(let p): p.description
        case .windResistance(let p): p.description
        case .trackResistance(let p): p.description
        case .capabilities(let p): p.description
        case .userConfiguration(let p): p.description
        case .requestDataPage(let p): p.description
        case .commandStatus(let p): p.description
        case .manufacturerInfo(let p): p.description
        case .productInfo(let p): p.description
        case .raw(let bytes): "page \(pageNumber) (not decoded): \(bytes.spacedHex)"
        }
    }
}
