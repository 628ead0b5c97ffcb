import Bluetide
import BluetideBase
import BluetideProfiles
import Foundation

/// Which devices a gateway connects to: by advertised name, by address, or by advertised service.
public enum GatewayWatch: Sendable, Equatable, CustomStringConvertible {
    case name(String)
    case address(BluetoothAddress)
    case service(BluetoothUUID)

    /// `service:180D`, an address (`C6:C5:C4:C3:C2:C1` or with `/R`, `/P`), `name:TEXT`, else a name.
    public init(parsing text: String) throws(GatewayError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw GatewayError(field: "--watch", "empty; expected a name, an address or service:UUID") }
        let lower = trimmed.lowercased()
        if lower.hasPrefix("service:") {
            let uuidText = String(trimmed.dropFirst(8))
            guard let uuid = try? BluetoothUUID(uuidText) else {
                throw GatewayError(field: "--watch", "\(text): \"\(uuidText)\" is not a UUID; expected e.g. service:180D")
            }
            self = .service(uuid)
        } else if lower.hasPrefix("name:") {
            self = .name(String(trimmed.dropFirst(5)))
        } else if let address = GatewayWatch.address(trimmed) {
            self = .address(address)
        } else {
            self = .name(trimmed)
        }
    }

    private static func address(_ text: String) -> BluetoothAddress? {
        let upper = text.uppercased()
        if upper.hasSuffix("/R") { return try? BluetoothAddress(String(text.dropLast(2)), type: .random) }
        if upper.hasSuffix("/P") { return try? BluetoothAddress(String(text.dropLast(2)), type: .public) }
        return try? BluetoothAddress(text)
    }

    /// Whether `advertisement` is one of the watched devices.
    public func matches(_ advertisement: Advertisement) -> Bool {
        switch self {
        case let .name(name): advertisement.name == name
        case let .address(address): advertisement.address.description.prefix(17) == address.description.prefix(17)
        case let .service(uuid): advertisement.serviceUUIDs.contains(uuid)
        }
    }

    public var description: String {
        switch self {
        case let .name(name): "name \(name)"
        case let .address(address): "address \(address)"
        case let .service(uuid): "service \(uuid.shortString)"
        }
    }
}

/// A gateway failure or a refused input, as one line; `field` names the option or topic at fault.
public struct GatewayError: Error, Sendable, Equatable, CustomStringConvertible {
    public let field: String?
    public let message: String
    public init(field: String? = nil, _ message: String) {
        self.field = field
        self.message = message
    }
    public var description: String { field.map { "\($0): \(message)" } ?? message }
}

/// The topic tree (docs/gateway.md). `<device>` is the device's address in lower-case hex
/// without separators (`f1de00000001`), stable across gateways.
public struct GatewayTopics: Sendable, Equatable {
    public var prefix: String
    public var discoveryPrefix: String
    public var gateway: String

    public init(prefix: String = "bluetide", discoveryPrefix: String = "homeassistant", gateway: String) {
        self.prefix = prefix
        self.discoveryPrefix = discoveryPrefix
        self.gateway = gateway
    }

    /// The device's topic name: its address in lower-case hex, no separators.
    public static func deviceID(_ address: BluetoothAddress) -> String {
        String(address.description.prefix(17)).replacingOccurrences(of: ":", with: "").lowercased()
    }

    /// `online`/`offline`, retained; the gateway's last will.
    public var availability: String { "\(prefix)/gateway/\(gateway)/availability" }
    /// How many QoS 1 messages the outbox dropped (oldest first) while the broker was away, retained.
    public var dropped: String { "\(prefix)/gateway/\(gateway)/dropped" }
    /// Advertisements heard, one topic per device, throttled.
    public func presence(_ device: String) -> String { "\(prefix)/gateway/\(gateway)/presence/\(device)" }
    /// `online`/`offline`, retained: whether a gateway is connected to the device.
    public func deviceAvailability(_ device: String) -> String { "\(prefix)/\(device)/availability" }
    /// The retained state object: the latest value of each sensor.
    public func state(_ device: String) -> String { "\(prefix)/\(device)/state" }
    /// Every decoded value of one profile (`heart-rate`, `battery`, `fec`, …).
    public func value(_ device: String, metric: String) -> String { "\(prefix)/\(device)/\(metric)" }
    /// The retained claim of the gateway connected to the device (empty: none).
    public func claim(_ device: String) -> String { "\(prefix)/\(device)/claim" }
    /// Every gateway's presence reports, to learn who hears a device best.
    public var allPresence: String { "\(prefix)/gateway/+/presence/+" }
    /// Every gateway's availability.
    public var allAvailability: String { "\(prefix)/gateway/+/availability" }
    /// Every device's claim.
    public var allClaims: String { "\(prefix)/+/claim" }

