import BluetideBase
import Foundation

/// A device the user picked once, kept so an app can reconnect on its next start without
/// scanning.
public struct RememberedDevice: Sendable, Hashable, Codable {
    /// The device's address with its type.
    public var address: BluetoothAddress
    /// Its name when it was picked.
    public var name: String?
    /// What the app uses it as (free text, e.g. "heart-rate", "trainer", "ring").
    public var kind: String?
    /// When the app last saw or used it.
    public var lastSeen: Date

    /// A remembered device.
    public init(address: BluetoothAddress, name: String? = nil, kind: String? = nil, lastSeen: Date = Date()) {
        self.address = address
        self.name = name
        self.kind = kind
        self.lastSeen = lastSeen
    }

    /// A remembered device from a scan result.
    public init(_ advertisement: Advertisement, kind: String? = nil) {
        self.init(address: advertisement.address, name: advertisement.name, kind: kind, lastSeen: advertisement.lastSeen)
    }

    private enum CodingKeys: String, CodingKey { case address, addressType, name, kind, lastSeen }

    /// Decodes the JSON form (`address`, `addressType` "public"/"random", `name`, `kind`,
    /// `lastSeen` ISO 8601), naming the field at fault.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try container.decode(String.self, forKey: .address)
        let typeText = try container.decode(String.self, forKey: .addressType)
        let type: BluetoothAddress.AddressType
        switch typeText {
        case "public": type = .public
        case "random": type = .random
        default:
            throw Swift.DecodingError.dataCorruptedError(
                forKey: .addressType, in: container, debugDescription: "expected \"public\" or \"random\", found \"\(typeText)\"")
        }
        do {
            address = try BluetoothAddress(text, type: type)
        } catch {
            throw Swift.DecodingError.dataCorruptedError(
                forKey: .address, in: container, debugDescription: "expected an address like C6:C5:C4:C3:C2:C1, found \"\(text)\"")
        }
        name = try container.decodeIfPresent(String.self, forKey: .name)
        kind = try container.decodeIfPresent(String.self, forKey: .kind)
        lastSeen = try container.decode(Date.self, forKey: .lastSeen)
    }

    /// Encodes the JSON form read by ``init(from:)``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(address.string, forKey: .address)
        try container.encode(address.type == .random ? "random" : "public", forKey: .addressType)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encodeIfPresent(kind, forKey: .kind)
        try container.encode(lastSeen, forKey: .lastSeen)
    }
}

/// Why the remembered-devices file could not be read or written: the path, and for a corrupt
/// file the line and field at fault.
public struct RememberedDevicesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// 1-based line of the problem, when known.
    public var line: Int?
    /// The field at fault, e.g. `devices[1].address`, when known.
    public var field: String?
    /// What is wrong.
    public var reason: String

    /// `path:line: field: reason`, with a hint.
    public var description: String {
        var text = path
        if let line { text += ":\(line)" }
        text += ": "
        if let field { text += "\(field): " }
        return text + reason + " (fix or delete the file to start over)"
    }
}

/// A small JSON file of ``RememberedDevice``s in the user's data directory:
/// `$XDG_DATA_HOME/bluetide/devices.json`, else `~/.local/share/bluetide/devices.json`.
/// Writes are atomic (a temporary file renamed over the old one), so a crash never leaves half a
/// file. Not meant for concurrent writers in several processes.
public struct RememberedDevices: Sendable {
    /// The file.
    public let url: URL

    /// The store at `url`, or at the default location (``defaultURL(environment:)``).
    public init(url: URL? = nil) {
        self.url = url ?? Self.defaultURL()
    }

