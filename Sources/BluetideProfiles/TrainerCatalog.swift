import BluetideBase

// FTMS and Tacx FE-C entries for ProfileCatalog.
//
// The supported-range characteristics get one entry each (`ftms-speed-range`,
// `ftms-inclination-range`, `ftms-resistance-range`, `ftms-heart-rate-range`,
// `ftms-power-range`), because each has its own characteristic UUID and layout.
// `ftms-service-data` decodes the FTMS advertising service data (no characteristic).
extension ProfileCatalog {
    static let trainerProfiles: [ProfileDescriptor] = [
        ProfileDescriptor(
            name: "ftms-service-data", summary: "FTMS advertising service data (UUID 0x1826): availability and machine type",
            characteristic: nil
        ) { _ in
            StatelessDecoder { bytes throws(DecodingError) in
                let value = try FitnessMachineServiceData(bytes: bytes)
                return DecodedPacket(summary: value.description, value: value)
            }
        },
        stateless("ftms-feature", "Fitness Machine Feature (0x2ACC)", .fitnessMachineFeature, FitnessMachineFeature.self),
        stateless("ftms-indoor-bike", "Indoor Bike Data (0x2AD2)", .indoorBikeData, IndoorBikeData.self),
        stateless("ftms-training-status", "Training Status (0x2AD3)", .trainingStatus, TrainingStatus.self),
        stateless(
            "ftms-control-point", "Fitness Machine Control Point (0x2AD9), requests and responses",
            .fitnessMachineControlPoint, FitnessMachineControlPointMessage.self),
        stateless("ftms-status", "Fitness Machine Status (0x2ADA)", .fitnessMachineStatus, FitnessMachineStatus.self),
        stateless("ftms-speed-range", "Supported Speed Range (0x2AD4)", .supportedSpeedRange, SupportedSpeedRange.self),
        stateless(
            "ftms-inclination-range", "Supported Inclination Range (0x2AD5)", .supportedInclinationRange,
            SupportedInclinationRange.self),
        stateless(
            "ftms-resistance-range", "Supported Resistance Level Range (0x2AD6)", .supportedResistanceLevelRange,
            SupportedResistanceLevelRange.self),
        stateless(
            "ftms-heart-rate-range", "Supported Heart Rate Range (0x2AD7)", .supportedHeartRateRange,
            SupportedHeartRateRange.self),
        stateless("ftms-power-range", "Supported Power Range (0x2AD8)", .supportedPowerRange, SupportedPowerRange.self),
        ProfileDescriptor(
            name: "fec", summary: "Tacx FE-C over BLE ANT messages (6E40FEC2), with session totals",
            characteristic: .tacxFECNotify, isStateful: true
        ) { options in
            FECPacketDecoder(wheelCircumferenceMeters: options.wheelCircumference)
        },
    ]

    /// An entry whose packets decode on their own with `T`'s codec; the summary is `T`'s description.
    private static func stateless<T: GATTDecodable & Encodable & CustomStringConvertible>(
        _ name: String, _ summary: String, _ characteristic: BluetoothUUID, _ type: T.Type
    ) -> ProfileDescriptor {
        ProfileDescriptor(name: name, summary: summary, characteristic: characteristic) { _ in
            StatelessDecoder { bytes throws(DecodingError) in
                let value = try T(bytes: bytes)
                return DecodedPacket(summary: value.description, value: value)
            }
        }
    }
}

/// Decodes FE-C frames one after another, deriving session elapsed time, distance, speed and
/// average power with an ``FECAccumulator``.
public struct FECPacketDecoder: PacketDecoder, Equatable {
    /// The running totals.
    public private(set) var accumulator: FECAccumulator

    public init(wheelCircumferenceMeters: Double = 2.105) {
        accumulator = FECAccumulator(wheelCircumferenceMeters: wheelCircumferenceMeters)
    }

    public mutating func decode(_ bytes: [UInt8], at time: Double) throws(DecodingError) -> DecodedPacket {
        let frame = try FECFrame(bytes: bytes)
        let derived = accumulator.add(frame, at: time)
        return DecodedPacket(summary: "\(frame) | \(derived)", value: frame, derived: derived)
    }
}
