import Foundation
import BluetideSupport

/// Which device ``Central/find(_:within:round:)`` looks for: every criterion given must hold.
/// The usual way to make one is ``init(parsing:)`` from what a user typed: a name or an address.
public struct DeviceQuery: Sendable, Hashable, CustomStringConvertible {
    /// The advertised name, whole (see ``ignoresNameCase``).
    public var name: String?
    /// Whether ``name`` is compared ignoring case.
    public var ignoresNameCase: Bool
    /// The device's address; compared by its 48 bits (a random and a public address with the
    /// same bits match: a user rarely knows the type).
    public var address: BluetoothAddress?
    /// Whether ``address`` was given with its type (`/P` or `/R`): it can be connected to
    /// without a scan.
    public var addressHasType: Bool
    /// The advertised name starts with this text.
    public var namePrefix: String?
    /// Services of which the device must advertise at least one (empty: any device).
    public var services: [BluetoothUUID]
    /// Weakest signal accepted, dBm: a weaker advertisement of the device does not count (the
    /// device may come closer during the search).
    public var minimumRSSI: Int?

    /// A query of the criteria given (none: any device).
    public init(
        name: String? = nil, ignoresNameCase: Bool = false, address: BluetoothAddress? = nil, addressHasType: Bool = false,
        namePrefix: String? = nil, services: [BluetoothUUID] = [], minimumRSSI: Int? = nil
    ) {
        self.name = name
        self.ignoresNameCase = ignoresNameCase
        self.address = address
        self.addressHasType = addressHasType
        self.namePrefix = namePrefix
        self.services = services
        self.minimumRSSI = minimumRSSI
    }

    /// Reads a user's device text: `AA:BB:CC:DD:EE:FF` (an address, any type),
    /// `AA:BB:CC:DD:EE:FF/P` or `/R` (an address of that type), else an advertised name.
    /// Surrounding spaces are ignored.
    public init(parsing text: String) {
        self.init()
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let upper = trimmed.uppercased()
        if upper.hasSuffix("/P") || upper.hasSuffix("/R"),
           let typed = try? BluetoothAddress(String(trimmed.dropLast(2)), type: upper.hasSuffix("/P") ? .public : .random) {
            address = typed
            addressHasType = true
        } else if let plain = try? BluetoothAddress(trimmed, type: .random) {
            address = plain
        } else {
            name = trimmed
        }
    }

    /// The address to connect to without a scan: one given with its type.
    public var typedAddress: BluetoothAddress? { addressHasType ? address : nil }

    /// Whether `advertisement` is a device this query means (the RSSI bound aside, see ``isStrongEnough(_:)``).
    public func matches(_ advertisement: Advertisement) -> Bool {
        if let address, advertisement.address.value != address.value { return false }
        if let name {
            guard let advertised = advertisement.name else { return false }
            if ignoresNameCase ? advertised.lowercased() != name.lowercased() : advertised != name { return false }
        }
        if let namePrefix, !(advertisement.name?.hasPrefix(namePrefix) ?? false) { return false }
        if !services.isEmpty, !services.contains(where: advertisement.serviceUUIDs.contains) { return false }
        return true
    }

    /// Whether `advertisement` is at least as strong as ``minimumRSSI``.
    public func isStrongEnough(_ advertisement: Advertisement) -> Bool {
        minimumRSSI.map { advertisement.rssi >= $0 } ?? true
    }

    /// What is looked for, in words: `named Robot1`, `at C0:FF:EE:00:00:01`, `named "Punch…" with service 1234`.
    public var description: String {
        var parts: [String] = []
        if let name { parts.append("named \(name)") }
        if let address { parts.append("at \(address)") }
        if let namePrefix { parts.append("named \"\(namePrefix)…\"") }
        if !services.isEmpty { parts.append("with service " + services.map { "\($0)" }.joined(separator: " or ")) }
        if let minimumRSSI { parts.append("at \(minimumRSSI) dBm or stronger") }
        return parts.isEmpty ? "at all" : parts.joined(separator: " ")
    }
}

