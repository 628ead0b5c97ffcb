import BluetideBase

/// A request written to the Fitness Machine Control Point (0x2AD9): opcode uint8 + parameter.
///
/// Every opcode of FTMS 1.0 with its parameter width, signedness and resolution. The response
/// opcode 0x80 is never a request (decoding it throws). Opcodes this type does not know decode
/// as ``unknown(opcode:parameter:)`` with the raw parameter bytes.
public enum FitnessMachineControlPointRequest: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// 0x00: ask for control; the machine answers `80 00 01` on success.
    case requestControl
    /// 0x01: targets back to defaults, training status Idle, control released.
    case reset
    /// 0x02: target speed, uint16, 0.01 km/h units.
    case setTargetSpeed(hundredthKmh: UInt16)
    /// 0x03: target inclination, sint16, 0.1 % units.
    case setTargetInclination(tenthPercent: Int16)
    /// 0x04: target resistance level, uint8, 0.1 units (the specification's 2-byte write).
    case setTargetResistanceLevel(tenths: UInt8)
    /// 0x04 with a sint16 parameter, 0.1 units: the 3-byte write a Tacx Flux needs. Decoded
    /// whenever op 0x04 carries two or more parameter bytes.
    case setTargetResistanceLevelWide(tenths: Int16)
    /// 0x05: target power (ERG), sint16, W.
    case setTargetPower(watts: Int16)
    /// 0x06: target heart rate, uint8, bpm.
    case setTargetHeartRate(bpm: UInt8)
    /// 0x07: start or resume.
    case startOrResume
    /// 0x08: stop (0x01) or pause (0x02).
    case stopOrPause(control: FTMSStopOrPause)
    /// 0x09: targeted expended energy, uint16, kcal.
    case setTargetedExpendedEnergy(kcal: UInt16)
    /// 0x0A: targeted number of steps, uint16.
    case setTargetedSteps(steps: UInt16)
    /// 0x0B: targeted number of strides, uint16.
    case setTargetedStrides(strides: UInt16)
    /// 0x0C: targeted distance, uint24, m (values above 16 777 215 are truncated on encode).
    case setTargetedDistance(meters: UInt32)
    /// 0x0D: targeted training time, uint16, s.
    case setTargetedTrainingTime(seconds: UInt16)
    /// 0x0E: targeted time in 2 heart-rate zones, 2 × uint16 s.
    case setTargetedTimeInTwoHeartRateZones(zones: FTMSHeartRateZoneTimes)
    /// 0x0F: targeted time in 3 heart-rate zones, 3 × uint16 s.
    case setTargetedTimeInThreeHeartRateZones(zones: FTMSHeartRateZoneTimes)
    /// 0x10: targeted time in 5 heart-rate zones, 5 × uint16 s.
    case setTargetedTimeInFiveHeartRateZones(zones: FTMSHeartRateZoneTimes)
    /// 0x11: indoor bike simulation parameters (SIM mode), 6 bytes.
    case setIndoorBikeSimulation(parameters: IndoorBikeSimulationParameters)
    /// 0x12: wheel circumference, uint16, 0.1 mm units.
    case setWheelCircumference(tenthMillimeters: UInt16)
    /// 0x13: spin-down control: start (0x01) or ignore (0x02).
    case spinDownControl(command: FTMSSpinDownCommand)
    /// 0x14: targeted cadence, uint16, 0.5 rpm units.
    case setTargetedCadence(halfRpm: UInt16)
    /// An opcode this type does not know, with its raw parameter.
    case unknown(opcode: UInt8, parameter: [UInt8])

    /// The response opcode, which a client must never write.
    public static let responseOpcode: UInt8 = 0x80

    /// The request's opcode.
    public var opcode: UInt8 {
        switch self {
        case .requestControl: 0x00
        case .reset: 0x01
        case .setTargetSpeed: 0x02
        case .setTargetInclination: 0x03
        case .setTargetResistanceLevel, .setTargetResistanceLevelWide: 0x04
        case .setTargetPower: 0x05
        case .setTargetHeartRate: 0x06
        case .startOrResume: 0x07
        case .stopOrPause: 0x08
        case .setTargetedExpendedEnergy: 0x09
        case .setTargetedSteps: 0x0A
        case .setTargetedStrides: 0x0B
        case .setTargetedDistance: 0x0C
        case .setTargetedTrainingTime: 0x0D
        case .setTargetedTimeInTwoHeartRateZones: 0x0E
        case .setTargetedTimeInThreeHeartRateZones: 0x0F
        case .setTargetedTimeInFiveHeartRateZones: 0x10
        case .setIndoorBikeSimulation: 0x11
        case .setWheelCircumference: 0x12
        case .spinDownControl: 0x13
        case .setTargetedCadence: 0x14
        case .unknown(let opcode, _): opcode
        }
    }

    /// Name of a control point opcode, for summaries.
    public static func name(ofOpcode opcode: UInt8) -> String {
        let names: [UInt8: String] = [
            0x00: "request control", 0x01: "reset", 0x02: "set target speed", 0x03: "set target inclination",
            0x04: "set target resistance level", 0x05: "set target power", 0x06: "set target heart rate",
            0x07: "start or resume", 0x08: "stop or pause", 0x09: "set targeted expended energy",
            0x0A: "set targeted steps", 0x0B: "set targeted strides", 0x0C: "set targeted distance",
            0x0D: "set targeted training time", 0x0E: "set targeted time in 2 HR zones",
            0x0F: "set targeted time in 3 HR zones", 0x10: "set targeted time in 5 HR zones",
            0x11: "set indoor bike simulation", 0x12: "set wheel circumference", 0x13: "spin-down control",
            0x14: "set targeted cadence", 0x80: "response code",
        ]
        return names[opcode] ?? "op 0x\([opcode].hexString)"
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let context = "Fitness Machine Control Point"
        let offset = reader.offset
        let opcode = try reader.readUInt8("\(context).op code")
        func field(_ name: String) -> String { "\(context).\(name)" }
        switch opcode {
        case 0x00: self = .requestControl
        case 0x01: self = .reset
        case 0x02: self = .setTargetSpeed(hundredthKmh: try reader.read(UInt16.self, field("target speed")))
        case 0x03: self = .setTargetInclination(tenthPercent: try reader.read(Int16.self, field("target inclination")))
        case 0x04:
            if reader.remaining >= 2 {
                self = .setTargetResistanceLevelWide(tenths: try reader.read(Int16.self, field("target resistance level")))
            } else {
                self = .setTargetResistanceLevel(tenths: try reader.readUInt8(field("target resistance level")))
            }
        case 0x05: self = .setTargetPower(watts: try reader.read(Int16.self, field("target power")))
        case 0x06: self = .setTargetHeartRate(bpm: try reader.readUInt8(field("target heart rate")))
        case 0x07: self = .startOrResume
        case 0x08: self = .stopOrPause(control: FTMSStopOrPause(rawValue: try reader.readUInt8(field("stop or pause"))))
        case 0x09: self = .setTargetedExpendedEnergy(kcal: try reader.read(UInt16.self, field("targeted expended energy")))
        case 0x0A: self = .setTargetedSteps(steps: try reader.read(UInt16.self, field("targeted steps")))
        case 0x0B: self = .setTargetedStrides(strides: try reader.read(UInt16.self, field("targeted strides")))
        case 0x0C: self = .setTargetedDistance(meters: try reader.readUInt24(field("targeted distance")))
        case 0x0D: self = .setTargetedTrainingTime(seconds: try reader.read(UInt16.self, field("targeted training time")))
        case 0x0E: self = .setTargetedTimeInTwoHeartRateZones(zones: try .read(zones: 2, from: &reader, context))
        case 0x0F: self = .setTargetedTimeInThreeHeartRateZones(zones: try .read(zones: 3, from: &reader, context))
        case 0x10: self = .setTargetedTimeInFiveHeartRateZones(zones: try .read(zones: 5, from: &reader, context))
        case 0x11:
            do {
                self = .setIndoorBikeSimulation(parameters: try IndoorBikeSimulationParameters(from: &reader))
            } catch {
                throw error.within("\(context).simulation")
            }
        case 0x12: self = .setWheelCircumference(tenthMillimeters: try reader.read(UInt16.self, field("wheel circumference")))
        case 0x13: self = .spinDownControl(command: FTMSSpinDownCommand(rawValue: try reader.readUInt8(field("spin-down control"))))
        case 0x14: self = .setTargetedCadence(halfRpm: try reader.read(UInt16.self, field("targeted cadence")))
        case Self.responseOpcode:
            throw .invalid(field("op code"), expected: "a request op code (0x00-0x14)", found: "0x80 (a response)", at: offset)
        default: self = .unknown(opcode: opcode, parameter: reader.readRemaining())
        }
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(opcode)
        switch self {
        case .requestControl, .reset, .startOrResume: break
        case .setTargetSpeed(let v): writer.write(v)
        case .setTargetInclination(let v): writer.write(v)
        case .setTargetResistanceLevel(let v): writer.write(v)
        case .setTargetResistanceLevelWide(let v): writer.write(v)
        case .setTargetPower(let v): writer.write(v)
        case .setTargetHeartRate(let v): writer.write(v)
        case .stopOrPause(let v): writer.write(v.rawValue)
        case .setTargetedExpendedEnergy(let v): writer.write(v)
        case .setTargetedSteps(let v): writer.write(v)
        case .setTargetedStrides(let v): writer.write(v)
        case .setTargetedDistance(let v): writer.writeUInt24(v)
        case .setTargetedTrainingTime(let v): writer.write(v)
        case .setTargetedTimeInTwoHeartRateZones(let z): z.write(zones: 2, to: &writer)
        case .setTargetedTimeInThreeHeartRateZones(let z): z.write(zones: 3, to: &writer)
        case .setTargetedTimeInFiveHeartRateZones(let z): z.write(zones: 5, to: &writer)
        case .setIndoorBikeSimulation(let p): p.encode(to: &writer)
        case .setWheelCircumference(let v): writer.write(v)
        case .spinDownControl(let v): writer.write(v.rawValue)
        case .setTargetedCadence(let v): writer.write(v)
        case .unknown(_, let parameter): writer.write(bytes: parameter)
        }
    }

    /// One line such as `set target power 200 W`.
    public var description: String {
        let name = Self.name(ofOpcode: opcode)
        switch self {
        case .requestControl, .reset, .startOrResume: return name
        case .setTargetSpeed(let v): return "\(name) \(trainerFormat(Double(v) / 100, decimals: 2)) km/h"
        case .setTargetInclination(let v): return "\(name) \(trainerFormat(Double(v) / 10, decimals: 1)) %"
        case .setTargetResistanceLevel(let v): return "\(name) \(trainerFormat(Double(v) / 10, decimals: 1))"
        case .setTargetResistanceLevelWide(let v):
            return "\(name) \(trainerFormat(Double(v) / 10, decimals: 1)) (sint16)"
        case .setTargetPower(let v): return "\(name) \(v) W"
        case .setTargetHeartRate(let v): return "\(name) \(v) bpm"
        case .stopOrPause(let v): return "\(name): \(v)"
        case .setTargetedExpendedEnergy(let v): return "\(name) \(v) kcal"
        case .setTargetedSteps(let v): return "\(name) \(v)"
        case .setTargetedStrides(let v): return "\(name) \(v)"
        case .setTargetedDistance(let v): return "\(name) \(v) m"
        case .setTargetedTrainingTime(let v): return "\(name) \(v) s"
        case .setTargetedTimeInTwoHeartRateZones(let z), .setTargetedTimeInThreeHeartRateZones(let z),
            .setTargetedTimeInFiveHeartRateZones(let z):
            return "\(name) \(z)"
        case .setIndoorBikeSimulation(let p): return "\(name): \(p)"
        case .setWheelCircumference(let v): return "\(name) \(trainerFormat(Double(v) / 10, decimals: 1)) mm"
        case .spinDownControl(let v): return "\(name): \(v)"
        case .setTargetedCadence(let v): return "\(name) \(trainerFormat(Double(v) / 2, decimals: 1)) rpm"
        case .unknown(_, let parameter):
            return parameter.isEmpty ? name : "\(name) parameter \(parameter.spacedHex)"
        }
    }
}