    /// `$XDG_DATA_HOME/bluetide/devices.json` when XDG_DATA_HOME is set (and absolute), else
    /// `$HOME/.local/share/bluetide/devices.json`.
    public static func defaultURL(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let base: URL
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            let home = environment["HOME"] ?? NSHomeDirectory()
            base = URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".local/share", isDirectory: true)
        }
        return base.appendingPathComponent("bluetide", isDirectory: true).appendingPathComponent("devices.json")
    }

    private struct File: Codable {
        var version: Int
        var devices: [RememberedDevice]
    }

    /// The remembered devices, most recently seen first; none when the file does not exist.
    /// Throws ``RememberedDevicesError`` naming the line and field of a corrupt file.
    public func load() throws -> [RememberedDevice] {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            if !FileManager.default.fileExists(atPath: url.path) { return [] }
            throw RememberedDevicesError(path: url.path, line: nil, field: nil, reason: "cannot read: \(error.localizedDescription)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            let file = try decoder.decode(File.self, from: data)
            guard file.version == 1 else {
                throw RememberedDevicesError(
                    path: url.path, line: Self.line(ofKey: "version", occurrence: 0, in: data), field: "version",
                    reason: "expected version 1, found \(file.version)")
            }
            return file.devices.sorted { $0.lastSeen > $1.lastSeen }
        } catch let error as RememberedDevicesError {
            throw error
        } catch let error as Swift.DecodingError {
            throw describe(error, data: data)
        }
    }

    /// Replaces the file's contents with `devices` (atomically), creating the directory.
    public func save(_ devices: [RememberedDevice]) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            let data = try encoder.encode(File(version: 1, devices: devices))
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url, options: .atomic)
        } catch {
            throw RememberedDevicesError(path: url.path, line: nil, field: nil, reason: "cannot write: \(error.localizedDescription)")
        }
    }

    /// Adds `device`, or updates the entry with the same address (name, kind and last seen).
    public func remember(_ device: RememberedDevice) throws {
        var devices = try load()
        devices.removeAll { $0.address == device.address }
        devices.insert(device, at: 0)
        try save(devices)
    }

    /// Removes the device with `address`; returns whether it was there.
    @discardableResult
    public func forget(_ address: BluetoothAddress) throws -> Bool {
        var devices = try load()
        let before = devices.count
        devices.removeAll { $0.address == address }
        guard devices.count != before else { return false }
        try save(devices)
        return true
    }

    // MARK: Error reports

    private func describe(_ error: Swift.DecodingError, data: Data) -> RememberedDevicesError {
        let (context, reason): (Swift.DecodingError.Context, String) = switch error {
        case let .dataCorrupted(c): (c, c.debugDescription)
        case let .keyNotFound(key, c): (
            Swift.DecodingError.Context(codingPath: c.codingPath + [key], debugDescription: c.debugDescription),
            "missing (required)")
        case let .typeMismatch(type, c): (c, "expected \(Self.jsonName(of: type))")
        case let .valueNotFound(type, c): (c, "expected \(Self.jsonName(of: type)), found null")
        @unknown default: (Swift.DecodingError.Context(codingPath: [], debugDescription: "\(error)"), "\(error)")
        }
        let path = context.codingPath
        guard !path.isEmpty else {
            // Not JSON at all: the parser's message carries the position.
            let underlying = context.underlyingError.map { "\($0.localizedDescription)" } ?? reason
            return RememberedDevicesError(
                path: url.path, line: Self.lineOfSyntaxError(context.underlyingError), field: nil,
                reason: "not valid JSON: \(underlying)")
        }
        var field = ""
        var deviceIndex: Int?
        for key in path {
            if let index = key.intValue {
                field += "[\(index)]"
                deviceIndex = index
            } else {
                field += field.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        let line = path.last.flatMap { key -> Int? in
            guard key.intValue == nil else { return nil }
            return Self.line(ofKey: key.stringValue, occurrence: deviceIndex ?? 0, in: data)
        }
        return RememberedDevicesError(path: url.path, line: line, field: field, reason: reason)
    }

    private static func jsonName(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type: "a number"
        case is Date.Type: "an ISO 8601 date like 2026-01-31T12:00:00Z"
        default: "\(type)"
        }
    }

    /// The line of the `occurrence`-th (0-based) `"key":` in the file, or nil.
    static func line(ofKey key: String, occurrence: Int, in data: Data) -> Int? {
        guard let text = String(data: data, encoding: .utf8) else { return nil }
        var seen = 0
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where line.contains("\"\(key)\"") {
            if seen == occurrence { return number + 1 }
            seen += 1
        }
        return nil
    }

    private static func lineOfSyntaxError(_ error: (any Error)?) -> Int? {
        guard let text = error.map({ "\($0)" }), let range = text.range(of: "line ") else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }
}
