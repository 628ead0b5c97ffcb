import BluetideBase

/// What a device says about itself in its Device Information service (0x180A): who made it,
/// which model it is, its serial number and revisions. Each field is nil when the device does
/// not serve it.
public struct RideDeviceInformation: Sendable, Hashable, Codable {
    /// Manufacturer Name String (0x2A29).
    public var manufacturerName: String?
    /// Model Number String (0x2A24).
    public var modelNumber: String?
    /// Serial Number String (0x2A25).
    public var serialNumber: String?
    /// Hardware Revision String (0x2A27).
    public var hardwareRevision: String?
    /// Firmware Revision String (0x2A26).
    public var firmwareRevision: String?
    /// Software Revision String (0x2A28).
    public var softwareRevision: String?

    /// Information with these parts.
    public init(
        manufacturerName: String? = nil, modelNumber: String? = nil, serialNumber: String? = nil,
        hardwareRevision: String? = nil, firmwareRevision: String? = nil, softwareRevision: String? = nil
    ) {
        self.manufacturerName = manufacturerName
        self.modelNumber = modelNumber
        self.serialNumber = serialNumber
        self.hardwareRevision = hardwareRevision
        self.firmwareRevision = firmwareRevision
        self.softwareRevision = softwareRevision
    }

    /// The characteristics of the service, in its conventional order.
    public static let characteristics: [BluetoothUUID] = [
        .manufacturerName, .modelNumber, .serialNumber, .hardwareRevision, .firmwareRevision, .softwareRevision,
    ]

    /// The value of one of the service's characteristics.
    public subscript(characteristic: BluetoothUUID) -> String? {
        get {
            switch characteristic {
            case .manufacturerName: manufacturerName
            case .modelNumber: modelNumber
            case .serialNumber: serialNumber
            case .hardwareRevision: hardwareRevision
            case .firmwareRevision: firmwareRevision
            case .softwareRevision: softwareRevision
            default: nil
            }
        }
        set {
            switch characteristic {
            case .manufacturerName: manufacturerName = newValue
            case .modelNumber: modelNumber = newValue
            case .serialNumber: serialNumber = newValue
            case .hardwareRevision: hardwareRevision = newValue
            case .firmwareRevision: firmwareRevision = newValue
            case .softwareRevision: softwareRevision = newValue
            default: break
            }
        }
    }

    /// Whether the device gave nothing.
    public var isEmpty: Bool { Self.characteristics.allSatisfy { self[$0] == nil } }
}
