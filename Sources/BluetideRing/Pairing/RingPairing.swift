import Bluetide
import Foundation

/// The ring picked with `bluetide ring pair`: which device, and how to reach it (transport and,
/// for an emulated ring, the emulation spec), so later commands connect by themselves.
public struct RingPairing: Sendable, Hashable, Codable {
    /// The ring's address (with its type).
    public var address: BluetoothAddress
    /// Its advertised name, e.g. `R02_341C`.
    public var name: String?
    /// The transport it was found on, e.g. `virtual`, `hci:0`, `tcp-client:127.0.0.1:9000`.
    public var transport: String
    /// The `--emulate` spec that started it, when it is an emulated ring.
    public var emulate: String?
    /// When it was picked.
    public var pairedAt: Date

    public init(address: BluetoothAddress, name: String?, transport: String, emulate: String?, pairedAt: Date) {
        self.address = address
        self.name = name
        self.transport = transport
        self.emulate = emulate
        self.pairedAt = pairedAt
    }

    /// `R02_341C (C0:…/R)` style label.
    public var label: String { name.map { "\($0) (\(address))" } ?? "\(address)" }

    private enum CodingKeys: String, CodingKey { case address, addressType, name, transport, emulate, pairedAt }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let text = try c.decode(String.self, forKey: .address)
        let type: BluetoothAddress.AddressType = try c.decode(String.self, forKey: .addressType) == "public" ? .public : .random
        guard let address = try? BluetoothAddress(text, type: type) else {
            throw Swift.DecodingError.dataCorruptedError(forKey: .address, in: c, debugDescription: "not a Bluetooth address: \(text)")
        }
        self.address = address
        name = try c.decodeIfPresent(String.self, forKey: .name)
        transport = try c.decode(String.self, forKey: .transport)
        emulate = try c.decodeIfPresent(String.self, forKey: .emulate)
        pairedAt = try c.decode(Date.self, forKey: .pairedAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(address.string, forKey: .address)
        try c.encode(address.type == .public ? "public" : "random", forKey: .addressType)
        try c.encodeIfPresent(name, forKey: .name)
        try c.encode(transport, forKey: .transport)
        try c.encodeIfPresent(emulate, forKey: .emulate)
        try c.encode(pairedAt, forKey: .pairedAt)
    }
}

/// Where the picked ring is remembered: a small JSON file,
/// `$XDG_DATA_HOME/bluetide/ring.json` (else `~/.local/share/bluetide/ring.json`), written atomically.
public struct RingPairingFile: Sendable {
    /// The file.
    public let url: URL

    public init(url: URL? = nil) {
        self.url = url ?? RememberedDevices.defaultURL().deletingLastPathComponent().appendingPathComponent("ring.json")
    }

    /// The remembered ring, nil when none. A corrupt file throws naming it.
    public func load() throws -> RingPairing? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do { return try decoder.decode(RingPairing.self, from: Data(contentsOf: url)) } catch {
            throw RingPairingError("\(url.path) is not a remembered ring (\(error)); run `bluetide ring forget` then `bluetide ring pair`")
        }
    }

    /// Remembers `pairing` (replacing any earlier ring).
    public func save(_ pairing: RingPairing) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try encoder.encode(pairing).write(to: url, options: .atomic)
        } catch {
            throw RingPairingError("cannot write \(url.path): \(error.localizedDescription)")
        }
    }

    /// Forgets the ring; returns whether one was remembered.
    @discardableResult
    public func forget() throws -> Bool {
        guard FileManager.default.fileExists(atPath: url.path) else { return false }
        do { try FileManager.default.removeItem(at: url) } catch {
            throw RingPairingError("cannot remove \(url.path): \(error.localizedDescription)")
        }
        return true
    }
}

/// A remembered-ring file problem, one line.
public struct RingPairingError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
