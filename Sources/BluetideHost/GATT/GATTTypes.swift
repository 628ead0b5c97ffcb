import BluetideBase

/// Characteristic properties, as carried in a characteristic declaration (Core Vol 3 Part G 3.3.1.1).
public struct GATTCharacteristicProperties: OptionSet, Hashable, Sendable {
    /// The properties byte.
    public let rawValue: UInt8
    /// Wraps a properties byte.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// 0x01: the value may be broadcast.
    public static let broadcast = GATTCharacteristicProperties(rawValue: 0x01)
    /// 0x02: the value may be read.
    public static let read = GATTCharacteristicProperties(rawValue: 0x02)
    /// 0x04: Write Command allowed.
    public static let writeWithoutResponse = GATTCharacteristicProperties(rawValue: 0x04)
    /// 0x08: Write Request allowed.
    public static let write = GATTCharacteristicProperties(rawValue: 0x08)
    /// 0x10: notifications allowed (a CCCD is present).
    public static let notify = GATTCharacteristicProperties(rawValue: 0x10)
    /// 0x20: indications allowed (a CCCD is present).
    public static let indicate = GATTCharacteristicProperties(rawValue: 0x20)
    /// 0x40: Signed Write Command allowed.
    public static let authenticatedSignedWrites = GATTCharacteristicProperties(rawValue: 0x40)
    /// 0x80: an Extended Properties descriptor is present.
    public static let extendedProperties = GATTCharacteristicProperties(rawValue: 0x80)
}

/// Client Characteristic Configuration values (descriptor 0x2902, Core Vol 3 Part G 3.3.3.3).
public struct GATTClientConfiguration: OptionSet, Hashable, Sendable {
    /// The CCCD value.
    public let rawValue: UInt16
    /// Wraps a CCCD value.
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// 0x0001: notifications enabled.
    public static let notification = GATTClientConfiguration(rawValue: 0x0001)
    /// 0x0002: indications enabled.
    public static let indication = GATTClientConfiguration(rawValue: 0x0002)
}

/// A service found on a remote server: its UUID and handle range.
public struct GATTServiceRange: Hashable, Sendable {
    /// The service UUID.
    public var uuid: BluetoothUUID
    /// Handle of the service declaration.
    public var startHandle: UInt16
    /// Last handle of the service.
    public var endHandle: UInt16
    /// True for a primary service.
    public var isPrimary: Bool

    /// A service of type `uuid` spanning `startHandle...endHandle`.
    public init(uuid: BluetoothUUID, startHandle: UInt16, endHandle: UInt16, isPrimary: Bool = true) {
        self.uuid = uuid
        self.startHandle = startHandle
        self.endHandle = endHandle
        self.isPrimary = isPrimary
    }
}

/// An include declaration found inside a service.
public struct GATTIncludedService: Hashable, Sendable {
    /// Handle of the include declaration itself.
    public var declarationHandle: UInt16
    /// The included service.
    public var service: GATTServiceRange
}

/// A characteristic found on a remote server.
public struct GATTCharacteristic: Hashable, Sendable {
    /// The characteristic UUID.
    public var uuid: BluetoothUUID
    /// Handle of the characteristic declaration.
    public var declarationHandle: UInt16
    /// Handle of the value attribute.
    public var valueHandle: UInt16
    /// Last handle belonging to the characteristic (its descriptors end here).
    public var endHandle: UInt16
    /// Properties from the declaration.
    public var properties: GATTCharacteristicProperties

    /// A characteristic as found by discovery.
    public init(uuid: BluetoothUUID, declarationHandle: UInt16, valueHandle: UInt16, endHandle: UInt16, properties: GATTCharacteristicProperties) {
        self.uuid = uuid
        self.declarationHandle = declarationHandle
        self.valueHandle = valueHandle
        self.endHandle = endHandle
        self.properties = properties
    }
}

/// A descriptor found on a remote server.
public struct GATTDescriptor: Hashable, Sendable {
    /// The descriptor type.
    public var uuid: BluetoothUUID
    /// Its handle.
    public var handle: UInt16

    /// A descriptor as found by discovery (or reported by another stack, e.g. BlueZ).
    public init(uuid: BluetoothUUID, handle: UInt16) {
        self.uuid = uuid
        self.handle = handle
    }
}

/// Security state of a link, as the server needs it for permission checks.
public struct GATTLinkSecurity: Hashable, Sendable {
    /// The link is encrypted.
    public var isEncrypted: Bool
    /// The link's key is authenticated (MITM-protected).
    public var isAuthenticated: Bool
    /// A link state; both false for a fresh link.
    public init(isEncrypted: Bool = false, isAuthenticated: Bool = false) {
        self.isEncrypted = isEncrypted
        self.isAuthenticated = isAuthenticated
    }
    /// An unencrypted link.
    public static let none = GATTLinkSecurity()
}

/// A discovered characteristic with its descriptors.
public struct GATTRemoteCharacteristic: Hashable, Sendable {
    /// The characteristic.
    public var characteristic: GATTCharacteristic
    /// Its descriptors, in handle order.
    public var descriptors: [GATTDescriptor]

    /// A characteristic with its descriptors.
    public init(characteristic: GATTCharacteristic, descriptors: [GATTDescriptor]) {
        self.characteristic = characteristic
        self.descriptors = descriptors
    }
}

/// A discovered service with its characteristics (the result of a full discovery).
public struct GATTRemoteService: Hashable, Sendable {
    /// The service.
    public var service: GATTServiceRange
    /// Its characteristics, in handle order.
    public var characteristics: [GATTRemoteCharacteristic]

    /// A service with its characteristics.
    public init(service: GATTServiceRange, characteristics: [GATTRemoteCharacteristic]) {
        self.service = service
        self.characteristics = characteristics
    }
}
