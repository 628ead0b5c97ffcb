import BluetideBase

/// GATT characteristic properties an emulated characteristic declares (the bits of the
/// characteristic declaration, Core Vol 3 Part G 3.3.1.1).
public struct EmulatedProperties: OptionSet, Hashable, Sendable {
    /// The property bits.
    public let rawValue: UInt8
    /// Memberwise initialiser.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// 0x02: the value can be read.
    public static let read = Self(rawValue: 0x02)
    /// 0x04: Write Command (write without response).
    public static let writeWithoutResponse = Self(rawValue: 0x04)
    /// 0x08: Write Request (write with response).
    public static let write = Self(rawValue: 0x08)
    /// 0x10: the value is notified (needs a CCCD).
    public static let notify = Self(rawValue: 0x10)
    /// 0x20: the value is indicated (needs a CCCD).
    public static let indicate = Self(rawValue: 0x20)
}

/// One characteristic of an emulated service: UUID, properties and the value it starts with.
public struct EmulatedCharacteristic: Hashable, Sendable {
    /// Characteristic UUID.
    public var uuid: BluetoothUUID
    /// Declared properties.
    public var properties: EmulatedProperties
    /// Value before the first read, write or notification (reads go to the model anyway).
    public var initialValue: [UInt8]

    /// Memberwise initialiser.
    public init(_ uuid: BluetoothUUID, _ properties: EmulatedProperties, initialValue: [UInt8] = []) {
        self.uuid = uuid
        self.properties = properties
        self.initialValue = initialValue
    }
}

/// A primary service of an emulated device with its characteristics, in declaration order.
public struct EmulatedService: Hashable, Sendable {
    /// Service UUID.
    public var uuid: BluetoothUUID
    /// Characteristics in handle order.
    public var characteristics: [EmulatedCharacteristic]

    /// Memberwise initialiser.
    public init(_ uuid: BluetoothUUID, _ characteristics: [EmulatedCharacteristic]) {
        self.uuid = uuid
        self.characteristics = characteristics
    }
}

/// How a value leaves the device.
public enum EmulatedDelivery: String, Hashable, Sendable {
    /// Handle Value Notification (unacknowledged).
    case notify
    /// Handle Value Indication (the client confirms).
    case indicate
}

/// A value the model wants sent to a subscribed client.
public struct EmulatedOutput: Hashable, Sendable, CustomStringConvertible {
    /// Characteristic the value belongs to.
    public var characteristic: BluetoothUUID
    /// The value bytes.
    public var bytes: [UInt8]
    /// Notification or indication.
    public var delivery: EmulatedDelivery

    /// Memberwise initialiser.
    public init(_ characteristic: BluetoothUUID, _ bytes: [UInt8], _ delivery: EmulatedDelivery = .notify) {
        self.characteristic = characteristic
        self.bytes = bytes
        self.delivery = delivery
    }

    /// `notify 2A37: 16 48`.
    public var description: String { "\(delivery.rawValue) \(characteristic): \(bytes.spacedHex)" }
}

/// The model's answer to a write.
public enum WriteOutcome: Hashable, Sendable {
    /// The write is accepted (the ATT Write Response is sent for a Write Request); the outputs
    /// follow it, in order (e.g. a control point's indicated response, status notifications).
    case accepted([EmulatedOutput])
    /// The write is refused with this ATT error code (0x80–0x9F application errors, or a core
    /// code such as 0x0D invalid attribute value length); the stored value is unchanged.
    case rejected(attError: UInt8)

    /// Accepted with nothing to send.
    public static let ok = WriteOutcome.accepted([])

    /// Outputs of an accepted write; empty for a rejected one.
    public var outputs: [EmulatedOutput] {
        if case let .accepted(outputs) = self { return outputs }
        return []
    }

    /// The ATT error of a rejected write, nil when accepted.
    public var attError: UInt8? {
        if case let .rejected(code) = self { return code }
        return nil
    }
}

