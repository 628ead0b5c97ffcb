import ArgumentParser
import Bluetide
import BluetideDeviceModels
import BluetideGateway
import BluetideMQTT
import Foundation

/// `bluetide gateway`: every device this computer hears, on an MQTT broker (docs/gateway.md).
struct GatewayRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Publish nearby devices on an MQTT broker: presence, decoded values, Home Assistant discovery, commands.",
        discussion: """
            A long-running daemon (see docs/gateway.md for the topic tree and a systemd unit). It publishes \
            every advertisement it hears (throttled, with RSSI), connects to the watched devices and publishes \
            each notification decoded in the JSON schema of docs/json-output.md under bluetide/<device>/<profile>, \
            a retained state object per device, Home Assistant discovery for their sensors, and answers \
            commands sent to bluetide/<device>/set/<what> on bluetide/<device>/result. Its availability \
            (bluetide/gateway/<id>/availability) is its last will. Logs go to standard error; SIGTERM or \
            Ctrl-C ends it cleanly. The password comes from --password-file or BLUETIDE_MQTT_PASSWORD, never \
            from the command line. Needs libmosquitto (Debian package libmosquitto1).

            Examples:
              bluetide gateway --id gw1 --emulate heart-rate,tacx-fec \\
                  --mqtt mqtt://127.0.0.1:1883
              bluetide gateway --id garage --transport hci-socket:0 \\
                  --watch "Tacx Neo 48110" --watch service:180D \\
                  --mqtt mqtts://broker.lan --username garage \\
                  --password-file /etc/bluetide/mqtt-password
            """)

    @Option(name: .long, help: ArgumentHelp("Settings in YAML (id, mqtt, username, password-file, ca-file, transport, emulate, watch, topic-prefix, discovery-prefix, presence-interval, outbox, outbox-limit; see docs/gateway.md); options given here win.", valueName: "path"))
    var config: String?

    @Option(name: .long, help: "The gateway's name in topics (letters, digits, - and _); required here or in --config.")
    var id: String?

    @Option(name: .long, help: ArgumentHelp("Broker URL: mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (TLS); required here or in --config.", valueName: "url"))
    var mqtt: String?

    @Option(name: .long, parsing: .singleValue,
            help: ArgumentHelp("A device to connect to: its name, its address, or service:UUID (repeatable). With --emulate and no --watch: every emulated device.", valueName: "device"))
    var watch: [String] = []

    @OptionGroup var session: DeviceSessionOptions

    @Option(name: .long, help: "Broker user name.")
    var username: String?

    @Option(name: .long, help: ArgumentHelp("File holding the broker password (else $BLUETIDE_MQTT_PASSWORD).", valueName: "path"))
    var passwordFile: String?

    @Option(name: .long, help: ArgumentHelp("PEM file of the CA that signed the broker's certificate (mqtts://; default: the system's).", valueName: "path"))
    var caFile: String?

    @Option(name: .long, help: "Topic prefix of values and commands (default: bluetide).")
    var topicPrefix: String?

    @Option(name: .long, help: "Home Assistant's discovery prefix (default: homeassistant).")
    var discoveryPrefix: String?

    @Option(name: .long, help: "Seconds between two presence messages of one device (default: 10).")
    var presenceInterval: Double?

    @Option(name: .long, help: ArgumentHelp(
        "Keep the messages queued while the broker is away in this file too, so they survive a restart (default: memory only).",
        valueName: "path"))
    var outbox: String?

    @Option(name: .long, help: "Messages queued while the broker is away, at most; beyond, the oldest are dropped and counted (default: 10000).")
    var outboxLimit: Int?

    @Option(name: .long, parsing: .singleValue, help: ArgumentHelp(
        "With --emulate: a setting of the emulated devices, key=value (repeatable; see bluetide emulate --help), e.g. rate=500 for heart-rate straps notifying 500 times a second.",
        valueName: "key=value"))
    var option: [String] = []

    @Option(name: .long, help: "Stop after this many seconds (default: run until SIGTERM or Ctrl-C).")
    var duration: Double?

    @Flag(name: .long, help: "Log one JSON object per line on standard output instead of text on standard error.")
    var json = false

    func run() async throws {
        var file = GatewayFileSettings()
        if let config {
            do { file = try GatewayFileSettings.load(path: config) } catch {
                throw CommandFailure.usage(error.description, field: "--config")
            }
        }
        guard let id = id ?? file.id else {
            throw CommandFailure.usage("--id: give the gateway's name (letters, digits, - and _), here or as id: in --config", field: "--id")
        }
        guard let mqtt = mqtt ?? file.mqtt else {
            throw CommandFailure.usage("--mqtt: give the broker's URL, e.g. mqtt://127.0.0.1:1883, here or as mqtt: in --config", field: "--mqtt")
        }
        let username = username ?? file.username
        let passwordFile = passwordFile ?? file.passwordFile
        let caFile = caFile ?? file.caFile
        let watch = watch.isEmpty ? file.watch : watch
        let topicPrefix = topicPrefix ?? file.topicPrefix ?? "bluetide"
        let discoveryPrefix = discoveryPrefix ?? file.discoveryPrefix ?? "homeassistant"
        let presenceInterval = presenceInterval ?? file.presenceInterval ?? 10
        var session = session
        if session.transport == "virtual", let transport = file.transport { session.transport = transport }
        if session.emulate == nil { session.emulate = file.emulate }
        if let problem = MQTTClient.libraryProblem { throw CommandFailure(problem) }
        guard presenceInterval.isFinite, presenceInterval >= 0 else {
            throw CommandFailure.usage("--presence-interval \(presenceInterval): expected seconds ≥ 0", field: "--presence-interval")
        }
        if let duration, !(duration.isFinite && duration > 0) {
            throw CommandFailure.usage("--duration \(duration): expected seconds > 0", field: "--duration")
        }
        var options: MQTTOptions
        do { options = try MQTTOptions(url: mqtt, clientID: "bluetide-\(id)") } catch {
            throw CommandFailure.usage("--mqtt \(error.message)", field: "--mqtt")
        }
        if let username { options.username = username }
        do { options.password = try MQTTOptions.password(file: passwordFile) } catch {
            throw CommandFailure.usage(error.message, field: "--password-file")
        }
        options.caFile = caFile
        let outboxLimit = outboxLimit ?? file.outboxLimit ?? 10_000
        guard outboxLimit >= 1 else { throw CommandFailure.usage("--outbox-limit \(outboxLimit): expected a count ≥ 1", field: "--outbox-limit") }
        options.outboxLimit = outboxLimit
        options.outboxFile = outbox ?? file.outbox
        var watches: [GatewayWatch] = []
        for text in watch {
            do { watches.append(try GatewayWatch(parsing: text)) } catch {
                throw CommandFailure.usage(error.description, field: "--watch")
            }
        }
        var gatewayConfiguration: GatewayConfiguration
        do {
            gatewayConfiguration = try GatewayConfiguration(id: id, watch: watches, prefix: topicPrefix, discoveryPrefix: discoveryPrefix)
        } catch {
            throw CommandFailure.usage(error.description, field: error.field)
        }
        gatewayConfiguration.presenceInterval = .milliseconds(Int64(presenceInterval * 1000))
        if watches.isEmpty && session.emulate == nil {
            throw CommandFailure.usage("--watch: name at least one device to connect to (a name, an address or service:UUID)", field: "--watch")
        }
        options.will = gatewayConfiguration.will
        // The broker publishes the will 1.5 keep-alives after a gateway's last word: 5 s lets
        // another gateway take its devices over within 10 s of a crash.
        options.keepAliveSeconds = 5
        let stop = StopSignal.install(duration: duration)
        var emulatorOptions = EmulatorOptions()
        for item in option {
            guard let equals = item.firstIndex(of: "=") else {
                throw CommandFailure.usage("--option \"\(item)\": expected key=value, e.g. --option rate=500", field: "--option")
            }
            do { try emulatorOptions.set(String(item[..<equals]), to: String(item[item.index(after: equals)...])) } catch {
                throw CommandFailure.usage("--option \(item): \(error)", field: "--option")
            }
        }
        let deviceSession = try await DeviceSession.open(session, conversation: nil, emulatorOptions: emulatorOptions)
        if watches.isEmpty {
            gatewayConfiguration.watch = deviceSession.emulated.map { .address($0.address) }
        }
        let json = self.json
        let client: MQTTClient
        do {
            client = try MQTTClient(options)
        } catch {
            await deviceSession.close()
            throw CommandFailure.usage(error.message, field: options.outboxFile == nil ? nil : "--outbox")
        }
        do {
            try client.start()
            try await client.waitUntilConnected(timeout: .seconds(15))
        } catch {
            // With an outbox file a gateway may start while the broker is away: it queues.
            guard let outbox = options.outboxFile, client.isStarted, !"\(error)".contains("refused the connection") else {
                await client.close(timeout: .zero)
                await deviceSession.close()
                throw CommandFailure("\(error)")
            }
            Self.emit(GatewayLogEvent.brokerLink("\(error); queuing in \(outbox) until it answers"), json: json, gateway: id)
        }
        let gatewayID = id
        let gateway = Gateway(configuration: gatewayConfiguration, central: deviceSession.central, mqtt: client) { event in
            Self.emit(event, json: json, gateway: gatewayID)
        }
        Self.emit(text: "gateway \(id) publishing on \(options.endpoint) (watching \(gatewayConfiguration.watch.map(\.description).joined(separator: ", ")))",
                  record: ["type": "gateway-started", "gateway": .string(id), "broker": .string(options.endpoint)], json: json)
        let running = Task { try await gateway.run() }
        let reason = await stop.wait()
        running.cancel()
        let outcome = await running.result
        await client.close(timeout: .seconds(2))
        await deviceSession.close()
        Self.emit(text: "gateway \(id) stopped (\(reason))", record: ["type": "gateway-stopped", "gateway": .string(id)], json: json)
        if case let .failure(error) = outcome, !(error is CancellationError) { throw CommandFailure("\(error)") }
    }

    private static func emit(_ event: GatewayLogEvent, json: Bool, gateway: String) {
        var record: [String: GatewayJSON] = ["gateway": .string(gateway), "message": .string(event.description)]
        switch event {
        case let .connected(device, _): record["type"] = "connected"; record["deviceId"] = .string(device)
        case let .disconnected(device, _): record["type"] = "disconnected"; record["deviceId"] = .string(device)
        case let .connectFailed(device, _): record["type"] = "connect-failed"; record["deviceId"] = .string(device)
        case let .command(device, command, _): record["type"] = "command"; record["deviceId"] = .string(device); record["command"] = .string(command)
        case .brokerLink: record["type"] = "broker"
        }
        emit(text: event.description, record: record, json: json)
    }

    private static func emit(text: String, record: [String: GatewayJSON], json: Bool) {
        if json { StandardStreams.output.line(GatewayJSON.object(record).text) } else { StandardStreams.error.line("bluetide gateway: \(text)") }
    }
}
