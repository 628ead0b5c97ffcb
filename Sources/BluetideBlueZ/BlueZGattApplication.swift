import Bluetide
import BluetideDBus

/// The services a ``Peripheral`` serves, laid out as BlueZ's GATT application object tree
/// (`org.bluez.GattService1`, `GattCharacteristic1`, `GattDescriptor1` under one root that
/// answers `org.freedesktop.DBus.ObjectManager.GetManagedObjects`), and the mappings between
/// Bluetide's declarations and BlueZ's: properties and security to `Flags`, ATT errors to
/// `org.bluez.Error.*`. Pure values: no bus.
struct BlueZGattApplication: Sendable {
    /// One exported characteristic: where it is and what it serves.
    struct Characteristic: Sendable {
        let path: String
        let servicePath: String
        let served: PeripheralBackendCharacteristic
    }

    /// One exported descriptor (a fixed value, e.g. the user description).
    struct Descriptor: Sendable {
        let path: String
        let characteristicPath: String
        let uuid: BluetoothUUID
        let permissions: GATTPermissions
        let value: [UInt8]
    }

    /// The application's root path (given to `RegisterApplication`).
    let root: String
    let services: [(path: String, uuid: BluetoothUUID, isPrimary: Bool)]
    let characteristics: [Characteristic]
    let descriptors: [Descriptor]

    init(root: String, services served: [PeripheralBackendService]) {
        self.root = root
        var services: [(String, BluetoothUUID, Bool)] = []
        var characteristics: [Characteristic] = []
        var descriptors: [Descriptor] = []
        for (s, service) in served.enumerated() {
            let servicePath = "\(root)/service\(s)"
            services.append((servicePath, service.uuid, service.isPrimary))
            for (c, characteristic) in service.characteristics.enumerated() {
                let path = "\(servicePath)/char\(c)"
                characteristics.append(Characteristic(path: path, servicePath: servicePath, served: characteristic))
                // BlueZ adds the CCCD (and the extended properties descriptor) itself.
                for (d, descriptor) in characteristic.descriptors.enumerated()
                where descriptor.uuid != BluetoothUUID(0x2902) && descriptor.uuid != BluetoothUUID(0x2900) {
                    descriptors.append(Descriptor(
                        path: "\(path)/desc\(d)", characteristicPath: path, uuid: descriptor.uuid,
                        permissions: descriptor.permissions, value: descriptor.value))
                }
            }
        }
        self.services = services
        self.characteristics = characteristics
        self.descriptors = descriptors
    }

    /// The characteristic at `path`.
    func characteristic(at path: String) -> Characteristic? { characteristics.first { $0.path == path } }
    /// The characteristic serving `value`.
    func characteristic(for value: ServedValue) -> Characteristic? { characteristics.first { $0.served.value == value } }
    func descriptor(at path: String) -> Descriptor? { descriptors.first { $0.path == path } }

    /// BlueZ's UUID text: lower case, 128 bits.
    static func uuidText(_ uuid: BluetoothUUID) -> String { uuid.uuidString.lowercased() }

    /// A characteristic's `Flags`: its properties, and its permissions' security —
    /// `.encrypted` as `encrypt-read`/`encrypt-write` (and `encrypt-notify`/`encrypt-indicate`
    /// on a value that can only be read encrypted), `.authenticated` as the
    /// `encrypt-authenticated-*` flags, `.authorized` as `authorize` (BlueZ then asks the
    /// application before each access).
    static func flags(properties: GATTCharacteristicProperties, permissions: GATTPermissions) -> [String] {
        var flags: [String] = []
        if properties.contains(.broadcast) { flags.append("broadcast") }
        let readAuthenticated = permissions.contains(.readAuthenticated)
        let readEncrypted = permissions.contains(.readEncrypted) && !readAuthenticated
        if properties.contains(.read) {
            flags.append(readAuthenticated ? "encrypt-authenticated-read" : readEncrypted ? "encrypt-read" : "read")
        }
        let writeAuthenticated = permissions.contains(.writeAuthenticated)
        let writeEncrypted = permissions.contains(.writeEncrypted) && !writeAuthenticated
        let securedWrite = writeAuthenticated ? "encrypt-authenticated-write" : writeEncrypted ? "encrypt-write" : nil
        if properties.contains(.writeWithoutResponse) { flags.append("write-without-response") }
        if properties.contains(.write) { flags.append(securedWrite ?? "write") }
        if properties.contains(.writeWithoutResponse), !properties.contains(.write), let securedWrite { flags.append(securedWrite) }
        if properties.contains(.authenticatedSignedWrites) { flags.append("authenticated-signed-writes") }
        // Notifications of a value that needs security to read need the same security.
        let notifySecurity = readAuthenticated ? "encrypt-authenticated-" : readEncrypted ? "encrypt-" : ""
        if properties.contains(.notify) { flags.append(notifySecurity + "notify") }
        if properties.contains(.indicate) { flags.append(notifySecurity + "indicate") }
        if !permissions.isDisjoint(with: [.readAuthorized, .writeAuthorized]) { flags.append("authorize") }
        return flags
    }

    /// A descriptor's `Flags` from its permissions.
    static func descriptorFlags(_ permissions: GATTPermissions) -> [String] {
        var flags: [String] = []
        if permissions.contains(.readable) {
            flags.append(permissions.contains(.readAuthenticated) ? "encrypt-authenticated-read"
                : permissions.contains(.readEncrypted) ? "encrypt-read" : "read")
        }
        if permissions.contains(.writable) {
            flags.append(permissions.contains(.writeAuthenticated) ? "encrypt-authenticated-write"
                : permissions.contains(.writeEncrypted) ? "encrypt-write" : "write")
        }
        return flags
    }

