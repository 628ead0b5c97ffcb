import BluetideBase
import BluetideProfiles
import Foundation

/// The typed write forms of every characteristic whose profile has a request codec: the control
/// points (Heart Rate, CSC, Cycling Power, FTMS), Tacx FE-C, the Punch trainer and the COLMI
/// ring. The bytes always come from the profile's own encoder, never from a table of our own.
enum WriteFormCatalog {
    /// The forms `characteristic` (in `service`) takes; empty when its profile has none.
    static func forms(for characteristic: BluetoothUUID, in service: BluetoothUUID?) -> [WriteForm] {
        entries.first { $0.characteristic == characteristic && ($0.service == nil || $0.service == service) }?.forms ?? []
    }

    /// Every characteristic with forms (for documentation and tests).
    static var characteristics: [BluetoothUUID] { entries.map(\.characteristic) }

    private static let entries: [(service: BluetoothUUID?, characteristic: BluetoothUUID, forms: [WriteForm])] = [
        (nil, .heartRateControlPoint, heartRate),
        (nil, .scControlPoint, cyclingSpeedAndCadence),
        (nil, .cyclingPowerControlPoint, cyclingPower),
        (nil, .fitnessMachineControlPoint, fitnessMachine),
        (.tacxFECService, .tacxFECWrite, tacxFEC),
        (PunchUUID.service, PunchUUID.control, punch),
        // The ring's write characteristic shares its UUID with Nordic UART RX: only in the ring's
        // service are words like `battery` requests rather than text.
        (COLMIUUID.service, COLMIUUID.write, colmi),
    ]

    private static func form(
        _ name: String, _ syntax: String = "", _ summary: String, choices: [String] = [],
        _ encode: @escaping @Sendable (inout WriteFormArguments) throws(ShellRequest.SyntaxError) -> [UInt8]
    ) -> WriteForm {
        WriteForm(name: name, syntax: syntax, summary: summary, choices: choices, encode: encode)
    }

    /// A form without arguments that writes `value`'s bytes.
    private static func fixed(_ name: String, _ summary: String, _ value: some GATTEncodable & Sendable) -> WriteForm {
        WriteForm(name: name, syntax: "", summary: summary) { (_: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in value.bytes }
    }

    // MARK: Heart Rate

    static let heartRate = [
        fixed("reset", "reset Energy Expended to 0", HeartRateControlPoint.resetEnergyExpended),
    ]

    // MARK: Cycling Speed and Cadence, Cycling Power

    /// Sensor locations as typed: `rear-hub`, `left-crank`, … (wire values 0–16, in order).
    static let sensorLocations: [String] = (0...16).map {
        SensorLocation(rawValue: UInt8($0)).description.replacingOccurrences(of: " ", with: "-")
    }

    private static let revolutions = Int64(0)...Int64(UInt32.max)

    static let cyclingSpeedAndCadence = [
        form("set-cumulative", "REVOLUTIONS", "set the cumulative wheel revolutions") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
            SCControlPointRequest.setCumulativeValue(UInt32(try a.whole("REVOLUTIONS", revolutions))).bytes
        },
        fixed("calibrate", "start sensor calibration", SCControlPointRequest.startSensorCalibration),
        form("location", "PLACE", "update the sensor location (rear-hub, left-crank, …)", choices: sensorLocations) { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
            SCControlPointRequest.updateSensorLocation(SensorLocation(rawValue: UInt8(try a.choice("PLACE", sensorLocations)))).bytes
        },
        fixed("locations", "ask for the supported sensor locations", SCControlPointRequest.requestSupportedSensorLocations),
    ]

