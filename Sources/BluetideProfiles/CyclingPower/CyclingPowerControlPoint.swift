import BluetideBase

/// A request written to the Cycling Power Control Point (0x2A66): opcode (uint8) + parameter.
/// Indications must be enabled first; the answer is a ``CyclingPowerControlPointResponse``.
public enum CyclingPowerControlPointRequest: Equatable, Hashable, Sendable, Encodable, GATTCodable {
    /// 0x01: set cumulative wheel revolutions (uint32).
    case setCumulativeValue(UInt32)
    /// 0x02: update the sensor location.
    case updateSensorLocation(SensorLocation)
    /// 0x03: request supported sensor locations.
    case requestSupportedSensorLocations
    /// 0x04: set crank length, 1/2 mm (uint16).
    case setCrankLengthHalfMillimetres(UInt16)
    /// 0x05: request crank length.
    case requestCrankLength
    /// 0x06: set chain length, mm (uint16).
    case setChainLengthMillimetres(UInt16)
    /// 0x07: request chain length.
    case requestChainLength
    /// 0x08: set chain weight, g (uint16).
    case setChainWeightGrams(UInt16)
    /// 0x09: request chain weight.
    case requestChainWeight
    /// 0x0A: set span length, mm (uint16).
    case setSpanLengthMillimetres(UInt16)
    /// 0x0B: request span length.
    case requestSpanLength
    /// 0x0C: start offset compensation.
    case startOffsetCompensation
    /// 0x0D: mask Cycling Power Measurement content (uint16 mask; a set bit turns a field off).
    case maskMeasurementContent(UInt16)
    /// 0x0E: request sampling rate.
    case requestSamplingRate
    /// 0x0F: request factory calibration date.
    case requestFactoryCalibrationDate
    /// 0x10: start enhanced offset compensation.
    case startEnhancedOffsetCompensation
    /// Any other opcode with its parameter bytes (0x20 is the response code, never a request).
    case other(opCode: UInt8, parameter: [UInt8])

    /// The opcode byte.
    public var opCode: UInt8 {
        switch self {
        case .setCumulativeValue: return 0x01
        case .updateSensorLocation: return 0x02
        case .requestSupportedSensorLocations: return 0x03
        case .setCrankLengthHalfMillimetres: return 0x04
        case .requestCrankLength: return 0x05
        case .setChainLengthMillimetres: return 0x06
        case .requestChainLength: return 0x07
        case .setChainWeightGrams: return 0x08
        case .requestChainWeight: return 0x09
        case .setSpanLengthMillimetres: return 0x0A
        case .requestSpanLength: return 0x0B
        case .startOffsetCompensation: return 0x0C
        case .maskMeasurementContent: return 0x0D
        case .requestSamplingRate: return 0x0E
        case .requestFactoryCalibrationDate: return 0x0F
        case .startEnhancedOffsetCompensation: return 0x10
        case let .other(opCode, _): return opCode
        }
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        do throws(DecodingError) {
            let opCode = try reader.readUInt8("op code")
            switch opCode {
            case 0x01: self = .setCumulativeValue(try reader.read(UInt32.self, "cumulative value"))
            case 0x02: self = .updateSensorLocation(SensorLocation(rawValue: try reader.readUInt8("sensor location")))
            case 0x03: self = .requestSupportedSensorLocations
            case 0x04: self = .setCrankLengthHalfMillimetres(try reader.read(UInt16.self, "crank length"))
            case 0x05: self = .requestCrankLength
            case 0x06: self = .setChainLengthMillimetres(try reader.read(UInt16.self, "chain length"))
            case 0x07: self = .requestChainLength
            case 0x08: self = .setChainWeightGrams(try reader.read(UInt16.self, "chain weight"))
            case 0x09: self = .requestChainWeight
            case 0x0A: self = .setSpanLengthMillimetres(try reader.read(UInt16.self, "span length"))
            case 0x0B: self = .requestSpanLength
            case 0x0C: self = .startOffsetCompensation
            case 0x0D: self = .maskMeasurementContent(try reader.read(UInt16.self, "content mask"))
            case 0x0E: self = .requestSamplingRate
            case 0x0F: self = .requestFactoryCalibrationDate
            case 0x10: self = .startEnhancedOffsetCompensation
            default: self = .other(opCode: opCode, parameter: reader.readRemaining())
            }
        } catch {
            throw error.within("Cycling Power Control Point")
        }
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(opCode)
        switch self {
        case let .setCumulativeValue(value): writer.write(value)
        case let .updateSensorLocation(location): writer.write(location.rawValue)
        case let .setCrankLengthHalfMillimetres(value), let .setChainLengthMillimetres(value),
            let .setChainWeightGrams(value), let .setSpanLengthMillimetres(value), let .maskMeasurementContent(value):
            writer.write(value)
        case let .other(_, parameter): writer.write(bytes: parameter)
        default: break
        }
    }

