import Foundation
import Yams

/// `bluetide gateway --config FILE`: the gateway's settings in YAML, so a service's command
/// line stays short. Options given on the command line win over the file. A password is never
/// kept here (`password-file` names the file that holds it).
///
/// ```yaml
/// id: garage
/// mqtt: mqtts://broker.lan:8883
/// username: garage
/// password-file: /etc/bluetide/mqtt-password
/// ca-file: /etc/bluetide/ca.pem
/// transport: hci-socket:0
/// watch: ["Tacx Neo 48110", "service:180D"]
/// presence-interval: 10
/// outbox: /var/lib/bluetide/gateway-outbox
/// ```
public struct GatewayFileSettings: Sendable, Equatable {
    public var id: String?
    public var mqtt: String?
    public var username: String?
    public var passwordFile: String?
    public var caFile: String?
    public var transport: String?
    /// Emulated devices, as `--emulate` takes them (`heart-rate,tacx-fec`).
    public var emulate: String?
    public var watch: [String] = []
    public var topicPrefix: String?
    public var discoveryPrefix: String?
    /// Seconds.
    public var presenceInterval: Double?
    /// The outbox file (`--outbox`).
    public var outbox: String?
    /// Messages the outbox keeps while the broker is away (`--outbox-limit`).
    public var outboxLimit: Int?

    /// The keys the file may have.
    public static let keys = [
        "id", "mqtt", "username", "password-file", "ca-file", "transport", "emulate", "watch", "topic-prefix",
        "discovery-prefix", "presence-interval", "outbox", "outbox-limit",
    ]

    public init() {}

    /// Reads the file at `path`; errors name the file and the key.
    public static func load(path: String) throws(GatewayError) -> GatewayFileSettings {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw GatewayError(field: "--config", "\(path): cannot be read; expected a YAML file (see docs/gateway.md)")
        }
        return try GatewayFileSettings(yaml: text, file: path)
    }

    /// Parses YAML `text` (`file` names it in errors): a mapping of ``keys``.
    public init(yaml source: String, file: String) throws(GatewayError) {
        func fail(_ message: String) -> GatewayError { GatewayError(field: "--config", "\(file): \(message)") }
        let loaded: Any?
        do { loaded = try Yams.load(yaml: source) } catch {
            let line = "\(error)".split(separator: "\n").first.map(String.init) ?? "\(error)"
            throw fail("not valid YAML: \(line)")
        }
        guard let loaded else { return }
        guard let mapping = loaded as? [String: Any] else { throw fail("expected a mapping of settings (key: value), e.g. id: garage") }
        for key in mapping.keys.sorted() where !Self.keys.contains(key) {
            if key == "password" {
                throw fail("password: a password is never kept in the configuration; name the file that holds it with password-file, or set BLUETIDE_MQTT_PASSWORD")
            }
            throw fail("unknown key \"\(key)\"; expected one of \(Self.keys.joined(separator: ", "))")
        }
        func text(_ key: String) throws(GatewayError) -> String? {
            guard let value = mapping[key] else { return nil }
            switch value {
            case let string as String: return string
            case let number as Int: return String(number)
            default: throw fail("\(key): expected text, found \(value)")
            }
        }
        func list(_ key: String) throws(GatewayError) -> [String]? {
            guard let value = mapping[key] else { return nil }
            if let string = value as? String { return [string] }
            guard let items = value as? [Any] else { throw fail("\(key): expected a list, e.g. [\"Tacx Neo 48110\", \"service:180D\"]") }
            var strings: [String] = []
            for item in items {
                guard let string = item as? String else { throw fail("\(key): expected text items, found \(item)") }
                strings.append(string)
            }
            return strings
        }
        id = try text("id")
        mqtt = try text("mqtt")
        username = try text("username")
        passwordFile = try text("password-file")
        caFile = try text("ca-file")
        transport = try text("transport")
        emulate = try list("emulate")?.joined(separator: ",")
        watch = try list("watch") ?? []
        topicPrefix = try text("topic-prefix")
        discoveryPrefix = try text("discovery-prefix")
        outbox = try text("outbox")
        if let value = mapping["outbox-limit"] {
            guard let number = value as? Int, number >= 1 else { throw fail("outbox-limit: expected a count ≥ 1, found \(value)") }
            outboxLimit = number
        }
        if let value = mapping["presence-interval"] {
            switch value {
            case let number as Int: presenceInterval = Double(number)
            case let number as Double: presenceInterval = number
            default: throw fail("presence-interval: expected seconds, found \(value)")
            }
        }
    }
}
