import BluetideBase

/// A request written to the SC Control Point (0x2A55): opcode (uint8) + parameter.
/// The client must enable indications first; the answer is an ``SCControlPointResponse``.
public enum SCControlPointRequest: Equatable, Sendable, Encodable, GATTCodable {
    /// 0x01: set the cumulative wheel revolutions (uint32). The sensor's counter then jumps.
    case setCumulativeValue(UInt32)
    /// 0x02: start sensor calibration.
    case startSensorCalibration
    /// 0x03: update the sensor location.
    case updateSensorLocation(SensorLocation)
    /// 0x04: request the supported sensor locations (listed in the response).
    case requestSupportedSensorLocations
    /// Any other opcode with its parameter bytes (0x10 is the response code, never a request).
    case other(opCode: UInt8, parameter: [UInt8])

    /// The opcode byte.
    public var opCode: UInt8 {
        switch self {
        case .setCumulativeValue: return 0x01
        case .startSensorCalibration: return 0x02
        case .updateSensorLocation: return 0x03
        case .requestSupportedSensorLocations: return 0x04
        case let .other(opCode, _): return opCode
        }
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        do throws(DecodingError) {
            let opCode = try reader.readUInt8("op code")
            switch opCode {
            case 0x01: self = .setCumulativeValue(try reader.read(UInt32.self, "cumulative value"))
            case 0x02: self = .startSensorCalibration
            case 0x03: self = .updateSensorLocation(SensorLocation(rawValue: try reader.readUInt8("sensor location")))
            case 0x04: self = .requestSupportedSensorLocations
            default: self = .other(opCode: opCode, parameter: reader.readRemaining())
            }
        } catch {
            throw error.within("SC Control Point")
        }
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(opCode)
        switch self {
        case let .setCumulativeValue(value): writer.write(value)
        case let .updateSensorLocation(location): writer.write(location.rawValue)
        case let .other(_, parameter): writer.write(bytes: parameter)
        case .startSensorCalibration, .requestSupportedSensorLocations: break
        }
    }

    /// One line, e.g. `set cumulative value 0`.
    public var summary: String {
        switch self {
        case let .setCumulativeValue(value): return "set cumulative value \(value)"
        case .startSensorCalibration: return "start sensor calibration"
        case let .updateSensorLocation(location): return "update sensor location: \(location)"
        case .requestSupportedSensorLocations: return "request supported sensor locations"
        case let .other(opCode, parameter):
            return "op code \(FitnessFormat.hex(opCode))" + (parameter.isEmpty ? "" : " \(parameter.spacedHex)")
        }
    }

    private enum CodingKeys: String, CodingKey { case request, opCode, cumulativeWheelRevolutions, sensorLocation, parameterHex }

    /// JSON: `{"request": "setCumulativeValue", "opCode": 1, "cumulativeWheelRevolutions": 0}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(opCode, forKey: .opCode)
        switch self {
        case let .setCumulativeValue(value):
            try c.encode("setCumulativeValue", forKey: .request)
            try c.encode(value, forKey: .cumulativeWheelRevolutions)
        case .startSensorCalibration: try c.encode("startSensorCalibration", forKey: .request)
        case let .updateSensorLocation(location):
            try c.encode("updateSensorLocation", forKey: .request)
            try c.encode(location, forKey: .sensorLocation)
        case .requestSupportedSensorLocations: try c.encode("requestSupportedSensorLocations", forKey: .request)
        case let .other(_, parameter):
            try c.encode("other", forKey: .request)
            try c.encode(parameter.hexString, forKey: .parameterHex)
        }
    }
}

/// The indicated answer on the SC Control Point: `10` + request opcode + result, plus the list
/// of supported locations after a successful 0x04 request.
///
/// Some sensors (a Kickr Core, pycycling #52) answer an unsupported request with only the
/// response code and one byte. That byte is taken as the result and ``requestOpCode`` is nil.
public struct SCControlPointResponse: Equatable, Sendable, Encodable, GATTCodable {
    /// The response code that starts every response.
    public static let responseCode: UInt8 = 0x10

    /// Opcode of the request answered; nil when the sensor sent only a result byte.
    public var requestOpCode: UInt8?
    /// Outcome of the request.
    public var result: CyclingControlPointResult
    /// Supported sensor locations (answer to a successful 0x04 request), else empty.
    public var supportedSensorLocations: [SensorLocation]
    /// Any other bytes after the result (for requests other than 0x04).
    public var parameter: [UInt8]

    public init(
        requestOpCode: UInt8?, result: CyclingControlPointResult,
        supportedSensorLocations: [SensorLocation] = [], parameter: [UInt8] = []
    ) {
        self.requestOpCode = requestOpCode
        self.result = result
        self.supportedSensorLocations = supportedSensorLocations
        self.parameter = parameter
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        do throws(DecodingError) {
            let code = try reader.readUInt8("response code")
            guard code == Self.responseCode else {
                throw DecodingError.invalid("response code", expected: "0x10", found: FitnessFormat.hex(code), at: 0)
            }
            let first = try reader.readUInt8("request op code")
            guard let resultByte = reader.peek() else {
                // Only one byte after the response code: the result alone.
                requestOpCode = nil
                result = CyclingControlPointResult(rawValue: first)
                supportedSensorLocations = []
                parameter = []
                return
            }
            _ = try reader.readUInt8("result")
            requestOpCode = first
            result = CyclingControlPointResult(rawValue: resultByte)
            let rest = reader.readRemaining()
            if first == 0x04 && result == .success {
                supportedSensorLocations = rest.map(SensorLocation.init(rawValue:))
                parameter = []
            } else {
                supportedSensorLocations = []
                parameter = rest
            }
        } catch {
            throw error.within("SC Control Point response")
        }
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.responseCode)
        if let requestOpCode { writer.write(requestOpCode) }
        writer.write(result.rawValue)
        for location in supportedSensorLocations { writer.write(location.rawValue) }
        writer.write(bytes: parameter)
    }

    /// One line, e.g. `response to 0x01: success`.
    public var summary: String {
        var text = "response to " + (requestOpCode.map(FitnessFormat.hex) ?? "unknown request") + ": \(result)"
        if !supportedSensorLocations.isEmpty {
            text += ", locations " + supportedSensorLocations.map(\.description).joined(separator: ", ")
        }
        if !parameter.isEmpty { text += ", parameter \(parameter.spacedHex)" }
        return text
    }
}


/// Anything seen on the SC Control Point: a request (client → sensor) or a response (sensor →
/// client, first byte 0x10).
public typealias SCControlPointMessage = ControlPointMessage<SCControlPointRequest, SCControlPointResponse>

extension SCControlPointResponse: ControlPointResponse {}
extension SCControlPointRequest: ControlPointRequest {}