    /// One line, e.g. `set crank length 172.5 mm`.
    public var summary: String {
        switch self {
        case let .setCumulativeValue(value): return "set cumulative value \(value)"
        case let .updateSensorLocation(location): return "update sensor location: \(location)"
        case .requestSupportedSensorLocations: return "request supported sensor locations"
        case let .setCrankLengthHalfMillimetres(value): return "set crank length \(FitnessFormat.fixed(Double(value) / 2, 1)) mm"
        case .requestCrankLength: return "request crank length"
        case let .setChainLengthMillimetres(value): return "set chain length \(value) mm"
        case .requestChainLength: return "request chain length"
        case let .setChainWeightGrams(value): return "set chain weight \(value) g"
        case .requestChainWeight: return "request chain weight"
        case let .setSpanLengthMillimetres(value): return "set span length \(value) mm"
        case .requestSpanLength: return "request span length"
        case .startOffsetCompensation: return "start offset compensation"
        case let .maskMeasurementContent(mask): return "mask measurement content 0x" + [UInt8(mask >> 8), UInt8(mask & 0xFF)].hexString.uppercased()
        case .requestSamplingRate: return "request sampling rate"
        case .requestFactoryCalibrationDate: return "request factory calibration date"
        case .startEnhancedOffsetCompensation: return "start enhanced offset compensation"
        case let .other(opCode, parameter):
            return "op code \(FitnessFormat.hex(opCode))" + (parameter.isEmpty ? "" : " \(parameter.spacedHex)")
        }
    }

    private enum CodingKeys: String, CodingKey { case opCode, request, parameterHex }

    /// JSON: `{"opCode": 4, "request": "set crank length 172.5 mm", "parameterHex": "5901"}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(opCode, forKey: .opCode)
        try c.encode(summary, forKey: .request)
        try c.encode(Array(bytes.dropFirst()).hexString, forKey: .parameterHex)
    }
}

/// The indicated answer on the Cycling Power Control Point: `20` + request opcode + result +
/// optional parameter (e.g. the crank length, the supported locations).
///
/// A response with only one byte after the response code is read as the result alone
/// (``requestOpCode`` nil) rather than rejected: some trainers answer that way.
public struct CyclingPowerControlPointResponse: Equatable, Hashable, Sendable, Encodable, GATTCodable {
    /// The response code that starts every response.
    public static let responseCode: UInt8 = 0x20

    /// Opcode of the request answered; nil when the device sent only a result byte.
    public var requestOpCode: UInt8?
    /// Outcome of the request.
    public var result: CyclingControlPointResult
    /// Response parameter bytes as sent (meaning depends on the request).
    public var parameter: [UInt8]

    public init(requestOpCode: UInt8?, result: CyclingControlPointResult, parameter: [UInt8] = []) {
        self.requestOpCode = requestOpCode
        self.result = result
        self.parameter = parameter
    }

    /// Supported sensor locations, for a successful answer to 0x03; else empty.
    public var supportedSensorLocations: [SensorLocation] {
        requestOpCode == 0x03 && result == .success ? parameter.map(SensorLocation.init(rawValue:)) : []
    }

    /// The parameter as a uint16 (crank/chain/span length, chain weight), when it is 2+ bytes.
    public var parameterUInt16: UInt16? {
        parameter.count >= 2 ? UInt16(parameter[0]) | UInt16(parameter[1]) << 8 : nil
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        do throws(DecodingError) {
            let code = try reader.readUInt8("response code")
            guard code == Self.responseCode else {
                throw DecodingError.invalid("response code", expected: "0x20", found: FitnessFormat.hex(code), at: 0)
            }
            let first = try reader.readUInt8("request op code")
            if reader.isAtEnd {
                requestOpCode = nil
                result = CyclingControlPointResult(rawValue: first)
                parameter = []
            } else {
                requestOpCode = first
                result = CyclingControlPointResult(rawValue: try reader.readUInt8("result"))
                parameter = reader.readRemaining()
            }
        } catch {
            throw error.within("Cycling Power Control Point response")
        }
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.responseCode)
        if let requestOpCode { writer.write(requestOpCode) }
        writer.write(result.rawValue)
        writer.write(bytes: parameter)
    }

    /// One line, e.g. `response to 0x05: success, parameter 59 01`.
    public var summary: String {
        var text = "response to " + (requestOpCode.map(FitnessFormat.hex) ?? "unknown request") + ": \(result)"
        let locations = supportedSensorLocations
        if !locations.isEmpty {
            text += ", locations " + locations.map(\.description).joined(separator: ", ")
        } else if !parameter.isEmpty {
            text += ", parameter \(parameter.spacedHex)"
        }
        return text
    }

    private enum CodingKeys: String, CodingKey { case requestOpCode, result, parameterHex, supportedSensorLocations }

    /// JSON: request opcode, result, parameter hex and decoded locations.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(requestOpCode, forKey: .requestOpCode)
        try c.encode(result, forKey: .result)
        try c.encode(parameter.hexString, forKey: .parameterHex)
        let locations = supportedSensorLocations
        if !locations.isEmpty { try c.encode(locations, forKey: .supportedSensorLocations) }
    }
}


/// Anything seen on the Cycling Power Control Point: a request (client → meter) or a response
/// (meter → client, first byte 0x20).
public typealias CyclingPowerControlPointMessage =
    ControlPointMessage<CyclingPowerControlPointRequest, CyclingPowerControlPointResponse>

extension CyclingPowerControlPointResponse: ControlPointResponse {}
extension CyclingPowerControlPointRequest: ControlPointRequest {}
