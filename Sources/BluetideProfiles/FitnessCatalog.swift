import BluetideBase

// Heart Rate, Battery, Device Information, CSC, Cycling Power entries for ProfileCatalog.
extension ProfileCatalog {
    static let fitnessProfiles: [ProfileDescriptor] = [
        fitnessEntry("heart-rate", "Heart Rate Measurement (0x2A37)", .heartRateMeasurement, HeartRateMeasurement.self) { $0.summary },
        fitnessEntry("body-sensor-location", "Body Sensor Location (0x2A38)", .bodySensorLocation, BodySensorLocation.self) { $0.description },
        fitnessEntry("heart-rate-control-point", "Heart Rate Control Point (0x2A39)", .heartRateControlPoint, HeartRateControlPoint.self) { $0.summary },
        fitnessEntry("battery", "Battery Level (0x2A19)", .batteryLevel, BatteryLevel.self) { $0.summary },
        ProfileDescriptor(
            name: "csc", summary: "CSC Measurement (0x2A5B): speed, cadence and distance",
            characteristic: .cscMeasurement, isStateful: true
        ) { options in CSCPacketDecoder(wheelCircumferenceMetres: options.wheelCircumference) },
        fitnessEntry("csc-feature", "CSC Feature (0x2A5C)", .cscFeature, CSCFeature.self) { $0.summary },
        fitnessEntry("sensor-location", "Sensor Location (0x2A5D), CSC and Cycling Power", .sensorLocation, SensorLocation.self) { $0.description },
        fitnessEntry("sc-control-point", "SC Control Point (0x2A55), requests and responses", .scControlPoint, SCControlPointMessage.self) { $0.summary },
        ProfileDescriptor(
            name: "cycling-power", summary: "Cycling Power Measurement (0x2A63): power, speed, cadence and distance",
            characteristic: .cyclingPowerMeasurement, isStateful: true
        ) { options in CyclingPowerPacketDecoder(wheelCircumferenceMetres: options.wheelCircumference) },
        fitnessEntry("cycling-power-feature", "Cycling Power Feature (0x2A65)", .cyclingPowerFeature, CyclingPowerFeature.self) { $0.summary },
        fitnessEntry("cycling-power-vector", "Cycling Power Vector (0x2A64)", .cyclingPowerVector, CyclingPowerVector.self) { $0.summary },
        fitnessEntry("cycling-power-control-point", "Cycling Power Control Point (0x2A66), requests and responses", .cyclingPowerControlPoint, CyclingPowerControlPointMessage.self) { $0.summary },
        fitnessEntry("system-id", "System ID (0x2A23)", .systemID, SystemID.self) { $0.summary },
        fitnessEntry("pnp-id", "PnP ID (0x2A50)", .pnpID, PnPID.self) { $0.summary },
        fitnessEntry("device-string", "Device Information string (0x2A24-0x2A29)", nil, DeviceInformationString.self) { $0.summary },
        fitnessEntry("manufacturer-name", "Manufacturer Name String (0x2A29)", .manufacturerName, DeviceInformationString.self) { $0.summary },
        fitnessEntry("model-number", "Model Number String (0x2A24)", .modelNumber, DeviceInformationString.self) { $0.summary },
        fitnessEntry("serial-number", "Serial Number String (0x2A25)", .serialNumber, DeviceInformationString.self) { $0.summary },
        fitnessEntry("hardware-revision", "Hardware Revision String (0x2A27)", .hardwareRevision, DeviceInformationString.self) { $0.summary },
        fitnessEntry("firmware-revision", "Firmware Revision String (0x2A26)", .firmwareRevision, DeviceInformationString.self) { $0.summary },
        fitnessEntry("software-revision", "Software Revision String (0x2A28)", .softwareRevision, DeviceInformationString.self) { $0.summary },
    ]
}

/// A stateless catalog entry: decode `T` from the whole packet and describe it in one line.
private func fitnessEntry<T: GATTDecodable & Encodable>(
    _ name: String, _ summary: String, _ characteristic: BluetoothUUID?, _ type: T.Type,
    line: @escaping @Sendable (T) -> String
) -> ProfileDescriptor {
    ProfileDescriptor(name: name, summary: summary, characteristic: characteristic) { _ in
        StatelessDecoder { bytes throws(DecodingError) in
            let value = try T(bytes: bytes)
            return DecodedPacket(summary: line(value), value: value)
        }
    }
}

/// Decodes CSC Measurements and derives speed, cadence and distance from their sequence.
struct CSCPacketDecoder: PacketDecoder {
    var calculator: CSCCalculator

    init(wheelCircumferenceMetres: Double) {
        calculator = CSCCalculator(wheelCircumferenceMetres: wheelCircumferenceMetres)
    }

    mutating func decode(_ bytes: [UInt8], at time: Double) throws(DecodingError) -> DecodedPacket {
        let measurement = try CSCMeasurement(bytes: bytes)
        let motion = calculator.update(measurement, at: time)
        return DecodedPacket(summary: measurement.summary + "; " + motion.summary, value: measurement, derived: motion)
    }
}

/// Decodes Cycling Power Measurements and derives speed, cadence and distance from their sequence.
struct CyclingPowerPacketDecoder: PacketDecoder {
    var calculator: CyclingPowerCalculator

    init(wheelCircumferenceMetres: Double) {
        calculator = CyclingPowerCalculator(wheelCircumferenceMetres: wheelCircumferenceMetres)
    }

    mutating func decode(_ bytes: [UInt8], at time: Double) throws(DecodingError) -> DecodedPacket {
        let measurement = try CyclingPowerMeasurement(bytes: bytes)
        let motion = calculator.update(measurement, at: time)
        return DecodedPacket(summary: measurement.summary + "; " + motion.summary, value: measurement, derived: motion)
    }
}
