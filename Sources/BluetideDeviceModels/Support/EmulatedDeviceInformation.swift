import BluetideBase
import BluetideProfiles

/// The Device Information service (0x180A) an emulated device serves, as real trainers, straps
/// and sensors do: who made it and which model it is (what apps such as Home Assistant show),
/// its serial number and its hardware, firmware and software revisions. Every value is a plain
/// UTF-8 string (``DeviceInformationString``); a nil field is not served.
public struct EmulatedDeviceInformation: Hashable, Sendable {
    /// Manufacturer Name String (0x2A29).
    public var manufacturerName: String
    /// Model Number String (0x2A24).
    public var modelNumber: String
    /// Serial Number String (0x2A25).
    public var serialNumber: String?
    /// Hardware Revision String (0x2A27).
    public var hardwareRevision: String?
    /// Firmware Revision String (0x2A26).
    public var firmwareRevision: String?
    /// Software Revision String (0x2A28).
    public var softwareRevision: String?

    /// Values for a device; the revisions default to Bluetide's version (the emulator is the
    /// firmware and the software).
    public init(
        manufacturerName: String, modelNumber: String, serialNumber: String?, hardwareRevision: String? = "1.0",
        firmwareRevision: String? = BluetideVersion.current, softwareRevision: String? = BluetideVersion.current
    ) {
        self.manufacturerName = manufacturerName
        self.modelNumber = modelNumber
        self.serialNumber = serialNumber
        self.hardwareRevision = hardwareRevision
        self.firmwareRevision = firmwareRevision
        self.softwareRevision = softwareRevision
    }

    /// A serial number made from a model's seed: eight decimal digits, the same for the same seed.
    public static func serialNumber(seed: UInt64) -> String {
        var generator = SeededGenerator(seed: seed ^ 0x0180_A0DE_5E41_A100)
        let digits = String(generator.next() % 100_000_000)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// The served characteristics with their values, in the service's conventional order.
    public var values: [(uuid: BluetoothUUID, text: String)] {
        let all: [(BluetoothUUID, String?)] = [
            (.manufacturerName, manufacturerName), (.modelNumber, modelNumber), (.serialNumber, serialNumber),
            (.hardwareRevision, hardwareRevision), (.firmwareRevision, firmwareRevision), (.softwareRevision, softwareRevision),
        ]
        return all.compactMap { uuid, text in text.map { (uuid, $0) } }
    }

    /// The service: every value read-only.
    public var service: EmulatedService {
        EmulatedService(.deviceInformation, values.map {
            EmulatedCharacteristic($0.uuid, [.read], initialValue: DeviceInformationString($0.text).bytes)
        })
    }

    /// The value of `characteristic` when it is one of this service's; nil otherwise.
    public func read(_ characteristic: BluetoothUUID) -> [UInt8]? {
        values.first { $0.uuid == characteristic }.map { DeviceInformationString($0.text).bytes }
    }
}
