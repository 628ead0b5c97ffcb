import BluetideBase

/// Indoor bike simulation parameters (SIM mode): control point op 0x11 and status op 0x12.
///
/// Six bytes: wind speed sint16 (0.001 m/s), grade sint16 (0.01 %), rolling resistance
/// coefficient uint8 (0.0001), wind resistance coefficient uint8 (0.01 kg/m).
/// `00 00 1E 00 28 33` = no wind, +0.30 %, Crr 0.0040, Cw 0.51 kg/m (what Zwift sends).
public struct IndoorBikeSimulationParameters: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// Wind speed, 0.001 m/s units (signed: negative is a tailwind).
    public var windSpeedMillimetersPerSecond: Int16
    /// Grade, 0.01 % units (signed: negative is downhill).
    public var gradeHundredthPercent: Int16
    /// Coefficient of rolling resistance, 0.0001 units.
    public var rollingResistanceTenThousandths: UInt8
    /// Wind resistance coefficient, 0.01 kg/m units.
    public var windResistanceHundredthKgPerMeter: UInt8

    public init(
        windSpeedMillimetersPerSecond: Int16 = 0, gradeHundredthPercent: Int16,
        rollingResistanceTenThousandths: UInt8 = 40, windResistanceHundredthKgPerMeter: UInt8 = 51
    ) {
        self.windSpeedMillimetersPerSecond = windSpeedMillimetersPerSecond
        self.gradeHundredthPercent = gradeHundredthPercent
        self.rollingResistanceTenThousandths = rollingResistanceTenThousandths
        self.windResistanceHundredthKgPerMeter = windResistanceHundredthKgPerMeter
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        windSpeedMillimetersPerSecond = try reader.read(Int16.self, "wind speed")
        gradeHundredthPercent = try reader.read(Int16.self, "grade")
        rollingResistanceTenThousandths = try reader.readUInt8("rolling resistance coefficient")
        windResistanceHundredthKgPerMeter = try reader.readUInt8("wind resistance coefficient")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(windSpeedMillimetersPerSecond)
        writer.write(gradeHundredthPercent)
        writer.write(rollingResistanceTenThousandths)
        writer.write(windResistanceHundredthKgPerMeter)
    }

    /// Wind speed in m/s.
    public var windSpeedMetersPerSecond: Double { Double(windSpeedMillimetersPerSecond) / 1000 }
    /// Grade in percent.
    public var gradePercent: Double { Double(gradeHundredthPercent) / 100 }
    /// Coefficient of rolling resistance (unitless).
    public var rollingResistanceCoefficient: Double { Double(rollingResistanceTenThousandths) / 10000 }
    /// Wind resistance coefficient in kg/m.
    public var windResistanceKgPerMeter: Double { Double(windResistanceHundredthKgPerMeter) / 100 }

    public var description: String {
        "wind \(trainerFormat(windSpeedMetersPerSecond, decimals: 3)) m/s, grade \(trainerFormat(gradePercent, decimals: 2)) %, "
            + "Crr \(trainerFormat(rollingResistanceCoefficient, decimals: 4)), "
            + "Cw \(trainerFormat(windResistanceKgPerMeter, decimals: 2)) kg/m"
    }
}

/// Stop or pause (control point op 0x08 parameter, status op 0x02 parameter).
public struct FTMSStopOrPause: TrainerNamedCode {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let stop = Self(rawValue: 0x01)
    public static let pause = Self(rawValue: 0x02)
    public static let names: [UInt8: String] = [0x01: "stop", 0x02: "pause"]
}

/// Spin-down control command (control point op 0x13 parameter).
public struct FTMSSpinDownCommand: TrainerNamedCode {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let start = Self(rawValue: 0x01)
    public static let ignore = Self(rawValue: 0x02)
    public static let names: [UInt8: String] = [0x01: "start", 0x02: "ignore"]
}

/// Spin-down status (machine status op 0x14 parameter).
public struct FTMSSpinDownStatus: TrainerNamedCode {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let requested = Self(rawValue: 0x01)
    public static let success = Self(rawValue: 0x02)
    public static let error = Self(rawValue: 0x03)
    public static let stopPedalling = Self(rawValue: 0x04)
    public static let names: [UInt8: String] = [
        0x01: "spin-down requested", 0x02: "success", 0x03: "error", 0x04: "stop pedalling",
    ]
}

/// Result code of a control point response.
public struct FTMSResultCode: TrainerNamedCode {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let success = Self(rawValue: 0x01)
    public static let opCodeNotSupported = Self(rawValue: 0x02)
    public static let invalidParameter = Self(rawValue: 0x03)
    public static let operationFailed = Self(rawValue: 0x04)
    public static let controlNotPermitted = Self(rawValue: 0x05)
    public static let names: [UInt8: String] = [
        0x01: "success", 0x02: "op code not supported", 0x03: "invalid parameter",
        0x04: "operation failed", 0x05: "control not permitted",
    ]
}

/// Targeted times in heart-rate zones, seconds each (2, 3 or 5 zones, uint16 per zone).
public struct FTMSHeartRateZoneTimes: Equatable, Sendable, Encodable, CustomStringConvertible {
    /// Seconds in each zone, lowest zone first: 2 zones = fat burn, fitness; 3 = light, moderate,
    /// hard; 5 = very light, light, moderate, hard, maximum.
    public var zoneSeconds: [UInt16]

    public init(zoneSeconds: [UInt16]) { self.zoneSeconds = zoneSeconds }

    static func read(zones: Int, from reader: inout ByteReader, _ context: String) throws(DecodingError) -> Self {
        var seconds: [UInt16] = []
        for zone in 1...zones { seconds.append(try reader.read(UInt16.self, "\(context).time in zone \(zone)")) }
        return Self(zoneSeconds: seconds)
    }

    func write(zones: Int, to writer: inout ByteWriter) {
        for zone in 0..<zones { writer.write(zone < zoneSeconds.count ? zoneSeconds[zone] : 0) }
    }

    public var description: String { zoneSeconds.map { "\($0) s" }.joined(separator: " / ") }
}