/// An indication from the Fitness Machine Control Point: `80`, request opcode, result code,
/// optional parameter.
///
/// Some machines answer with the result byte alone (a Kickr Core sent a lone `02` for an
/// unsupported opcode): a one-byte value other than `80` decodes with ``requestOpcode`` nil.
public struct FitnessMachineControlPointResponse: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// The opcode of the request this answers; nil for a result-only response.
    public var requestOpcode: UInt8?
    /// The outcome.
    public var result: FTMSResultCode
    /// Response parameter bytes (only spin-down 0x13 defines one: ``spinDownTargetSpeedRange``).
    public var parameter: [UInt8]

    public init(requestOpcode: UInt8?, result: FTMSResultCode, parameter: [UInt8] = []) {
        self.requestOpcode = requestOpcode
        self.result = result
        self.parameter = parameter
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let context = "Fitness Machine Control Point response"
        let offset = reader.offset
        let first = try reader.readUInt8("\(context).response code")
        guard first == FitnessMachineControlPointRequest.responseOpcode else {
            guard reader.isAtEnd else {
                throw .invalid("\(context).response code", expected: "0x80", found: "0x\([first].hexString)", at: offset)
            }
            self.init(requestOpcode: nil, result: FTMSResultCode(rawValue: first))
            return
        }
        let requestOpcode = try reader.readUInt8("\(context).request op code")
        let result = FTMSResultCode(rawValue: try reader.readUInt8("\(context).result code"))
        self.init(requestOpcode: requestOpcode, result: result, parameter: reader.readRemaining())
    }

    public func encode(to writer: inout ByteWriter) {
        if let requestOpcode {
            writer.write(FitnessMachineControlPointRequest.responseOpcode)
            writer.write(requestOpcode)
        }
        writer.write(result.rawValue)
        if requestOpcode != nil { writer.write(bytes: parameter) }
    }

    /// For a successful spin-down (0x13) response: target speed low and high in 0.01 km/h.
    public var spinDownTargetSpeedRange: (lowHundredthKmh: UInt16, highHundredthKmh: UInt16)? {
        guard requestOpcode == 0x13, result == .success else { return nil }
        var reader = ByteReader(parameter)
        guard let low = try? reader.read(UInt16.self, "low"), let high = try? reader.read(UInt16.self, "high") else {
            return nil
        }
        return (low, high)
    }

    /// A spin-down response carrying the target speed range (0.01 km/h units).
    public static func spinDownSuccess(lowHundredthKmh: UInt16, highHundredthKmh: UInt16) -> Self {
        var writer = ByteWriter()
        writer.write(lowHundredthKmh)
        writer.write(highHundredthKmh)
        return Self(requestOpcode: 0x13, result: .success, parameter: writer.bytes)
    }

    public var description: String {
        guard let requestOpcode else { return "response (result only): \(result)" }
        var text = "response to \(FitnessMachineControlPointRequest.name(ofOpcode: requestOpcode)): \(result)"
        if let range = spinDownTargetSpeedRange {
            text += ", target speed \(trainerFormat(Double(range.lowHundredthKmh) / 100, decimals: 2)) to "
                + "\(trainerFormat(Double(range.highHundredthKmh) / 100, decimals: 2)) km/h"
        } else if !parameter.isEmpty {
            text += ", parameter \(parameter.spacedHex)"
        }
        return text
    }
}