    /// (gateway, device) of a presence topic, nil when it is not one.
    func presenceSource(in topic: String) -> (gateway: String, device: String)? {
        let parts = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let count = prefix.split(separator: "/").count
        guard parts.count == count + 4, parts.prefix(count).joined(separator: "/") == prefix, parts[count] == "gateway",
              parts[count + 2] == "presence" else { return nil }
        return (parts[count + 1], parts[count + 3])
    }

    /// The gateway of an availability topic, nil when it is not one.
    func availabilitySource(in topic: String) -> String? {
        let parts = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let count = prefix.split(separator: "/").count
        guard parts.count == count + 3, parts.prefix(count).joined(separator: "/") == prefix, parts[count] == "gateway",
              parts[count + 2] == "availability" else { return nil }
        return parts[count + 1]
    }

    /// The device of a claim topic, nil when it is not one.
    func claimSource(in topic: String) -> String? {
        let parts = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let count = prefix.split(separator: "/").count
        guard parts.count == count + 2, parts.prefix(count).joined(separator: "/") == prefix, parts[count + 1] == "claim",
              parts[count] != "gateway" else { return nil }
        return parts[count]
    }

    /// Commands: `<prefix>/<device>/set/<what>`.
    public var commands: String { "\(prefix)/+/set/+" }
    /// One reply per command.
    public func result(_ device: String) -> String { "\(prefix)/\(device)/result" }
    /// Home Assistant's discovery topic of one sensor.
    public func discovery(_ device: String, sensor: String) -> String {
        "\(discoveryPrefix)/sensor/bluetide_\(device)/\(sensor)/config"
    }

    /// Home Assistant's discovery topic of the gateway's own connectivity sensor.
    public var gatewayDiscovery: String { "\(discoveryPrefix)/binary_sensor/bluetide_gateway_\(gateway)/connectivity/config" }

    /// The gateway as a Home Assistant device with one connectivity sensor (its availability), so
    /// the devices' `via_device` names a device Home Assistant knows.
    public var gatewayDiscoveryPayload: GatewayJSON {
        [
            "name": "Gateway", "unique_id": .string("bluetide_gateway_\(gateway)_connectivity"),
            "object_id": .string("bluetide_gateway_\(gateway)_connectivity"),
            "state_topic": .string(availability), "payload_on": "online", "payload_off": "offline",
            "device_class": "connectivity",
            "device": [
                "identifiers": .array([.string("bluetide_gateway_\(gateway)")]), "name": .string("Bluetide gateway \(gateway)"),
                "manufacturer": "Bluetide", "model": "bluetide gateway",
            ],
        ]
    }

    /// The device and command of a command topic, nil when it is not one.
    public func command(in topic: String) -> (device: String, command: String)? {
        let parts = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let prefixParts = prefix.split(separator: "/").count
        guard parts.count == prefixParts + 3, parts.prefix(prefixParts).joined(separator: "/") == prefix,
              parts[prefixParts + 1] == "set" else { return nil }
        return (parts[prefixParts], parts[prefixParts + 2])
    }
}

/// One value Home Assistant shows as a sensor, and where it comes from in a decoded packet.
public struct GatewaySensor: Sendable {
    /// The state object's field, e.g. `heartRateBPM`.
    public let key: String
    public let name: String
    /// Home Assistant's device class, when one fits (`battery`, `power`, `speed`, `distance`, `duration`).
    public let deviceClass: String?
    public let unit: String
    /// `measurement`, or `total_increasing` for counters such as distance.
    public let stateClass: String
    /// Reads the value from the packet's `decoded` and `derived` JSON.
    let read: @Sendable (_ decoded: GatewayJSON?, _ derived: GatewayJSON?) -> Double?

    /// The sensors each profile (by ``ProfileDescriptor/name``) feeds.
    public static func sensors(forProfile profile: String) -> [GatewaySensor] {
        switch profile {
        case "heart-rate": [heartRate]
        case "battery": [battery]
        case "csc": [speed { $1?["speedKilometresPerHour"]?.double }, cadence { $1?["cadenceRPM"]?.double }, distance { $1?["distanceMetres"]?.double }]
        case "cycling-power":
            [power { d, _ in d?["instantaneousPowerWatts"]?.double }, speed { $1?["speedKilometresPerHour"]?.double },
             cadence { $1?["cadenceRPM"]?.double }, distance { $1?["distanceMetres"]?.double }]
        case "ftms-indoor-bike":
            [power { d, _ in d?["instantaneousPowerWatts"]?.double },
             speed { d, _ in d?["instantaneousSpeedHundredthKmh"]?.double.map { $0 / 100 } },
             cadence { d, _ in d?["instantaneousCadenceHalfRpm"]?.double.map { $0 / 2 } },
             distance { d, _ in d?["totalDistanceMetres"]?.double }]
        case "fec":
            [power { $1?["instantaneousPowerWatts"]?.double }, speed { $1?["speedKmh"]?.double },
             cadence { $1?["cadenceRpm"]?.double }, distance { $1?["distanceMetres"]?.double }]
        case "punch-response": [reaction]
        default: []
        }
    }

