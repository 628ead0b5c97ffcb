import BluetideDBus

/// BlueZ's D-Bus API (`org.bluez` on the system bus) as Bluetide uses it: the adapters and
/// devices from `ObjectManager`, their properties, and the calls the BlueZ backend makes.
/// Everything else about D-Bus is ``DBusConnection``'s.
public final class BlueZ: Sendable {
    /// BlueZ's bus name.
    public static let service = "org.bluez"
    public static let adapterInterface = "org.bluez.Adapter1"
    public static let deviceInterface = "org.bluez.Device1"
    public static let serviceInterface = "org.bluez.GattService1"
    public static let characteristicInterface = "org.bluez.GattCharacteristic1"
    public static let descriptorInterface = "org.bluez.GattDescriptor1"

    /// The bus connection (the system bus unless told otherwise).
    public let bus: DBusConnection

    public init(bus: DBusConnection) { self.bus = bus }

    /// Connects to `bus` (default: the system bus, where bluetoothd lives).
    public static func connect(_ bus: DBusConnection.Bus = .system) async throws -> BlueZ {
        BlueZ(bus: try await DBusConnection.open(bus))
    }

    public func close() async { await bus.close() }

    /// Whether bluetoothd owns `org.bluez` on the bus now.
    public func isRunning(timeout: Duration = .seconds(5)) async throws -> Bool {
        let reply = try await bus.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "NameHasOwner", arguments: [.string(Self.service)], timeout: timeout)
        return reply.first?.bool ?? false
    }

    /// Every object BlueZ exports, with its interfaces and their properties.
    public func managedObjects(timeout: Duration = .seconds(10)) async throws -> BlueZObjects {
        let reply = try await bus.call(
            destination: Self.service, path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects",
            timeout: timeout)
        return BlueZObjects(reply.first ?? .dictionary([:]))
    }

    /// The adapters bluetoothd manages, by index.
    public func adapters(timeout: Duration = .seconds(10)) async throws -> [BlueZAdapter] {
        try await managedObjects(timeout: timeout).adapters
    }
}

/// A snapshot of BlueZ's objects: path → interface → property → value.
public struct BlueZObjects: Sendable {
    public var objects: [String: [String: [String: DBusValue]]]

    public init(objects: [String: [String: [String: DBusValue]]]) { self.objects = objects }

    /// Reads `GetManagedObjects`'s `a{oa{sa{sv}}}`.
    public init(_ value: DBusValue) {
        var objects: [String: [String: [String: DBusValue]]] = [:]
        for (path, interfaces) in value.dictionary ?? [:] {
            var byInterface: [String: [String: DBusValue]] = [:]
            for (interface, properties) in interfaces.dictionary ?? [:] {
                byInterface[interface] = (properties.dictionary ?? [:]).mapValues(\.unwrapped)
            }
            objects[path] = byInterface
        }
        self.objects = objects
    }

    /// The adapters (objects with `org.bluez.Adapter1`), by index.
    public var adapters: [BlueZAdapter] {
        objects.compactMap { path, interfaces in
            interfaces[BlueZ.adapterInterface].map { BlueZAdapter(path: path, properties: $0) }
        }.sorted { ($0.index ?? .max, $0.path) < ($1.index ?? .max, $1.path) }
    }
}

/// One adapter as bluetoothd reports it (`org.bluez.Adapter1`).
public struct BlueZAdapter: Sendable, Equatable {
    /// The object path, `/org/bluez/hci0`.
    public var path: String
    /// The kernel's name, `hci0`.
    public var name: String
    /// The adapter's address, `00:11:22:33:44:55`.
    public var address: String?
    /// `public` or `random`.
    public var addressType: String?
    public var powered: Bool
    public var discovering: Bool
    public var alias: String?
    /// `usb:v1D6Bp0246d0542`: BlueZ's device ID, whose last part is its version.
    public var modalias: String?

    public init(path: String, properties: [String: DBusValue]) {
        self.path = path
        self.name = String(path.split(separator: "/").last ?? "")
        self.address = properties["Address"]?.string
        self.addressType = properties["AddressType"]?.string
        self.powered = properties["Powered"]?.bool ?? false
        self.discovering = properties["Discovering"]?.bool ?? false
        self.alias = properties["Alias"]?.string
        self.modalias = properties["Modalias"]?.string
    }

    /// The number in `hciN`.
    public var index: Int? {
        guard name.hasPrefix("hci") else { return nil }
        return Int(name.dropFirst(3))
    }

    /// BlueZ's version from the adapter's device ID (`usb:v1D6Bp0246d0542` → `5.66`: the Linux
    /// Foundation's vendor id, BlueZ's product id, the version as major·256 + minor), nil when
    /// the ID is another one.
    public var bluezVersion: String? { Self.bluezVersion(fromModalias: modalias) }

    static func bluezVersion(fromModalias modalias: String?) -> String? {
        guard let modalias, let d = modalias.lastIndex(of: "d") else { return nil }
        let head = modalias[..<d].lowercased()
        guard head.hasSuffix("v1d6bp0246"), let value = UInt16(modalias[modalias.index(after: d)...], radix: 16) else { return nil }
        return "\(value >> 8).\(value & 0xFF)"
    }
}
