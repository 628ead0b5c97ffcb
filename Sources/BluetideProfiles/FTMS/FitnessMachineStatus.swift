import BluetideBase

/// Fitness Machine Status (0x2ADA): a notification of what changed, opcode + parameter.
///
/// Advisory: an Elite trainer reported `02 01` (stopped) right after a client Reset instead of
/// `01`. Note the resistance here is sint16 × 0.1, unlike the control point's uint8.
/// Opcodes this type does not know decode as ``unknown(opcode:parameter:)``.
public enum FitnessMachineStatus: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// 0x01: the machine was reset.
    case reset
    /// 0x02: stopped (0x01) or paused (0x02) by the user.
    case stoppedOrPausedByUser(control: FTMSStopOrPause)
    /// 0x03: stopped by the safety key.
    case stoppedBySafetyKey
    /// 0x04: started or resumed by the user.
    case startedOrResumedByUser
    /// 0x05: target speed changed, uint16, 0.01 km/h units.
    case targetSpeedChanged(hundredthKmh: UInt16)
    /// 0x06: target incline changed, sint16, 0.1 % units.
    case targetInclineChanged(tenthPercent: Int16)
    /// 0x07: target resistance level changed, sint16, 0.1 units.
    case targetResistanceLevelChanged(tenths: Int16)
    /// 0x08: target power changed, sint16, W.
    case targetPowerChanged(watts: Int16)
    /// 0x09: target heart rate changed, uint8, bpm.
    case targetHeartRateChanged(bpm: UInt8)
    /// 0x0A: targeted expended energy changed, uint16, kcal.
    case targetedExpendedEnergyChanged(kcal: UInt16)
    /// 0x0B: targeted number of steps changed, uint16.
    case targetedStepsChanged(steps: UInt16)
    /// 0x0C: targeted number of strides changed, uint16.
    case targetedStridesChanged(strides: UInt16)
    /// 0x0D: targeted distance changed, uint24, m.
    case targetedDistanceChanged(meters: UInt32)
    /// 0x0E: targeted training time changed, uint16, s.
    case targetedTrainingTimeChanged(seconds: UInt16)
    /// 0x0F: targeted time in 2 heart-rate zones changed, 2 × uint16 s.
    case targetedTimeInTwoHeartRateZonesChanged(zones: FTMSHeartRateZoneTimes)
    /// 0x10: targeted time in 3 heart-rate zones changed, 3 × uint16 s.
    case targetedTimeInThreeHeartRateZonesChanged(zones: FTMSHeartRateZoneTimes)
    /// 0x11: targeted time in 5 heart-rate zones changed, 5 × uint16 s.
    case targetedTimeInFiveHeartRateZonesChanged(zones: FTMSHeartRateZoneTimes)
    /// 0x12: indoor bike simulation parameters changed (same 6 bytes as control point op 0x11).
    case indoorBikeSimulationParametersChanged(parameters: IndoorBikeSimulationParameters)
    /// 0x13: wheel circumference changed, uint16, 0.1 mm units.
    case wheelCircumferenceChanged(tenthMillimeters: UInt16)
    /// 0x14: spin-down status.
    case spinDownStatus(status: FTMSSpinDownStatus)
    /// 0x15: targeted cadence changed, uint16, 0.5 rpm units.
    case targetedCadenceChanged(halfRpm: UInt16)
    /// 0xFF: another client or the machine's own UI took control; request control again.
    case controlPermissionLost
    /// An opcode this type does not know, with its raw parameter.
    case unknown(opcode: UInt8, parameter: [UInt8])

    /// The status opcode.
    public var opcode: UInt8 {
        switch self {
        case .reset: 0x01
        case .stoppedOrPausedByUser: 0x02
        case .stoppedBySafetyKey: 0x03
        case .startedOrResumedByUser: 0x04
        case .targetSpeedChanged: 0x05
        case .targetInclineChanged: 0x06
        case .targetResistanceLevelChanged: 0x07
        case .targetPowerChanged: 0x08
        case .targetHeartRateChanged: 0x09
        case .targetedExpendedEnergyChanged: 0x0A
        case .targetedStepsChanged: 0x0B
        case .targetedStridesChanged: 0x0C
        case .targetedDistanceChanged: 0x0D
        case .targetedTrainingTimeChanged: 0x0E
        case .targetedTimeInTwoHeartRateZonesChanged: 0x0F
        case .targetedTimeInThreeHeartRateZonesChanged: 0x10
        case .targetedTimeInFiveHeartRateZonesChanged: 0x11
        case .indoorBikeSimulationParametersChanged: 0x12
        case .wheelCircumferenceChanged: 0x13
        case .spinDownStatus: 0x14
        case .targetedCadenceChanged: 0x15
        case .controlPermissionLost: 0xFF
        case .unknown(let opcode, _): opcode
        }
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let context = "Fitness Machine Status"
        func field(_ name: String) -> String { "\(context).\(name)" }
        let opcode = try reader.readUInt8(field("op code"))
        switch opcode {
        case 0x01: self = .reset
        case 0x02: self = .stoppedOrPausedByUser(control: FTMSStopOrPause(rawValue: try reader.readUInt8(field("stop or pause"))))
        case 0x03: self = .stoppedBySafetyKey
        case 0x04: self = .startedOrResumedByUser
        case 0x05: self = .targetSpeedChanged(hundredthKmh: try reader.read(UInt16.self, field("target speed")))
        case 0x06: self = .targetInclineChanged(tenthPercent: try reader.read(Int16.self, field("target incline")))
        case 0x07:
            self = .targetResistanceLevelChanged(tenths: try reader.read(Int16.self, field("target resistance level")))
        case 0x08: self = .targetPowerChanged(watts: try reader.read(Int16.self, field("target power")))
        case 0x09: self = .targetHeartRateChanged(bpm: try reader.readUInt8(field("target heart rate")))
        case 0x0A:
            self = .targetedExpendedEnergyChanged(kcal: try reader.read(UInt16.self, field("targeted expended energy")))
        case 0x0B: self = .targetedStepsChanged(steps: try reader.read(UInt16.self, field("targeted steps")))
        case 0x0C: self = .targetedStridesChanged(strides: try reader.read(UInt16.self, field("targeted strides")))
        case 0x0D: self = .targetedDistanceChanged(meters: try reader.readUInt24(field("targeted distance")))
        case 0x0E:
            self = .targetedTrainingTimeChanged(seconds: try reader.read(UInt16.self, field("targeted training time")))
        case 0x0F: self = .targetedTimeInTwoHeartRateZonesChanged(zones: try .read(zones: 2, from: &reader, context))
        case 0x10: self = .targetedTimeInThreeHeartRateZonesChanged(zones: try .read(zones: 3, from: &reader, context))
        case 0x11: self = .targetedTimeInFiveHeartRateZonesChanged(zones: try .read(zones: 5, from: &reader, context))
        case 0x12:
            do {
                self = .indoorBikeSimulationParametersChanged(parameters: try IndoorBikeSimulationParameters(from: &reader))
            } catch {
                throw error.within("\(context).simulation")
            }
        case 0x13:
            self = .wheelCircumferenceChanged(tenthMillimeters: try reader.read(UInt16.self, field("wheel circumference")))
        case 0x14: self = .spinDownStatus(status: FTMSSpinDownStatus(rawValue: try reader.readUInt8(field("spin-down status"))))
        case 0x15: self = .targetedCadenceChanged(halfRpm: try reader.read(UInt16.self, field("targeted cadence")))
        case 0xFF: self = .controlPermissionLost
        default: self = .unknown(opcode: opcode, parameter: reader.readRemaining())
        }
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(opcode)
        switch self {
        case .reset, .stoppedBySafetyKey, .startedOrResumedByUser, .controlPermissionLost: break
        case .stoppedOrPausedByUser(let v): writer.write(v.rawValue)
        case .targetSpeedChanged(let v): writer.write(v)
        case .targetInclineChanged(let v): writer.write(v)
        case .targetResistanceLevelChanged(let v): writer.write(v)
        case .targetPowerChanged(let v): writer.write(v)
        case .targetHeartRateChanged(let v): writer.write(v)
        case .targetedExpendedEnergyChanged(let v): writer.write(v)
        case .targetedStepsChanged(let v): writer.write(v)
        case .targetedStridesChanged(let v): writer.write(v)
        case .targetedDistanceChanged(let v): writer.writeUInt24(v)
        case .targetedTrainingTimeChanged(let v): writer.write(v)
        case .targetedTimeInTwoHeartRateZonesChanged(let z): z.write(zones: 2, to: &writer)
        case .targetedTimeInThreeHeartRateZonesChanged(let z): z.write(zones: 3, to: &writer)
        case .targetedTimeInFiveHeartRateZonesChanged(let z): z.write(zones: 5, to: &writer)
        case .indoorBikeSimulationParametersChanged(let p): p.encode(to: &writer)
        case .wheelCircumferenceChanged(let v): writer.write(v)
        case .spinDownStatus(let v): writer.write(v.rawValue)
        case .targetedCadenceChanged(let v): writer.write(v)
        case .unknown(_, let parameter): writer.write(bytes: parameter)
        }
    }

    /// One line such as `target power changed: 200 W`.
    public var description: String {
        switch self {
        case .reset: "reset"
        case .stoppedOrPausedByUser(let v): "\(v == .pause ? "paused" : v == .stop ? "stopped" : "stopped or paused (\(v))") by user"
        case .stoppedBySafetyKey: "stopped by safety key"
        case .startedOrResumedByUser: "started or resumed by user"
        case .targetSpeedChanged(let v): "target speed changed: \(trainerFormat(Double(v) / 100, decimals: 2)) km/h"
        case .targetInclineChanged(let v): "target incline changed: \(trainerFormat(Double(v) / 10, decimals: 1)) %"
        case .targetResistanceLevelChanged(let v):
            "target resistance level changed: \(trainerFormat(Double(v) / 10, decimals: 1))"
        case .targetPowerChanged(let v): "target power changed: \(v) W"
        case .targetHeartRateChanged(let v): "target heart rate changed: \(v) bpm"
        case .targetedExpendedEnergyChanged(let v): "targeted expended energy changed: \(v) kcal"
        case .targetedStepsChanged(let v): "targeted steps changed: \(v)"
        case .targetedStridesChanged(let v): "targeted strides changed: \(v)"
        case .targetedDistanceChanged(let v): "targeted distance changed: \(v) m"
        case .targetedTrainingTimeChanged(let v): "targeted training time changed: \(v) s"
        case .targetedTimeInTwoHeartRateZonesChanged(let z): "targeted time in 2 HR zones changed: \(z)"
        case .targetedTimeInThreeHeartRateZonesChanged(let z): "targeted time in 3 HR zones changed: \(z)"
        case .targetedTimeInFiveHeartRateZonesChanged(let z): "targeted time in 5 HR zones changed: \(z)"
        case .indoorBikeSimulationParametersChanged(let p): "simulation parameters changed: \(p)"
        case .wheelCircumferenceChanged(let v):
            "wheel circumference changed: \(trainerFormat(Double(v) / 10, decimals: 1)) mm"
        case .spinDownStatus(let v): "spin-down status: \(v)"
        case .targetedCadenceChanged(let v): "targeted cadence changed: \(trainerFormat(Double(v) / 2, decimals: 1)) rpm"
        case .controlPermissionLost: "control permission lost"
        case .unknown(let opcode, let parameter):
            "status op 0x\([opcode].hexString)\(parameter.isEmpty ? "" : " parameter \(parameter.spacedHex)")"
        }
    }
}