    static let heartRate = GatewaySensor(key: "heartRateBPM", name: "Heart rate", deviceClass: nil, unit: "bpm", stateClass: "measurement") { d, _ in
        d?["beatsPerMinute"]?.double
    }
    static let battery = GatewaySensor(key: "batteryPercent", name: "Battery", deviceClass: "battery", unit: "%", stateClass: "measurement") { d, _ in
        d?["percent"]?.double
    }
    static let reaction = GatewaySensor(key: "reactionMilliseconds", name: "Reaction time", deviceClass: "duration", unit: "ms", stateClass: "measurement") { d, _ in
        guard case .bool(true)? = d?["hit"] else { return nil }
        return d?["reactionTimeMilliseconds"]?.double
    }
    static let spo2 = GatewaySensor(key: "spo2Percent", name: "SpO2", deviceClass: nil, unit: "%", stateClass: "measurement") { _, _ in nil }
    static let steps = GatewaySensor(key: "steps", name: "Steps today", deviceClass: nil, unit: "steps", stateClass: "total_increasing") { _, _ in nil }
    static func power(_ read: @escaping @Sendable (GatewayJSON?, GatewayJSON?) -> Double?) -> GatewaySensor {
        GatewaySensor(key: "powerWatts", name: "Power", deviceClass: "power", unit: "W", stateClass: "measurement", read: read)
    }
    static func speed(_ read: @escaping @Sendable (GatewayJSON?, GatewayJSON?) -> Double?) -> GatewaySensor {
        GatewaySensor(key: "speedKilometresPerHour", name: "Speed", deviceClass: "speed", unit: "km/h", stateClass: "measurement", read: read)
    }
    static func cadence(_ read: @escaping @Sendable (GatewayJSON?, GatewayJSON?) -> Double?) -> GatewaySensor {
        GatewaySensor(key: "cadenceRPM", name: "Cadence", deviceClass: nil, unit: "rpm", stateClass: "measurement", read: read)
    }
    static func distance(_ read: @escaping @Sendable (GatewayJSON?, GatewayJSON?) -> Double?) -> GatewaySensor {
        GatewaySensor(key: "distanceMetres", name: "Distance", deviceClass: "distance", unit: "m", stateClass: "total_increasing", read: read)
    }

    /// Home Assistant's discovery payload for this sensor of `device` (retained on
    /// ``GatewayTopics/discovery(_:sensor:)``). Its keys are Home Assistant's own (snake_case).
    public func discoveryPayload(device: String, address: BluetoothAddress, name: String?, model: String, topics: GatewayTopics) -> GatewayJSON {
        var config: [String: GatewayJSON] = [
            "name": .string(self.name),
            "unique_id": .string("bluetide_\(device)_\(key)"),
            "object_id": .string("bluetide_\(device)_\(key)"),
            "state_topic": .string(topics.state(device)),
            "value_template": .string("{{ value_json.values.\(key) }}"),
            "unit_of_measurement": .string(unit),
            "state_class": .string(stateClass),
            "availability_mode": "all",
            "availability": .array([
                ["topic": .string(topics.availability)],
                ["topic": .string(topics.deviceAvailability(device))],
            ]),
            "device": .object([
                "identifiers": .array([.string("bluetide_\(device)")]),
                "connections": .array([.array(["mac", .string(String(address.description.prefix(17)))])]),
                "name": .string(name ?? "Bluetide \(device)"),
                "manufacturer": "Bluetide",
                "model": .string(model),
                "via_device": .string("bluetide_gateway_\(topics.gateway)"),
            ]),
        ]
        if let deviceClass { config["device_class"] = .string(deviceClass) }
        return .object(config)
    }
}

/// When to publish a device's retained state object. The first change publishes at once; changes
/// within ``interval`` of the last publication wait for its end, where one publication carries
/// them all (latest wins). Pure: the gateway gives it the time (on its clock, since it was made).
public struct StateThrottle: Sendable, Equatable {
    /// What to do with a change.
    public enum Decision: Sendable, Equatable {
        /// Publish the state object now.
        case publishNow
        /// Publish at this instant (and not before); nothing is scheduled yet.
        case publishAt(Duration)
        /// A publication is already scheduled: it will carry this change.
        case waiting
    }

    /// Shortest time between two publications.
    public let interval: Duration
    /// When the state object was last published, nil before the first.
    public private(set) var lastPublished: Duration?
    /// A change waits for its publication.
    public private(set) var isWaiting = false

    public init(interval: Duration) { self.interval = interval }

    /// A value changed at `now`.
    public mutating func changed(at now: Duration) -> Decision {
        if isWaiting { return .waiting }
        if let last = lastPublished, now - last < interval {
            isWaiting = true
            return .publishAt(last + interval)
        }
        lastPublished = now
        return .publishNow
    }

    /// The waiting state object was published at `now`.
    public mutating func published(at now: Duration) {
        isWaiting = false
        lastPublished = now
    }
}