/// What a device puts in its advertising data, for the peripheral wiring to use.
public struct AdvertisingHints: Hashable, Sendable {
    /// Complete local name.
    public var localName: String
    /// Service UUIDs to list (16- and 128-bit mixed; the advertiser splits them by size).
    public var serviceUUIDs: [BluetoothUUID]
    /// Company identifier and data for a Manufacturer Specific Data field, if any.
    public var manufacturerData: ManufacturerData?
    /// Service Data fields (service UUID + data), e.g. FTMS `01 20 00`.
    public var serviceData: [ServiceDataField]
    /// GAP Appearance value, if any (e.g. 0x0341 heart-rate belt).
    public var appearance: UInt16?

    /// Manufacturer Specific Data: company ID (little-endian on air) and the bytes after it.
    public struct ManufacturerData: Hashable, Sendable {
        /// Bluetooth SIG company identifier.
        public var companyID: UInt16
        /// Bytes after the identifier.
        public var data: [UInt8]
        /// Memberwise initialiser.
        public init(companyID: UInt16, data: [UInt8]) {
            self.companyID = companyID
            self.data = data
        }
    }

    /// One Service Data field.
    public struct ServiceDataField: Hashable, Sendable {
        /// Service UUID.
        public var uuid: BluetoothUUID
        /// Bytes after the identifier.
        public var data: [UInt8]
        /// Memberwise initialiser.
        public init(uuid: BluetoothUUID, data: [UInt8]) {
            self.uuid = uuid
            self.data = data
        }
    }

    /// Memberwise initialiser.
    public init(
        localName: String, serviceUUIDs: [BluetoothUUID], manufacturerData: ManufacturerData? = nil,
        serviceData: [ServiceDataField] = [], appearance: UInt16? = nil
    ) {
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.appearance = appearance
    }
}

/// An emulated BLE peripheral as pure protocol logic: GATT layout, reads, writes and a clock tick,
/// with no I/O. Time is passed in as seconds on the caller's monotonic clock (any origin, the
/// first call fixes it); randomness comes from a seeded generator inside the model, so a model
/// driven with the same times and writes produces the same bytes.
///
/// The GATT server wiring owns one model per emulated device, answers reads from ``read(_:now:)``,
/// forwards writes to ``write(_:_:now:)`` and calls ``tick(now:)`` about every ``tickInterval``
/// seconds, sending the returned outputs to subscribed clients (and dropping them otherwise).
public protocol DeviceModel: Sendable {
    /// Catalog name, e.g. `heart-rate`.
    var name: String { get }
    /// Advertising content.
    var advertising: AdvertisingHints { get }
    /// Primary services and their characteristics.
    var services: [EmulatedService] { get }
    /// How often ``tick(now:)`` should be called, seconds (models cope with any rate).
    var tickInterval: Double { get }
    /// The current value of a readable characteristic; nil when the model has no such
    /// characteristic (the server answers Attribute Not Found / Read Not Permitted).
    func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]?
    /// Handles a write (request or command) of `bytes` to `characteristic` at `now`.
    mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome
    /// Advances the model to `now` and returns the values to notify or indicate, oldest first.
    mutating func tick(now: Double) -> [EmulatedOutput]
    /// Whether the device takes one central at a time, like a COLMI ring: it stops advertising
    /// while connected and drops a second connection (default false: it advertises again).
    var acceptsOneCentralAtATime: Bool { get }
}

extension DeviceModel {
    /// Most emulated devices take several centrals.
    public var acceptsOneCentralAtATime: Bool { false }

    /// Every characteristic of every service.
    public var allCharacteristics: [EmulatedCharacteristic] { services.flatMap(\.characteristics) }

    /// The declaration of `uuid`, if the model has it.
    public func characteristic(_ uuid: BluetoothUUID) -> EmulatedCharacteristic? {
        allCharacteristics.first { $0.uuid == uuid }
    }
}

/// ATT error codes the models use.
public enum EmulatedATTError {
    /// 0x03 Write Not Permitted.
    public static let writeNotPermitted: UInt8 = 0x03
    /// 0x0D Invalid Attribute Value Length.
    public static let invalidAttributeValueLength: UInt8 = 0x0D
    /// 0x80 first application error (Punch "invalid sequence", HRS "control point not supported").
    public static let application: UInt8 = 0x80
}
