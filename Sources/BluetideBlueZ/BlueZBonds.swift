import Bluetide
import BluetideDBus
import Foundation

/// What bluetoothd's key store says of one device's Long Term Key
/// (`/var/lib/bluetooth/ADAPTER/DEVICE/info`, readable by root only): the security level a link
/// encrypted with it gets, exactly, which BlueZ's D-Bus API does not tell.
public struct BlueZKeyInfo: Sendable, Equatable {
    /// The level of a link encrypted with the key.
    public var securityLevel: SecurityLevel
    /// Whether the key comes from LE Secure Connections.
    public var secureConnections: Bool
    /// The key size, octets.
    public var keySize: Int

    /// Reads the key of `device` paired through `adapter` (addresses as BlueZ writes them,
    /// `C0:00:00:00:00:01`); nil when there is none or the file cannot be read (not root).
    public static func read(adapter: String, device: String, root: String = "/var/lib/bluetooth") -> BlueZKeyInfo? {
        guard let data = FileManager.default.contents(atPath: "\(root)/\(adapter.uppercased())/\(device.uppercased())/info") else { return nil }
        return parse(String(decoding: data, as: UTF8.self))
    }

    /// The strongest LTK in an `info` file's text. bluetoothd keeps the kernel's key type in
    /// `Authenticated` (0 unauthenticated legacy, 1 authenticated legacy, 2 unauthenticated
    /// Secure Connections, 3 authenticated Secure Connections, 4 debug) and the size in `EncSize`.
    public static func parse(_ text: String) -> BlueZKeyInfo? {
        var group = ""
        var groups: [String: [String: String]] = [:]
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("["), line.hasSuffix("]") {
                group = String(line.dropFirst().dropLast())
            } else if let equals = line.firstIndex(of: "=") {
                groups[group, default: [:]][String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
        }
        let keys = groups.filter { $0.key.hasSuffix("LongTermKey") && $0.value["Key"] != nil }.values.compactMap { entries -> BlueZKeyInfo? in
            guard let type = entries["Authenticated"].flatMap({ Int($0) }) else { return nil }
            let size = entries["EncSize"].flatMap { Int($0) } ?? 16
            let level: SecurityLevel = switch type {
            case 1: .authenticated
            case 3: size == 16 ? .authenticatedSecureConnections : .authenticated
            default: .encrypted
            }
            return BlueZKeyInfo(securityLevel: level, secureConnections: type >= 2, keySize: size)
        }
        return keys.max { $0.securityLevel < $1.securityLevel }
    }
}

/// A device bluetoothd keeps keys for (`org.bluez.Device1` with `Paired` or `Bonded`): what
/// `bluetide bonds list --transport bluez` shows.
public struct BlueZBond: Sendable, Equatable {
    /// The device's object path.
    public var path: String
    public var address: BluetoothAddress
    public var name: String?
    /// Paired: keys were made (this connection or before).
    public var paired: Bool
    /// Bonded: the keys are stored, so a reconnect encrypts without pairing.
    public var bonded: Bool
    public var trusted: Bool
    public var connected: Bool
    /// From the key store when this process may read it (root), else nil.
    public var key: BlueZKeyInfo?
}

extension BlueZ {
    /// The adapter named `name` (`hci1`), else the first one; throws one line when there is none.
    public func adapter(named name: String?) async throws -> BlueZAdapter {
        let adapters = try await adapters()
        guard let adapter = name.map({ name in adapters.first { $0.name == name } }) ?? adapters.first else {
            let known = adapters.map(\.name).joined(separator: ", ")
            throw BlueZBackendError(name.map { "bluetoothd has no adapter \($0)" + (known.isEmpty ? "" : " (it has \(known))") }
                ?? "bluetoothd has no adapter: plug one in, or use the virtual controller (bluetide demo)")
        }
        return adapter
    }

    /// The devices of `adapter` that are paired or bonded, by address.
    public func bonds(of adapter: BlueZAdapter) async throws -> [BlueZBond] {
        let objects = try await managedObjects().objects
        return objects.compactMap { path, interfaces -> BlueZBond? in
            guard path.hasPrefix(adapter.path + "/"), let device = interfaces[BlueZ.deviceInterface],
                  let address = bluetideAddress(device["Address"]?.string, type: device["AddressType"]?.string) else { return nil }
            let paired = device["Paired"]?.bool ?? false
            let bonded = device["Bonded"]?.bool ?? false
            guard paired || bonded else { return nil }
            let key = adapter.address.flatMap { BlueZKeyInfo.read(adapter: $0, device: device["Address"]?.string ?? "") }
            return BlueZBond(
                path: path, address: address, name: device["Alias"]?.string ?? device["Name"]?.string, paired: paired,
                bonded: bonded, trusted: device["Trusted"]?.bool ?? false, connected: device["Connected"]?.bool ?? false, key: key)
        }.sorted { $0.address.description < $1.address.description }
    }

    /// Forgets `address` on `adapter` (`Adapter1.RemoveDevice`: its keys and cached services;
    /// a connected device is disconnected). False when bluetoothd does not know it.
    public func removeDevice(_ address: BluetoothAddress, from adapter: BlueZAdapter) async throws -> Bool {
        let path = devicePath(adapter: adapter.path, address: address)
        guard try await managedObjects().objects[path]?[BlueZ.deviceInterface] != nil else { return false }
        _ = try await bus.call(
            destination: BlueZ.service, path: adapter.path, interface: BlueZ.adapterInterface, member: "RemoveDevice",
            arguments: [.objectPath(path)], timeout: .seconds(10))
        return true
    }
}
