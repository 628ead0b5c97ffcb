/// Names of the UUIDs Bluetide works with: SIG-assigned services, characteristics and
/// descriptors for the profiles we decode, and the vendor services of the devices in our mission.
extension BluetoothUUID {
    // MARK: Services
    public static let genericAccess = BluetoothUUID(0x1800)
    public static let genericAttribute = BluetoothUUID(0x1801)
    public static let deviceInformation = BluetoothUUID(0x180A)
    public static let heartRate = BluetoothUUID(0x180D)
    public static let battery = BluetoothUUID(0x180F)
    public static let cyclingSpeedAndCadence = BluetoothUUID(0x1816)
    public static let cyclingPower = BluetoothUUID(0x1818)
    public static let fitnessMachine = BluetoothUUID(0x1826)

    // MARK: GATT declarations and descriptors
    public static let primaryService = BluetoothUUID(0x2800)
    public static let secondaryService = BluetoothUUID(0x2801)
    public static let include = BluetoothUUID(0x2802)
    public static let characteristicDeclaration = BluetoothUUID(0x2803)
    public static let characteristicExtendedProperties = BluetoothUUID(0x2900)
    public static let characteristicUserDescription = BluetoothUUID(0x2901)
    public static let clientCharacteristicConfiguration = BluetoothUUID(0x2902)
    public static let characteristicPresentationFormat = BluetoothUUID(0x2904)

    // MARK: Characteristics
    public static let deviceName = BluetoothUUID(0x2A00)
    public static let appearance = BluetoothUUID(0x2A01)
    public static let serviceChanged = BluetoothUUID(0x2A05)
    public static let batteryLevel = BluetoothUUID(0x2A19)
    public static let systemID = BluetoothUUID(0x2A23)
    public static let modelNumber = BluetoothUUID(0x2A24)
    public static let serialNumber = BluetoothUUID(0x2A25)
    public static let firmwareRevision = BluetoothUUID(0x2A26)
    public static let hardwareRevision = BluetoothUUID(0x2A27)
    public static let softwareRevision = BluetoothUUID(0x2A28)
    public static let manufacturerName = BluetoothUUID(0x2A29)
    public static let heartRateMeasurement = BluetoothUUID(0x2A37)
    public static let bodySensorLocation = BluetoothUUID(0x2A38)
    public static let heartRateControlPoint = BluetoothUUID(0x2A39)
    public static let pnpID = BluetoothUUID(0x2A50)
    public static let scControlPoint = BluetoothUUID(0x2A55)
    public static let cscMeasurement = BluetoothUUID(0x2A5B)
    public static let cscFeature = BluetoothUUID(0x2A5C)
    public static let sensorLocation = BluetoothUUID(0x2A5D)
    public static let cyclingPowerMeasurement = BluetoothUUID(0x2A63)
    public static let cyclingPowerVector = BluetoothUUID(0x2A64)
    public static let cyclingPowerFeature = BluetoothUUID(0x2A65)
    public static let cyclingPowerControlPoint = BluetoothUUID(0x2A66)
    public static let fitnessMachineFeature = BluetoothUUID(0x2ACC)
    public static let indoorBikeData = BluetoothUUID(0x2AD2)
    public static let trainingStatus = BluetoothUUID(0x2AD3)
    public static let supportedSpeedRange = BluetoothUUID(0x2AD4)
    public static let supportedInclinationRange = BluetoothUUID(0x2AD5)
    public static let supportedResistanceLevelRange = BluetoothUUID(0x2AD6)
    public static let supportedHeartRateRange = BluetoothUUID(0x2AD7)
    public static let supportedPowerRange = BluetoothUUID(0x2AD8)
    public static let fitnessMachineControlPoint = BluetoothUUID(0x2AD9)
    public static let fitnessMachineStatus = BluetoothUUID(0x2ADA)