/// No device matching a query was seen in time: what was looked for, for how long, and what was seen.
public struct DeviceNotFound: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was looked for.
    public var query: DeviceQuery
    /// How long the search lasted, seconds.
    public var seconds: Double
    /// The devices seen meanwhile, once each (their first advertisement), in the order first seen.
    public var seenDevices: [Advertisement]

    public init(query: DeviceQuery, seconds: Double, seenDevices: [Advertisement]) {
        self.query = query
        self.seconds = seconds
        self.seenDevices = seenDevices
    }

    /// The devices seen as labels, each once: the name, else the address; one that matches the
    /// query but was too weak with its RSSI (`Robot1 (-80 dBm)`).
    public var seen: [String] {
        var labels: [String] = []
        for advertisement in seenDevices {
            var label = advertisement.name ?? "\(advertisement.address)"
            if query.matches(advertisement), !query.isStrongEnough(advertisement) { label += " (\(advertisement.rssi) dBm)" }
            if !labels.contains(label) { labels.append(label) }
        }
        return labels
    }

    /// `no device named Robot9 seen within 1 s; seen: HMSoft`.
    public var description: String {
        "no device \(query) seen within \(Self.format(seconds)) s; "
            + (seen.isEmpty ? "no devices were seen at all: is the transport right, is the device on?" : "seen: \(seen.joined(separator: ", "))")
    }

    /// Whole seconds without a fraction (`1`, `2.5`).
    public static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

extension Central {
    /// Finds the device `query` means within `timeout`: the first matching advertisement, or
    /// with `round` the strongest match of the first round (of that length) that has one — for
    /// "the nearest trainer". Throws ``DeviceNotFound`` naming the query and the devices seen,
    /// or the scan's error (a closed stack, an adapter that cannot scan).
    public func find(_ query: DeviceQuery, within timeout: Duration, round: Duration? = nil) async throws -> Advertisement {
        var seen = SeenDevices()
        if let round, round > .zero {
            var elapsed = Duration.zero
            while elapsed < timeout {
                let length = min(round, timeout - elapsed)
                let found = try await discover(filter: ScanFilter(), timeout: length)
                elapsed += length
                for advertisement in found { seen.note(advertisement) }
                if let pick = found.first(where: { query.matches($0) && query.isStrongEnough($0) }) { return pick }
                try Task.checkCancellation()
            }
        } else {
            var filter = ScanFilter()
            filter.allowDuplicates = query.minimumRSSI != nil  // a device may come closer during the search
            for await advertisement in try await scan(filter: filter, timeout: timeout) {
                if query.matches(advertisement), query.isStrongEnough(advertisement) { return advertisement }
                seen.note(advertisement)
            }
            try Task.checkCancellation()
        }
        throw DeviceNotFound(query: query, seconds: timeout.inSeconds, seenDevices: seen.devices)
    }

    /// Finds one device for each query within `timeout`, no device twice (a device matching
    /// several queries goes to the first still open) and none of `excluded` (devices the caller
    /// already has), ending as soon as every query has one.
    /// Returns what was found (nil where nothing was) and the devices seen (as
    /// ``DeviceNotFound/seenDevices``): the caller decides which queries may stay open.
    public func find(
        each queries: [DeviceQuery], excluding excluded: [BluetoothAddress] = [], within timeout: Duration
    ) async throws -> (found: [Advertisement?], seen: [Advertisement]) {
        var found = [Advertisement?](repeating: nil, count: queries.count)
        var seen = SeenDevices()
        guard !queries.isEmpty else { return (found, []) }
        for await advertisement in try await scan(filter: ScanFilter(), timeout: timeout) {
            seen.note(advertisement)
            guard !excluded.contains(where: { $0.value == advertisement.address.value }),
                  !found.contains(where: { $0?.address.value == advertisement.address.value }) else { continue }
            if let index = queries.indices.first(where: { found[$0] == nil && queries[$0].matches(advertisement) && queries[$0].isStrongEnough(advertisement) }) {
                found[index] = advertisement
            }
            if !found.contains(where: { $0 == nil }) { break }
        }
        return (found, seen.devices)
    }
}

/// The devices seen during a search, each once (its first advertisement, or a stronger one
/// later), in the order first seen.
private struct SeenDevices {
    private(set) var devices: [Advertisement] = []

    mutating func note(_ advertisement: Advertisement) {
        if let index = devices.firstIndex(where: { $0.address == advertisement.address }) {
            if advertisement.rssi > devices[index].rssi || devices[index].name == nil { devices[index] = advertisement }
        } else {
            devices.append(advertisement)
        }
    }
}