    /// The D-Bus error BlueZ turns back into `code` on the air, as far as it can: BlueZ maps
    /// `InvalidValueLength` (0x0D), `InvalidOffset` (0x07), `NotAuthorized` (0x08),
    /// `NotSupported` (0x06) and `NotPermitted` (read or write not permitted) to their ATT
    /// errors and `Failed` to application error 0x80 — every other application error (0x81…)
    /// reaches the central as 0x80 (the message keeps the code).
    static func error(for code: ATTErrorCode) -> DBusError {
        let text = "ATT error \(code)"
        switch code.rawValue {
        case 0x0D: return DBusError(text, name: "org.bluez.Error.InvalidValueLength")
        case 0x07: return DBusError(text, name: "org.bluez.Error.InvalidOffset")
        case 0x08: return DBusError(text, name: "org.bluez.Error.NotAuthorized")
        case 0x06: return DBusError(text, name: "org.bluez.Error.NotSupported")
        case 0x02, 0x03, 0x05, 0x0F: return DBusError(text, name: "org.bluez.Error.NotPermitted")
        default: return DBusError(text, name: "org.bluez.Error.Failed")
        }
    }

    /// The interfaces and properties of the object at `path`, nil when there is none.
    func interfaces(at path: String) -> [String: [String: DBusValue]]? {
        if let service = services.first(where: { $0.path == path }) {
            return [BlueZ.serviceInterface: ["UUID": .string(Self.uuidText(service.uuid)), "Primary": .boolean(service.isPrimary)]]
        }
        if let characteristic = characteristic(at: path) {
            let served = characteristic.served
            return [BlueZ.characteristicInterface: [
                "UUID": .string(Self.uuidText(served.uuid)),
                "Service": .objectPath(characteristic.servicePath),
                "Flags": .strings(Self.flags(properties: served.properties, permissions: served.permissions)),
            ]]
        }
        if let descriptor = descriptor(at: path) {
            return [BlueZ.descriptorInterface: [
                "UUID": .string(Self.uuidText(descriptor.uuid)),
                "Characteristic": .objectPath(descriptor.characteristicPath),
                "Flags": .strings(Self.descriptorFlags(descriptor.permissions)),
            ]]
        }
        return nil
    }

    /// Every object of the tree: `GetManagedObjects`'s `a{oa{sa{sv}}}`.
    var managedObjects: DBusValue {
        let paths = services.map(\.path) + characteristics.map(\.path) + descriptors.map(\.path)
        return .dictionary(key: "o", value: "a{sa{sv}}", paths.compactMap { path in
            interfaces(at: path).map { interfaces in
                DBusDictionaryEntry(key: .objectPath(path), value: .dictionary(key: "s", value: "a{sv}", interfaces.keys.sorted().map {
                    DBusDictionaryEntry(key: .string($0), value: .dictionary(interfaces[$0]!))
                }))
            }
        })
    }
}

/// What BlueZ's `LEAdvertisement1` says, read from advertising data laid out for the own host:
/// the fields BlueZ builds packets from (it adds the flags itself and places the fields).
struct BlueZAdvertisement: Sendable, Equatable {
    var localName: String?
    var serviceUUIDs: [BluetoothUUID] = []
    var manufacturerData: [UInt16: [UInt8]] = [:]
    var serviceData: [BluetoothUUID: [UInt8]] = [:]
    var appearance: UInt16?
    /// Milliseconds between advertising events.
    var intervalMilliseconds: Double = 100

    init(_ advertising: AdvertisingData, scanResponse: AdvertisingData?, intervalMilliseconds: Double) {
        self.intervalMilliseconds = intervalMilliseconds
        for element in advertising.elements + (scanResponse?.elements ?? []) {
            switch element {
            case let .completeLocalName(name), let .shortenedLocalName(name):
                if localName == nil { localName = name }
            case let .serviceUUIDs(uuids, _, _):
                for uuid in uuids where !serviceUUIDs.contains(uuid) { serviceUUIDs.append(uuid) }
            case let .manufacturerSpecificData(company, data):
                manufacturerData[company] = data
            case let .serviceData(uuid, _, data):
                serviceData[uuid] = data
            case let .appearance(value):
                appearance = value
            default:
                break
            }
        }
    }

    /// The `LEAdvertisement1` properties.
    var properties: [String: DBusValue] {
        var properties: [String: DBusValue] = ["Type": .string("peripheral"), "Discoverable": .boolean(true)]
        if let localName { properties["LocalName"] = .string(localName) }
        if !serviceUUIDs.isEmpty { properties["ServiceUUIDs"] = .strings(serviceUUIDs.map(BlueZGattApplication.uuidText)) }
        if !manufacturerData.isEmpty {
            properties["ManufacturerData"] = .dictionary(key: "q", value: "v", manufacturerData.keys.sorted().map {
                DBusDictionaryEntry(key: .uint16($0), value: .variant(.bytes(manufacturerData[$0]!)))
            })
        }
        if !serviceData.isEmpty {
            properties["ServiceData"] = .dictionary(key: "s", value: "v", serviceData.keys.sorted { $0.description < $1.description }.map {
                DBusDictionaryEntry(key: .string(BlueZGattApplication.uuidText($0)), value: .variant(.bytes(serviceData[$0]!)))
            })
        }
        if let appearance { properties["Appearance"] = .uint16(appearance) }
        let interval = UInt32(min(max(intervalMilliseconds, 20), 10_240).rounded())
        properties["MinInterval"] = .uint32(interval)
        properties["MaxInterval"] = .uint32(interval)
        return properties
    }
}