    static let knownNames: [BluetoothUUID: String] = {
        var names: [BluetoothUUID: String] = [
            .genericAccess: "Generic Access", .genericAttribute: "Generic Attribute",
            .deviceInformation: "Device Information", .heartRate: "Heart Rate", .battery: "Battery",
            .cyclingSpeedAndCadence: "Cycling Speed and Cadence", .cyclingPower: "Cycling Power",
            .fitnessMachine: "Fitness Machine",
            .primaryService: "Primary Service", .secondaryService: "Secondary Service", .include: "Include",
            .characteristicDeclaration: "Characteristic",
            .characteristicExtendedProperties: "Characteristic Extended Properties",
            .characteristicUserDescription: "Characteristic User Description",
            .clientCharacteristicConfiguration: "Client Characteristic Configuration",
            .characteristicPresentationFormat: "Characteristic Presentation Format",
            .deviceName: "Device Name", .appearance: "Appearance", .serviceChanged: "Service Changed",
            .batteryLevel: "Battery Level", .systemID: "System ID", .modelNumber: "Model Number String",
            .serialNumber: "Serial Number String", .firmwareRevision: "Firmware Revision String",
            .hardwareRevision: "Hardware Revision String", .softwareRevision: "Software Revision String",
            .manufacturerName: "Manufacturer Name String", .heartRateMeasurement: "Heart Rate Measurement",
            .bodySensorLocation: "Body Sensor Location", .heartRateControlPoint: "Heart Rate Control Point",
            .pnpID: "PnP ID", .scControlPoint: "SC Control Point", .cscMeasurement: "CSC Measurement",
            .cscFeature: "CSC Feature", .sensorLocation: "Sensor Location",
            .cyclingPowerMeasurement: "Cycling Power Measurement", .cyclingPowerVector: "Cycling Power Vector",
            .cyclingPowerFeature: "Cycling Power Feature", .cyclingPowerControlPoint: "Cycling Power Control Point",
            .fitnessMachineFeature: "Fitness Machine Feature", .indoorBikeData: "Indoor Bike Data",
            .trainingStatus: "Training Status", .supportedSpeedRange: "Supported Speed Range",
            .supportedInclinationRange: "Supported Inclination Range",
            .supportedResistanceLevelRange: "Supported Resistance Level Range",
            .supportedHeartRateRange: "Supported Heart Rate Range", .supportedPowerRange: "Supported Power Range",
            .fitnessMachineControlPoint: "Fitness Machine Control Point",
            .fitnessMachineStatus: "Fitness Machine Status",
        ]
        for (uuid, name) in extraNames { names[uuid] = name }
        return names
    }()

    /// Registry for names defined outside Core (vendor services in Profiles add theirs here at
    /// build time through this list; kept static so lookups need no locking).
    static let extraNames: [(BluetoothUUID, String)] = [
        (try! BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E"), "Nordic UART"),
        (try! BluetoothUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E"), "Nordic UART RX"),
        (try! BluetoothUUID("6E400003-B5A3-F393-E0A9-E50E24DCCA9E"), "Nordic UART TX"),
        (try! BluetoothUUID("6E40FFF0-B5A3-F393-E0A9-E50E24DCCA9E"), "COLMI R02"),
        (try! BluetoothUUID("DE5BF728-D711-4E47-AF26-65E3012A5DC7"), "COLMI R02 Big Data"),
        (try! BluetoothUUID("DE5BF72A-D711-4E47-AF26-65E3012A5DC7"), "COLMI R02 Big Data Write"),
        (try! BluetoothUUID("DE5BF729-D711-4E47-AF26-65E3012A5DC7"), "COLMI R02 Big Data Notify"),
        (BluetoothUUID(0xFFE0), "HM-10 Serial"),
        (BluetoothUUID(0xFFE1), "HM-10 Serial Data"),
        (try! BluetoothUUID("6D5E850D-C8C0-4EA9-BDA3-B7D10001D22A"), "Punch"),
        (try! BluetoothUUID("6D5E850D-C8C0-4EA9-BDA3-B7D10002D22A"), "Punch Response"),
        (try! BluetoothUUID("6D5E850D-C8C0-4EA9-BDA3-B7D10003D22A"), "Punch Time Sequence"),
        (try! BluetoothUUID("6D5E850D-C8C0-4EA9-BDA3-B7D10004D22A"), "Punch Sequence"),
        (try! BluetoothUUID("6D5E850D-C8C0-4EA9-BDA3-B7D10005D22A"), "Punch Control"),
    ]
}
