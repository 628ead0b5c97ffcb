import BluetideBase

/// Access rules of a server attribute.
public struct GATTPermissions: OptionSet, Hashable, Sendable {
    /// The permission bits (Bluetide's own layout, not a wire value).
    public let rawValue: UInt8
    /// Wraps permission bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// May be read (else Read Not Permitted 0x02).
    public static let readable = GATTPermissions(rawValue: 0x01)
    /// May be written (else Write Not Permitted 0x03).
    public static let writable = GATTPermissions(rawValue: 0x02)
    /// Reading needs an encrypted link (else Insufficient Encryption 0x0F).
    public static let readEncrypted = GATTPermissions(rawValue: 0x04)
    /// Reading needs an authenticated link (else Insufficient Authentication 0x05).
    public static let readAuthenticated = GATTPermissions(rawValue: 0x08)
    /// Writing needs an encrypted link (else Insufficient Encryption 0x0F).
    public static let writeEncrypted = GATTPermissions(rawValue: 0x10)
    /// Writing needs an authenticated link (else Insufficient Authentication 0x05).
    public static let writeAuthenticated = GATTPermissions(rawValue: 0x20)
    /// Reading needs the application's authorisation of the client (else Insufficient
    /// Authorization 0x08): the server asks with ``GATTServerEvent/authorizationRequested(_:)``.
    public static let readAuthorized = GATTPermissions(rawValue: 0x40)
    /// Writing needs the application's authorisation of the client (else Insufficient
    /// Authorization 0x08): the server asks with ``GATTServerEvent/authorizationRequested(_:)``.
    public static let writeAuthorized = GATTPermissions(rawValue: 0x80)

    /// The permissions a characteristic's properties imply: readable with `.read`, writable
    /// with `.write`, `.writeWithoutResponse` or `.authenticatedSignedWrites`.
    public static func implied(by properties: GATTCharacteristicProperties) -> GATTPermissions {
        var p: GATTPermissions = []
        if properties.contains(.read) { p.insert(.readable) }
        if !properties.isDisjoint(with: [.write, .writeWithoutResponse, .authenticatedSignedWrites]) { p.insert(.writable) }
        return p
    }
}

/// What a read handler is told.
public struct GATTReadContext: Sendable {
    /// The connection reading (HCI connection handle).
    public var connection: UInt16
    /// The attribute handle.
    public var handle: UInt16
    /// The value offset asked for (Read Blob), 0 for a plain read.
    public var offset: Int

    /// What a read of `handle` at `offset` on `connection` is told (another stack's server
    /// applies a definition's handlers too).
    package init(connection: UInt16, handle: UInt16, offset: Int) {
        self.connection = connection
        self.handle = handle
        self.offset = offset
    }
}

/// What a write validator is told.
public struct GATTWriteContext: Sendable {
    /// The connection writing (HCI connection handle).
    public var connection: UInt16
    /// The attribute handle.
    public var handle: UInt16
    /// The attribute type.
    public var uuid: BluetoothUUID
    /// The complete new value (for a long write, all prepared parts assembled).
    public var value: [UInt8]

    /// What a write of `value` to `handle` (of type `uuid`) on `connection` is told.
    package init(connection: UInt16, handle: UInt16, uuid: BluetoothUUID, value: [UInt8]) {
        self.connection = connection
        self.handle = handle
        self.uuid = uuid
        self.value = value
    }
}

/// Supplies an attribute value at read time (instead of the stored value), or an ATT error.
public typealias GATTReadHandler = @Sendable (GATTReadContext) -> Result<[UInt8], ATTErrorCode>
/// Checks a write before it is applied; returning an error code (typically an application
/// error 0x80–0x9F) refuses it with that code.
public typealias GATTWriteValidator = @Sendable (GATTWriteContext) -> ATTErrorCode?

/// A descriptor to put in the server database.
public struct GATTDescriptorDefinition: Sendable {
    /// The descriptor type.
    public var uuid: BluetoothUUID
    /// Access rules (readable only by default).
    public var permissions: GATTPermissions
    /// Initial stored value.
    public var value: [UInt8]
    /// Longest value a write may store, octets.
    public var maximumLength: Int
    /// Supplies the value at read time when set.
    public var onRead: GATTReadHandler?
    /// Refuses writes with an error code when set.
    public var validateWrite: GATTWriteValidator?

    /// A descriptor of type `uuid`; see the properties for each parameter.
    public init(uuid: BluetoothUUID, permissions: GATTPermissions = .readable, value: [UInt8] = [], maximumLength: Int = 512,
                onRead: GATTReadHandler? = nil, validateWrite: GATTWriteValidator? = nil) {
        self.uuid = uuid
        self.permissions = permissions
        self.value = value
        self.maximumLength = maximumLength
        self.onRead = onRead
        self.validateWrite = validateWrite
    }
}