/// Either direction of the control point: what a write or an indication on 0x2AD9 holds.
///
/// A value starting with `80` is a response; a single byte that is not a valid request on its own
/// (e.g. `02`, which lacks the speed parameter) is taken as a result-only response.
public enum FitnessMachineControlPointMessage: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// Client to server.
    case request(FitnessMachineControlPointRequest)
    /// Server to client (indication).
    case response(FitnessMachineControlPointResponse)

    public init(from reader: inout ByteReader) throws(DecodingError) {
        if reader.peek() == FitnessMachineControlPointRequest.responseOpcode {
            self = .response(try FitnessMachineControlPointResponse(from: &reader))
            return
        }
        let start = reader
        do {
            self = .request(try FitnessMachineControlPointRequest(from: &reader))
        } catch {
            guard start.remaining == 1 else { throw error }
            reader = start
            self = .response(try FitnessMachineControlPointResponse(from: &reader))
        }
    }

    public func encode(to writer: inout ByteWriter) {
        switch self {
        case .request(let r): r.encode(to: &writer)
        case .response(let r): r.encode(to: &writer)
        }
    }

    /// JSON: `{"request": {…}}` or `{"response": {…}}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: TrainerJSONKey.self)
        switch self {
        case .request(let r): try c.encode(r, forKey: TrainerJSONKey("request"))
        case .response(let r): try c.encode(r, forKey: TrainerJSONKey("response"))
        }
    }

    public var description: String {
        switch self {
        case .request(let r): "→ \(r)"
        case .response(let r): "← \(r)"
        }
    }
}
