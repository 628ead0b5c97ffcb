import ArgumentParser
import Bluetide
import BluetideSerial
import Foundation
import BluetideSupport

/// `bluetide uart daemon --config FILE`: known serial devices kept connected, one pty or TCP port each.
struct UARTDaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Keep known BLE serial devices connected, each on a pty or TCP port of its own that survives link losses.",
        discussion: """
            Reads a JSON config: {"devices": [{"device": "Robot1", "pty": "/tmp/ttyRobot1", "minRssi": -80, \
            "eol": "crlf", "profile": "hm10"}, …]} (device: a name or an address; pty: the symlink path, or \
            "tcp": "127.0.0.1:7001" instead for one TCP client at a time; optional minRssi in dBm, eol \
            cr|lf|crlf|none for what a line end written to the port becomes, profile nus|hm10 or \
            service/write/notify UUIDs, reconnectTries, outageBuffer). Each pty or TCP port is made at start and stays until the \
            daemon stops; each device is connected when seen at minRssi or stronger, reconnected while it can be, and \
            looked for again once it is gone. One status line per device event on stderr (--json: records). Ends \
            cleanly on SIGTERM or Ctrl-C, removing the symlinks. docs/uart.md has a systemd unit.

            Examples:
              bluetide uart daemon --config robots.json --transport hci-socket:0
            """)

    @Option(name: .long, help: "The JSON file listing the devices (see above).")
    var config: String

    @Option(name: .long, help: "Controller transport (see bluetide --help).")
    var transport: String = "virtual"

    @Flag(name: .long, help: "Status lines as JSON records.")
    var json = false

    func run() async throws {
        let devices = try Self.load(config)
        let bluetooth: Bluetooth
        do { bluetooth = try await Bluetooth.open(transport: transport) } catch {
            throw CommandFailure.cannotOpenTransport(transport, error)
        }
        let signal = StopSignal.install()
        let daemon = SerialDaemon(devices: devices, central: bluetooth.central)
        let json = json
        let start = ContinuousClock.now
        let printer = Task {
            for await event in daemon.events {
                guard json else { StandardStreams.error.line("\(event.device): \(event)"); continue }
                let elapsed = ContinuousClock.now - start
                var fields: [String: JSONOutputValue] = [
                    "device": JSONOutput.device(text: event.device),
                    "time": JSONOutput.time(monotonic: elapsed.inSeconds),
                ]
                let type: String
                switch event {
                case let .ready(_, path, slave): type = "ready"; fields["pty"] = .string(path); fields["terminal"] = .string(slave)
                case let .listening(_, host, port): type = "listening"; fields["host"] = .string(host); fields["port"] = .integer(Int64(port))
                case let .clientConnected(_, peer): type = "client-connected"; fields["client"] = .string(peer)
                case let .clientLeft(_, peer): type = "client-left"; fields["client"] = .string(peer)
                case let .found(_, rssi): type = "found"; fields["rssiDbm"] = .integer(Int64(rssi))
                case let .link(_, status):
                    type = status.name
                    switch status {
                    case let .connected(profile, chunk): fields["profile"] = .string(profile.kind.rawValue); fields["chunkBytes"] = .integer(Int64(chunk))
                    case let .disconnected(reason), let .gaveUp(reason): fields["reason"] = .string(reason)
                    case let .reconnecting(attempt, of): fields["attempt"] = .integer(Int64(attempt)); fields["of"] = .integer(Int64(of))
                    case let .rssi(dBm): fields["rssiDbm"] = .integer(Int64(dBm))
                    case .reconnected, .closed: break
                    }
                case let .waiting(_, reason): type = "waiting"; fields["reason"] = .string(reason)
                case let .failed(_, reason): type = "failed"; fields["reason"] = .string(reason)
                }
                StandardStreams.error.line(JSONOutput.line(type, fields))
            }
        }
        await daemon.start()
        _ = await signal.wait()
        await daemon.stop()
        await printer.value
        await PromptShutdown.close(bluetooth)
    }

    /// The devices of the config file at `path`; a bad file fails with the field that is wrong.
    static func load(_ path: String) throws -> [SerialDaemonDevice] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure("--config \(path): cannot read it; check the path")
        }
        return try parse(data, source: path)
    }

    /// Parses a config's bytes (`source` names it in errors).
    static func parse(_ data: Data, source: String) throws -> [SerialDaemonDevice] {
        func fail(_ field: String, _ problem: String) -> CommandFailure {
            CommandFailure("--config \(source): \(field): \(problem)")
        }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw fail("the file", "expected a JSON object {\"devices\": [...]}")
        }
        guard let entries = root["devices"] as? [[String: Any]], !entries.isEmpty else {
            throw fail("devices", "expected a list of at least one device object")
        }
        var devices: [SerialDaemonDevice] = []
        for (index, entry) in entries.enumerated() {
            let at = "devices[\(index)]"
            guard let target = entry["device"] as? String, !target.isEmpty else { throw fail("\(at).device", "expected a name or an address") }
            let port: SerialDaemonPort
            switch (entry["pty"], entry["tcp"]) {
            case (nil, nil), (.some, .some):
                throw fail("\(at)", "expected one of \"pty\": \"/tmp/ttyRobot1\" (a pty's symlink) or \"tcp\": \"127.0.0.1:7001\" (a TCP port)")
            case let (pty?, nil):
                guard let pty = pty as? String, pty.hasPrefix("/") else {
                    throw fail("\(at).pty", "expected an absolute path for the pty's symlink, e.g. /tmp/ttyRobot1, found \(pty)")
                }
                guard !devices.contains(where: { $0.ptyPath == pty }) else { throw fail("\(at).pty", "\(pty) is used by another device") }
                port = .pty(pty)
            case let (nil, tcp?):
                guard let text = tcp as? String, let (host, number) = try? UARTCommand.parseTCP(text) else {
                    throw fail("\(at).tcp", "expected HOST:PORT or PORT (0–65535), e.g. 127.0.0.1:7001, found \(tcp)")
                }
                guard number == 0 || !devices.contains(where: { $0.port == .tcp(host: host, port: number) }) else {
                    throw fail("\(at).tcp", "\(host):\(number) is used by another device")
                }
                port = .tcp(host: host, port: number)
            }
            var minimumRSSI: Int?
            if let value = entry["minRssi"] {
                guard let number = value as? Int, (-127...20).contains(number) else { throw fail("\(at).minRssi", "expected dBm from -127 to 20, found \(value)") }
                minimumRSSI = number
            }
            var ending: [UInt8]?
            if let value = entry["eol"] {
                guard let text = value as? String, let parsed = LineEnding(rawValue: text.lowercased()) else {
                    throw fail("\(at).eol", "expected cr, lf, crlf or none, found \(value)")
                }
                ending = parsed.bytes
            }
            var options = SerialLinkOptions()
            if let value = entry["reconnectTries"] {
                guard let number = value as? Int, number >= 0 else { throw fail("\(at).reconnectTries", "expected 0 or more, found \(value)") }
                options.reconnectTries = number
            }
            if let value = entry["outageBuffer"] {
                guard let number = value as? Int, number >= 0 else { throw fail("\(at).outageBuffer", "expected bytes ≥ 0, found \(value)") }
                options.outageBufferLimit = number
            }
            if let value = entry["profile"] {
                switch (value as? String)?.lowercased() {
                case "nus": options.profile = .nordicUART
                case "hm10": options.profile = .hm10
                default: throw fail("\(at).profile", "expected nus or hm10 (or service, write and notify UUIDs), found \(value)")
                }
            }
            let custom = ["service", "write", "notify"].map { entry[$0] as? String }
            if custom.contains(where: { $0 != nil }) {
                guard let service = custom[0].flatMap({ try? BluetoothUUID($0) }), let write = custom[1].flatMap({ try? BluetoothUUID($0) }),
                      let notify = custom[2].flatMap({ try? BluetoothUUID($0) }) else {
                    throw fail("\(at).service/write/notify", "expected all three as UUIDs, e.g. \"service\": \"FFE0\", \"write\": \"FFE1\", \"notify\": \"FFE1\"")
                }
                options.profile = SerialProfile(kind: .custom, service: service, write: write, notify: notify)
            }
            devices.append(SerialDaemonDevice(target: target, port: port, minimumRSSI: minimumRSSI, options: options, lineEnding: ending))
        }
        return devices
    }
}