/// A characteristic to put in the server database. A CCCD is added automatically when the
/// properties include notify or indicate.
public struct GATTCharacteristicDefinition: Sendable {
    /// The characteristic UUID.
    public var uuid: BluetoothUUID
    /// Properties announced in the declaration.
    public var properties: GATTCharacteristicProperties
    /// Access rules of the value; by default implied by the properties.
    public var permissions: GATTPermissions
    /// Initial stored value.
    public var value: [UInt8]
    /// Longest value a write may store, octets (at most 512).
    public var maximumLength: Int
    /// Supplies the value at read time when set.
    public var onRead: GATTReadHandler?
    /// Refuses writes with an error code when set.
    public var validateWrite: GATTWriteValidator?
    /// Further descriptors (the CCCD is added automatically).
    public var descriptors: [GATTDescriptorDefinition]

    /// A characteristic of type `uuid`; permissions default to those the properties imply,
    /// `maximumLength` is capped at 512.
    public init(uuid: BluetoothUUID, properties: GATTCharacteristicProperties, permissions: GATTPermissions? = nil,
                value: [UInt8] = [], maximumLength: Int = 512, descriptors: [GATTDescriptorDefinition] = [],
                onRead: GATTReadHandler? = nil, validateWrite: GATTWriteValidator? = nil) {
        self.uuid = uuid
        self.properties = properties
        self.permissions = permissions ?? .implied(by: properties)
        self.value = value
        self.maximumLength = min(maximumLength, 512)
        self.descriptors = descriptors
        self.onRead = onRead
        self.validateWrite = validateWrite
    }
}

/// A service to put in the server database.
public struct GATTServiceDefinition: Sendable {
    /// The service UUID.
    public var uuid: BluetoothUUID
    /// Primary (discoverable) or secondary (only reachable through includes).
    public var isPrimary: Bool
    /// UUIDs of other services in the same database this one includes.
    public var includedServices: [BluetoothUUID]
    /// The characteristics, in handle order.
    public var characteristics: [GATTCharacteristicDefinition]

    /// A service of type `uuid`.
    public init(uuid: BluetoothUUID, isPrimary: Bool = true, includedServices: [BluetoothUUID] = [],
                characteristics: [GATTCharacteristicDefinition]) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.includedServices = includedServices
        self.characteristics = characteristics
    }
}

/// One attribute of the local server.
public struct GATTAttribute: Sendable {
    /// What the attribute is, structurally.
    public enum Role: Sendable, Hashable {
        /// A primary or secondary service declaration (0x2800 / 0x2801).
        case serviceDeclaration
        /// An include declaration (0x2802).
        case includeDeclaration
        /// A characteristic declaration (0x2803).
        case characteristicDeclaration
        /// A characteristic value; `cccd` is the handle of its CCCD when it has one.
        case characteristicValue(properties: GATTCharacteristicProperties, cccd: UInt16?)
        /// A Client Characteristic Configuration descriptor; its value is per connection.
        case clientConfiguration(valueHandle: UInt16, properties: GATTCharacteristicProperties)
        /// Any other descriptor.
        case descriptor
    }

    /// The attribute handle.
    public let handle: UInt16
    /// The attribute type.
    public let type: BluetoothUUID
    /// Its structural role.
    public let role: Role
    /// Its access rules.
    public let permissions: GATTPermissions
    /// The stored value (unused for CCCDs, which are per connection).
    public var value: [UInt8]
    /// Longest value a write may store, octets.
    public let maximumLength: Int
    /// Last handle of the group (service declarations only).
    public let groupEnd: UInt16?
    /// Supplies the value at read time when set.
    public let onRead: GATTReadHandler?
    /// Refuses writes with an error code when set.
    public let validateWrite: GATTWriteValidator?
}

/// The local attribute database, in handle order: handles 1...N laid out from service
/// definitions (``init(deviceName:appearance:services:)``), or handles chosen by the caller,
/// gaps allowed (``init(placing:)``).
public struct GATTDatabase: Sendable {
    /// Every attribute, in increasing handle order (`attributes[i].handle == i + 1` for the
    /// default layout).
    public private(set) var attributes: [GATTAttribute] = []

