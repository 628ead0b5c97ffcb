import Foundation

/// Quality of service of one message: at most once (fire and forget) or at least once (the
/// broker acknowledges; libmosquitto resends after a reconnect until it does).
public enum MQTTQoS: Int32, Sendable, Equatable {
    case atMostOnce = 0
    case atLeastOnce = 1
}

/// One MQTT message, sent or received.
public struct MQTTMessage: Sendable, Equatable {
    /// The topic, e.g. `bluetide/gw1/availability`.
    public var topic: String
    /// The payload bytes (MQTT does not type them; Bluetide publishes UTF-8 JSON or plain words).
    public var payload: [UInt8]
    public var qos: MQTTQoS
    /// Retained: the broker keeps the last one per topic and hands it to every new subscriber.
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    public init(topic: String, text: String, qos: MQTTQoS = .atMostOnce, retain: Bool = false) {
        self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain)
    }

    /// The payload as UTF-8 text (invalid bytes replaced).
    public var text: String { String(decoding: payload, as: UTF8.self) }
}

/// Where the broker is and how to log in: parsed from `mqtt://HOST[:PORT]` (port 1883) or
/// `mqtts://HOST[:PORT]` (TLS, port 8883). A password never travels in the URL: it comes from
/// a file or the environment (see docs/gateway.md), so it shows neither in `ps` nor in logs.
public struct MQTTOptions: Sendable {
    public var host: String
    public var port: Int
    /// TLS to the broker (`mqtts://`), checked against ``caFile`` or the system's CA certificates.
    public var useTLS: Bool
    /// PEM file of the CA that signed the broker's certificate; nil: the system's (/etc/ssl/certs).
    public var caFile: String?
    /// The client identifier; a broker drops an older session with the same one.
    public var clientID: String
    public var username: String?
    public var password: String?
    /// Seconds between keep-alive pings; the broker publishes the will after 1.5 times this without a word.
    public var keepAliveSeconds: Int
    /// The message the broker publishes for us when we vanish without a clean disconnect.
    public var will: MQTTMessage?
    /// Reconnect back-off: the first delay and the longest one, seconds (doubling in between).
    public var reconnectDelaySeconds: (first: Int, longest: Int)
    /// Received messages kept for a slow reader; beyond this the newest are dropped.
    public var receiveBufferLimit: Int
    /// QoS 1 messages kept in memory while the broker is away; beyond this the oldest are dropped.
    public var outboxLimit: Int
    /// A file that keeps the outbox across restarts (nil: memory only). Messages a previous
    /// process left there are sent first, in order; bounded like the outbox.
    public var outboxFile: String?

    public init(host: String, port: Int = 1883, clientID: String) {
        self.host = host
        self.port = port
        self.useTLS = false
        self.caFile = nil
        self.clientID = clientID
        self.username = nil
        self.password = nil
        self.keepAliveSeconds = 30
        self.will = nil
        self.reconnectDelaySeconds = (1, 30)
        self.receiveBufferLimit = 4096
        self.outboxLimit = 10_000
        self.outboxFile = nil
    }

    /// Options from a broker URL: `mqtt://HOST[:PORT]`, `mqtts://HOST[:PORT]`, or `mqtt://USER@HOST`.
    /// Throws one line naming what is wrong and what to write instead.
    public init(url text: String, clientID: String) throws(MQTTError) {
        let example = "e.g. mqtt://127.0.0.1:1883 or mqtts://broker.example:8883"
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw MQTTError("\(text): not a broker URL; expected mqtt://HOST[:PORT], \(example)")
        }
        let tls: Bool
        switch scheme {
        case "mqtt", "tcp": tls = false
        case "mqtts", "ssl": tls = true
        default: throw MQTTError("\(text): unknown scheme \"\(scheme)\"; expected mqtt:// or mqtts://, \(example)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw MQTTError("\(text): no host; expected mqtt://HOST[:PORT], \(example)")
        }
        if components.password != nil {
            throw MQTTError("\(text): a password in the URL would show in `ps` and in logs; give it in a file or the environment instead (see docs/gateway.md)")
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw MQTTError("\(text): port \(port) out of range; expected 1…65535")
        }
        if !(components.path.isEmpty || components.path == "/") {
            throw MQTTError("\(text): unexpected path \"\(components.path)\"; expected mqtt://HOST[:PORT], \(example)")
        }
        self.init(host: host, port: components.port ?? (tls ? 8883 : 1883), clientID: clientID)
        self.useTLS = tls
        self.username = components.user
    }

    /// `host:port` for messages.
    public var endpoint: String { "\(host.contains(":") ? "[\(host)]" : host):\(port)" }
}

extension MQTTOptions {
    /// The broker password as every Bluetide command takes it: the first line of `file` when one
    /// is named, else `$BLUETIDE_MQTT_PASSWORD`, else none. Never from the command line, so it
    /// shows neither in `ps` nor in logs. Throws one line naming `option` when the file cannot be read.
    public static func password(file: String?, option: String = "--password-file",
                                environment: [String: String] = ProcessInfo.processInfo.environment) throws(MQTTError) -> String? {
        if let file {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw MQTTError("\(option) \(file): cannot be read; expected a file holding the password")
            }
            return text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        }
        return environment["BLUETIDE_MQTT_PASSWORD"]
    }
}
