import Bluetide
import Foundation

/// The ring picked with `bluetide ring pair`: which device, and how to reach it (transport and,
/// for an emulated ring, the emulation spec), so later commands connect by themselves.
public struct RingPairing: Sendable, Hashable, Codable {
    /// The ring: address with its type, advertised name (e.g. `R02_341C`), kind `colmi-ring`,
    /// and when it was picked (as `lastSeen`).
    public var device: RememberedDevice
    /// The transport it was found on, e.g. `virtual`, `hci-socket:0`, `tcp-client:127.0.0.1:9000`.
    public var transport: String
    /// The `--emulate` spec that started it, when it is an emulated ring.
    public var emulate: String?

    public init(address: BluetoothAddress, name: String?, transport: String, emulate: String?, pairedAt: Date) {
        device = RememberedDevice(address: address, name: name, kind: "colmi-ring", lastSeen: pairedAt)
        self.transport = transport
        self.emulate = emulate
    }

    /// The ring's address.
    public var address: BluetoothAddress { device.address }
    /// Its advertised name.
    public var name: String? { device.name }
    /// `R02_341C (C0:…/R)` style label.
    public var label: String { name.map { "\($0) (\(address))" } ?? "\(address)" }
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