    /// Builds the database: the GAP service (0x1800: Device Name, Appearance), the GATT service
    /// (0x1801: Service Changed, indicate) and then `services` in order.
    public init(deviceName: String, appearance: UInt16 = 0, services: [GATTServiceDefinition]) {
        let gap = GATTServiceDefinition(uuid: .genericAccess, characteristics: [
            GATTCharacteristicDefinition(uuid: .deviceName, properties: .read, value: Array(deviceName.utf8.prefix(248))),
            GATTCharacteristicDefinition(uuid: .appearance, properties: .read, value: [UInt8(appearance & 0xFF), UInt8(appearance >> 8)]),
        ])
        let gatt = GATTServiceDefinition(uuid: .genericAttribute, characteristics: [
            GATTCharacteristicDefinition(uuid: .serviceChanged, properties: .indicate, permissions: [], value: [0x01, 0x00, 0xFF, 0xFF]),
        ])
        let all = [gap, gatt] + services
        // First pass: the handle range of every service, so includes can point forward.
        var ranges: [(start: UInt16, end: UInt16)] = []
        var next = 1
        for s in all {
            var count = 1 + s.includedServices.count
            for c in s.characteristics {
                count += 2 + c.descriptors.count + (c.properties.isDisjoint(with: [.notify, .indicate]) ? 0 : 1)
            }
            ranges.append((UInt16(truncatingIfNeeded: next), UInt16(truncatingIfNeeded: next + count - 1)))
            next += count
        }
        for (index, s) in all.enumerated() {
            let range = ranges[index]
            append(type: s.isPrimary ? .primaryService : .secondaryService, role: .serviceDeclaration,
                   permissions: .readable, value: s.uuid.littleEndianBytes, groupEnd: range.end)
            for included in s.includedServices {
                guard let target = all.firstIndex(where: { $0.uuid == included }) else { continue }
                var w = ByteWriter()
                w.write(ranges[target].start); w.write(ranges[target].end)
                if let short = included.uuid16 { w.write(short) }
                append(type: .include, role: .includeDeclaration, permissions: .readable, value: w.bytes)
            }
            for c in s.characteristics {
                let declaration = UInt16(truncatingIfNeeded: attributes.count + 1)
                let valueHandle = declaration &+ 1
                let hasCCCD = !c.properties.isDisjoint(with: [.notify, .indicate])
                let cccd: UInt16? = hasCCCD ? valueHandle &+ 1 : nil
                var w = ByteWriter()
                w.write(c.properties.rawValue); w.write(valueHandle); w.write(bytes: c.uuid.littleEndianBytes)
                append(type: .characteristicDeclaration, role: .characteristicDeclaration, permissions: .readable, value: w.bytes)
                append(type: c.uuid, role: .characteristicValue(properties: c.properties, cccd: cccd), permissions: c.permissions,
                       value: c.value, maximumLength: c.maximumLength, onRead: c.onRead, validateWrite: c.validateWrite)
                if hasCCCD {
                    append(type: .clientCharacteristicConfiguration, role: .clientConfiguration(valueHandle: valueHandle, properties: c.properties),
                           permissions: [.readable, .writable], value: [0, 0], maximumLength: 2)
                }
                for d in c.descriptors {
                    append(type: d.uuid, role: .descriptor, permissions: d.permissions, value: d.value,
                           maximumLength: d.maximumLength, onRead: d.onRead, validateWrite: d.validateWrite)
                }
            }
        }
    }

    mutating func append(type: BluetoothUUID, role: GATTAttribute.Role, permissions: GATTPermissions, value: [UInt8],
                                 maximumLength: Int = 512, groupEnd: UInt16? = nil, at handle: UInt16? = nil,
                                 onRead: GATTReadHandler? = nil, validateWrite: GATTWriteValidator? = nil) {
        attributes.append(GATTAttribute(
            handle: handle ?? UInt16(truncatingIfNeeded: attributes.count + 1), type: type, role: role, permissions: permissions,
            value: value, maximumLength: maximumLength, groupEnd: groupEnd, onRead: onRead, validateWrite: validateWrite))
    }

    /// The index in ``attributes`` of the attribute with this handle: at `handle - 1` in the
    /// default layout, else found by bisection (a placed layout may have gaps).
    private func index(of handle: UInt16) -> Int? {
        let guess = Int(handle) - 1
        if attributes.indices.contains(guess), attributes[guess].handle == handle { return guess }
        let i = firstIndex(atLeast: handle)
        return i < attributes.count && attributes[i].handle == handle ? i : nil
    }

    /// The index of the first attribute whose handle is `handle` or above (``attributes``'s
    /// count when there is none).
    private func firstIndex(atLeast handle: UInt16) -> Int {
        var lo = 0, hi = attributes.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if attributes[mid].handle < handle { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The attribute with this handle.
    public subscript(handle: UInt16) -> GATTAttribute? {
        index(of: handle).map { attributes[$0] }
    }

    /// Replaces the stored value of an attribute (no-op for an unknown handle).
    public mutating func setValue(_ value: [UInt8], at handle: UInt16) {
        if let index = index(of: handle) { attributes[index].value = value }
    }

    /// Attributes whose handles lie in `start...end` (empty when the range is inverted).
    public func attributes(in start: UInt16, _ end: UInt16) -> ArraySlice<GATTAttribute> {
        guard start <= end else { return [] }
        let lo = firstIndex(atLeast: start)
        let hi = end == .max ? attributes.count : firstIndex(atLeast: end + 1)
        guard lo < hi else { return [] }
        return attributes[lo..<hi]
    }

    /// The value handle of the first characteristic of type `uuid` (inside `service` when given).
    public func valueHandle(of uuid: BluetoothUUID, in service: BluetoothUUID? = nil) -> UInt16? {
        var currentService: BluetoothUUID?
        for a in attributes {
            if a.role == .serviceDeclaration { currentService = try? BluetoothUUID(littleEndian: a.value) }
            if case .characteristicValue = a.role, a.type == uuid, service == nil || service == currentService {
                return a.handle
            }
        }
        return nil
    }
}
