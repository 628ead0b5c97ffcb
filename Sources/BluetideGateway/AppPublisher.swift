import BluetideMQTT
import Foundation
import Synchronization

/// Where an app (`ring sync`, `ride`, `reflex device`, `reflex coach run`, `uart`) publishes its
/// records and how it logs in: the broker URL, the app's name in topics, and credentials taken
/// as the gateway takes them (user name; password from a file or `$BLUETIDE_MQTT_PASSWORD`).
public struct AppPublisherSettings: Sendable {
    /// `mqtt://HOST[:PORT]` or `mqtts://HOST[:PORT]`.
    public var url: String
    /// The app's name in topics (`<prefix>/app/<id>/…`): letters, digits, `-` and `_`.
    public var id: String
    public var username: String?
    /// File whose first line is the password; nil: `$BLUETIDE_MQTT_PASSWORD`, if set.
    public var passwordFile: String?
    /// PEM file of the broker's CA (`mqtts://`); nil: the system's.
    public var caFile: String?
    /// The first topic level (`bluetide`).
    public var prefix: String
    /// Records kept while the broker is away; beyond this the oldest are dropped and counted.
    public var outboxLimit: Int

    public init(url: String, id: String, username: String? = nil, passwordFile: String? = nil, caFile: String? = nil,
                prefix: String = "bluetide", outboxLimit: Int = 10_000) {
        self.url = url
        self.id = id
        self.username = username
        self.passwordFile = passwordFile
        self.caFile = caFile
        self.prefix = prefix
        self.outboxLimit = outboxLimit
    }

    /// The app's topics.
    public var topics: AppTopics { AppTopics(prefix: prefix, app: id) }

    /// The client options these settings give, checked: throws one line naming the option at
    /// fault (`--mqtt`, `--mqtt-id`, `--mqtt-password-file`) before anything connects.
    public func options(optionPrefix: String = "--mqtt") throws(GatewayError) -> MQTTOptions {
        guard !id.isEmpty, id.count <= 64, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw GatewayError(field: "\(optionPrefix)-id", "\"\(id)\": expected 1…64 letters, digits, - or _ (it is part of MQTT topics)")
        }
        // One client id per process: a broker drops an older session with the same id.
        var options: MQTTOptions
        do { options = try MQTTOptions(url: url, clientID: "bluetide-\(id)-\(ProcessInfo.processInfo.processIdentifier)") } catch {
            throw GatewayError(field: optionPrefix, error.message)
        }
        if let username { options.username = username }
        do { options.password = try MQTTOptions.password(file: passwordFile, option: "\(optionPrefix)-password-file") } catch {
            throw GatewayError(field: "\(optionPrefix)-password-file", error.message)
        }
        if let caFile { options.caFile = caFile }
        options.outboxLimit = outboxLimit
        options.keepAliveSeconds = 10
        options.will = MQTTMessage(topic: topics.availability, text: "offline", qos: .atLeastOnce, retain: true)
        return options
    }
}

/// An app's topics: every record under `<prefix>/app/<id>/<type>` (its `type` field), and the
/// app's availability, `online`/`offline` retained (its last will).
public struct AppTopics: Sendable, Equatable {
    public var prefix: String
    public var app: String

    public init(prefix: String = "bluetide", app: String) {
        self.prefix = prefix
        self.app = app
    }

    /// `online` while the app runs, `offline` after it (retained; the will says it on a crash).
    public var availability: String { "\(prefix)/app/\(app)/availability" }
    /// Records of one type, e.g. `bluetide/app/ride/sample`.
    public func record(_ type: String) -> String { "\(prefix)/app/\(app)/\(type)" }
    /// How many records the outbox dropped (oldest first) while the broker was away, retained.
    public var dropped: String { "\(prefix)/app/\(app)/dropped" }
}

/// Publishes an app's records (one JSON object each, in the schema of docs/json-output.md) to an
/// MQTT broker, at QoS 1: while the broker is away they wait in the client's bounded outbox and
/// go out in order once it is back. The commands stay thin: they hand over the records they would
/// print with `--json`. Never blocks the caller on the network.
public final class AppPublisher: Sendable {
    public let topics: AppTopics
    public let endpoint: String
    private let client: MQTTClient
    private let counts = Mutex((published: 0, failed: 0))

    private init(client: MQTTClient, topics: AppTopics) {
        self.client = client
        self.topics = topics
        self.endpoint = client.options.endpoint
    }

    /// Connects (at most `timeout`) and announces the app `online`. Throws one line when the
    /// library is missing, the broker cannot be reached or refuses the credentials.
    public static func connect(_ settings: AppPublisherSettings, timeout: Duration = .seconds(10)) async throws -> AppPublisher {
        if let problem = MQTTClient.libraryProblem { throw GatewayError(problem) }
        let options = try settings.options()
        let client = try MQTTClient(options)
        do {
            try await client.connect(timeout: timeout)
        } catch {
            await client.close(timeout: .zero)
            throw GatewayError("\(error)")
        }
        let publisher = AppPublisher(client: client, topics: settings.topics)
        publisher.send(MQTTMessage(topic: settings.topics.availability, text: "online", qos: .atLeastOnce, retain: true))
        return publisher
    }

    /// Publishes `record` (one JSON object, text) on `<prefix>/app/<id>/<type>`.
    public func publish(_ record: String, type: String, retain: Bool = false) {
        let sent = send(MQTTMessage(topic: topics.record(type), text: record, qos: .atLeastOnce, retain: retain))
        counts.withLock { if sent { $0.published += 1 } else { $0.failed += 1 } }
    }

    /// Records handed to the client so far.
    public var publishedCount: Int { counts.withLock { $0.published } }

    @discardableResult
    private func send(_ message: MQTTMessage) -> Bool {
        (try? client.publish(message)) != nil
    }

    /// What ``finish(timeout:)`` found.
    public struct Ending: Sendable, Equatable {
        /// Records handed to the client.
        public var published: Int
        /// Records the broker had not acknowledged when the wait ended (still queued, now lost).
        public var unacknowledged: Int
        /// Records the outbox dropped, oldest first, while the broker was away.
        public var dropped: Int

        /// One line for the user when something did not arrive; nil when all did.
        public var problem: String? {
            guard unacknowledged > 0 || dropped > 0 else { return nil }
            var parts: [String] = []
            if unacknowledged > 0 { parts.append("\(unacknowledged) not acknowledged by the broker") }
            if dropped > 0 { parts.append("\(dropped) dropped while it was away (oldest first)") }
            return "MQTT: of \(published) records, " + parts.joined(separator: " and ")
        }
    }

    /// Waits (at most `timeout`) until the broker has every record, says `offline` (retained),
    /// publishes the dropped count if any, and disconnects.
    public func finish(timeout: Duration = .seconds(10)) async -> Ending {
        let dropped = client.droppedCount
        if dropped > 0 {
            send(MQTTMessage(topic: topics.dropped, text: #"{"count":\#(dropped),"type":"dropped"}"#, qos: .atLeastOnce, retain: true))
        }
        send(MQTTMessage(topic: topics.availability, text: "offline", qos: .atLeastOnce, retain: true))
        _ = await client.flush(timeout: timeout)
        let left = client.unacknowledgedCount
        await client.close(timeout: .seconds(2))
        let (published, failed) = counts.withLock { ($0.published, $0.failed) }
        return Ending(published: published, unacknowledged: left + failed, dropped: dropped)
    }
}
