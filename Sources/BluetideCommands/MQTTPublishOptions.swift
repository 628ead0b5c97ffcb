import ArgumentParser
import BluetideGateway
import Foundation

/// `--mqtt URL` and its credentials, shared by the apps that also publish their records to a
/// broker (`ring sync`, `ride`, `reflex device`, `reflex coach run`, `uart`). Each record goes to
/// `bluetide/app/<id>/<type>` as `--json` would print it (docs/gateway.md, "Apps on the broker").
struct MQTTPublishOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Also publish every record to this MQTT broker (mqtt://HOST[:PORT] or mqtts://…) under bluetide/app/<id>/<type>; see docs/gateway.md.",
        valueName: "url"))
    var mqtt: String?

    @Option(name: .customLong("mqtt-id"), help: ArgumentHelp("With --mqtt: this app's name in topics (default: the command's name).", valueName: "name"))
    var mqttID: String?

    @Option(name: .customLong("mqtt-username"), help: ArgumentHelp("With --mqtt: the broker user name.", valueName: "name"))
    var mqttUsername: String?

    @Option(name: .customLong("mqtt-password-file"), help: ArgumentHelp(
        "With --mqtt: file holding the broker password (else $BLUETIDE_MQTT_PASSWORD).", valueName: "path"))
    var mqttPasswordFile: String?

    @Option(name: .customLong("mqtt-ca-file"), help: ArgumentHelp("With --mqtt: PEM file of the broker's CA (mqtts://).", valueName: "path"))
    var mqttCAFile: String?

    /// The settings, nil without `--mqtt`; `app` is the default id.
    func settings(app: String) -> AppPublisherSettings? {
        guard let mqtt else { return nil }
        return AppPublisherSettings(url: mqtt, id: mqttID ?? app, username: mqttUsername, passwordFile: mqttPasswordFile, caFile: mqttCAFile)
    }

    /// Checks the options without connecting (bad input exits 2 before Bluetooth opens).
    func validate(app: String) throws {
        guard let settings = settings(app: app) else {
            if mqttID != nil || mqttUsername != nil || mqttPasswordFile != nil || mqttCAFile != nil {
                throw CommandFailure.usage("--mqtt-id, --mqtt-username, --mqtt-password-file and --mqtt-ca-file need --mqtt URL", field: "--mqtt")
            }
            return
        }
        do { _ = try settings.options() } catch { throw CommandFailure.usage(error.description, field: error.field) }
    }

    /// Connects when `--mqtt` is given (exit 2 on bad options, 1 when the broker cannot be reached
    /// or refuses); nil without it.
    func connect(app: String) async throws -> AppPublisher? {
        try validate(app: app)
        guard let settings = settings(app: app) else { return nil }
        do { return try await AppPublisher.connect(settings) } catch { throw CommandFailure("\(error)") }
    }
}

extension AppPublisher {
    /// Ends publishing: waits for the broker to have every record and reports on standard error,
    /// in one line, any that did not arrive. Returns that line (nil when all arrived).
    @discardableResult
    func finishReporting() async -> String? {
        let ending = await finish()
        if let problem = ending.problem { StandardStreams.error.line("bluetide: \(problem)") }
        return ending.problem
    }
}

extension AppPublisher {
    /// Publishes a reflex command's records: the typed one and any extra ones, each under its own `type`.
    func publish(_ output: CoachOutput) {
        for record in output.records {
            let type = (try? JSONSerialization.jsonObject(with: Data(record.utf8)) as? [String: Any])?["type"] as? String
            publish(record, type: type ?? "record")
        }
    }
}