    static let cyclingPower: [WriteForm] = {
        typealias Request = CyclingPowerControlPointRequest
        func millimetres(_ name: String, _ what: String, _ make: @escaping @Sendable (UInt16) -> Request) -> WriteForm {
            form(name, "MM", "set the \(what) in millimetres") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
                make(UInt16(try a.number("MM", 0...65535, unit: "mm").rounded())).bytes
            }
        }
        return [
            form("set-cumulative", "REVOLUTIONS", "set the cumulative wheel revolutions") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
                Request.setCumulativeValue(UInt32(try a.whole("REVOLUTIONS", revolutions))).bytes
            },
            form("location", "PLACE", "update the sensor location (left-crank, rear-hub, …)", choices: sensorLocations) { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
                Request.updateSensorLocation(SensorLocation(rawValue: UInt8(try a.choice("PLACE", sensorLocations)))).bytes
            },
            fixed("locations", "ask for the supported sensor locations", Request.requestSupportedSensorLocations),
            form("crank-length", "MM", "set the crank length in millimetres (0.5 mm steps)") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
                Request.setCrankLengthHalfMillimetres(UInt16((try a.number("MM", 0...32767.5, unit: "mm") * 2).rounded())).bytes
            },
            fixed("get-crank-length", "ask for the crank length", Request.requestCrankLength),
            millimetres("chain-length", "chain length") { .setChainLengthMillimetres($0) },
            fixed("get-chain-length", "ask for the chain length", Request.requestChainLength),
            form("chain-weight", "GRAMS", "set the chain weight in grams") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
                Request.setChainWeightGrams(UInt16(try a.whole("GRAMS", 0...65535, unit: "g"))).bytes
            },
            fixed("get-chain-weight", "ask for the chain weight", Request.requestChainWeight),
            millimetres("span-length", "span length") { .setSpanLengthMillimetres($0) },
            fixed("get-span-length", "ask for the span length", Request.requestSpanLength),
            fixed("offset-compensation", "start offset compensation (zero the power meter)", Request.startOffsetCompensation),
            fixed("enhanced-offset-compensation", "start enhanced offset compensation", Request.startEnhancedOffsetCompensation),
            form("mask", "BITS", "mask Cycling Power Measurement fields (a set bit turns one off)") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
                Request.maskMeasurementContent(UInt16(try a.whole("BITS", 0...0x1FF))).bytes
            },
            fixed("get-sampling-rate", "ask for the sampling rate", Request.requestSamplingRate),
            fixed("get-calibration-date", "ask for the factory calibration date", Request.requestFactoryCalibrationDate),
        ]
    }()

    // MARK: Fitness Machine (FTMS)

    static let fitnessMachine: [WriteForm] = {
        typealias Request = FitnessMachineControlPointRequest
        func whole<T: FixedWidthInteger & Sendable>(
            _ name: String, _ field: String, unit: String, _ summary: String, as: T.Type, _ make: @escaping @Sendable (T) -> Request
        ) -> WriteForm {
            form(name, field, summary) { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
                make(T(try a.whole(field, Int64(T.min)...Int64(T.max), unit: unit))).bytes
            }
        }
        return [
            fixed("request-control", "ask for control (first, before other requests)", Request.requestControl),
            fixed("reset", "reset the machine's targets and values", Request.reset),
            fixed("start", "start or resume", Request.startOrResume),
            fixed("stop", "stop", Request.stopOrPause(control: .stop)),
            fixed("pause", "pause", Request.stopOrPause(control: .pause)),
            whole("target-power", "WATTS", unit: "W", "ERG mode: hold this power", as: Int16.self) { .setTargetPower(watts: $0) },
            form("target-resistance", "LEVEL", "hold this resistance level (0.1 steps)") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
                Request.targetResistance(level: try a.number("LEVEL", 0...25.5)).bytes
            },
            form("target-speed", "KM/H", "hold this speed") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
                Request.targetSpeed(kmh: try a.number("KM/H", 0...655.35, unit: "km/h")).bytes
            },
            form("target-inclination", "PERCENT", "hold this incline") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
                Request.targetInclination(percent: try a.number("PERCENT", -3276.8...3276.7, unit: "%")).bytes
            },
            whole("target-heart-rate", "BPM", unit: "bpm", "hold this heart rate", as: UInt8.self) { .setTargetHeartRate(bpm: $0) },
            form("target-cadence", "RPM", "aim for this cadence (0.5 rpm steps)") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
                Request.targetedCadence(rpm: try a.number("RPM", 0...32767.5, unit: "rpm")).bytes
            },
            whole("target-energy", "KCAL", unit: "kcal", "aim for this expended energy", as: UInt16.self) { .setTargetedExpendedEnergy(kcal: $0) },
            form("target-distance", "METRES", "aim for this distance") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
                Request.setTargetedDistance(meters: UInt32(try a.whole("METRES", 0...16_777_215, unit: "m"))).bytes
            },
            whole("target-time", "SECONDS", unit: "s", "aim for this training time", as: UInt16.self) { .setTargetedTrainingTime(seconds: $0) },
            form("simulation", "GRADE% [WIND_M/S] [CRR] [CW_KG/M]", "SIM mode: ride this grade (wind 0, Crr 0.004, Cw 0.51 unless given)") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
                let grade = try a.number("GRADE%", -327.68...327.67, unit: "%")
                let wind = try a.number("WIND_M/S", -32.768...32.767, unit: "m/s", default: 0)
                let crr = try a.number("CRR", 0...0.0255, default: 0.004)
                let cw = try a.number("CW_KG/M", 0...2.55, unit: "kg/m", default: 0.51)
                return Request.simulation(gradePercent: grade, windSpeedMetersPerSecond: wind, rollingResistance: crr, windResistanceKgPerMeter: cw).bytes
            },
            form("wheel-circumference", "MM", "set the wheel circumference (0.1 mm steps)") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
                Request.wheelCircumference(millimeters: try a.number("MM", 0...6553.5, unit: "mm")).bytes
            },
            form("spin-down", "ACTION", "start or ignore a spin-down calibration (ACTION: start, ignore)", choices: ["start", "ignore"]) { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
                Request.spinDownControl(command: try a.choice("ACTION", ["start", "ignore"]) == 0 ? .start : .ignore).bytes
            },
        ]
    }()

    // MARK: Tacx FE-C over BLE

    static let tacxFEC = [
        form("target-power", "WATTS", "ERG mode: hold this power (page 49)") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
            FECFrame.command(.targetPower(FECTargetPower(watts: try a.number("WATTS", 0...4000, unit: "W")))).bytes
        },
        form("resistance", "PERCENT", "basic resistance, percent of the maximum (page 48)") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
            let percent = try a.number("PERCENT", 0...100, unit: "%")
            return FECFrame.command(.basicResistance(FECBasicResistance(totalResistanceHalfPercent: UInt8((percent * 2).rounded())))).bytes
        },
        form("grade", "PERCENT", "simulation: ride this grade (page 51)") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
            FECFrame.command(.trackResistance(FECTrackResistance(gradePercent: try a.number("PERCENT", -200...200, unit: "%")))).bytes
        },
    ]

    // MARK: Punch trainer

    static let punch = [
        fixed("start", "start the loaded sequence", PunchControlCommand.start),
        fixed("stop", "stop the sequence", PunchControlCommand.stop),
        form("countdown", "SECONDS", "start after a countdown") { (a: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
            PunchControlCommand.countdownStart(seconds: UInt8(try a.whole("SECONDS", 0...255, unit: "s"))).bytes
        },
    ]

    // MARK: COLMI ring

    static let colmi = [
        fixed("battery", "ask for the battery level", COLMIRequest.battery),
        fixed("find", "make the ring vibrate (find it)", COLMIRequest.findDevice),
        fixed("blink", "blink the ring's light twice", COLMIRequest.blinkTwice),
        fixed("support", "ask what the ring supports", COLMIRequest.deviceSupport),
        fixed("goals", "ask for the daily goals", COLMIRequest.readGoals),
        form("set-time", "", "set the ring's clock to now (UTC)") { (_: inout WriteFormArguments) throws(ShellRequest.SyntaxError) in
            let now = Int64(Date().timeIntervalSince1970)
            do { return COLMIRequest.setTime(try COLMISetTime(secondsSince1970: now)).bytes } catch {
                throw ShellRequest.SyntaxError(message: "set-time: the time \(now) cannot be encoded: \(error)")
            }
        },
        fixed("power-off", "switch the ring off", COLMIRequest.powerOff),
    ]
}
