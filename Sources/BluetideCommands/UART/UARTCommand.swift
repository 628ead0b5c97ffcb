import ArgumentParser
import Bluetide
import BluetideSerial
import BluetideGateway
import Foundation

/// `bluetide uart`: the client (`connect`, the default) and the server (`serve`) of BLE serial.
struct UARTCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uart",
        abstract: "BLE serial (HM-10, Nordic UART): talk to devices, or be one.",
        discussion: """
            Without a subcommand it is `connect`: it talks to HM-10 and Nordic UART devices as a terminal, a pipe, \
            a pty or a TCP port (see uart connect --help). `serve` makes this computer such a device.

            Examples:
              bluetide uart --emulate hm10              # type AT+NAME?, Enter
              bluetide uart Robot1 --pty /tmp/ttyBLE    # screen /tmp/ttyBLE
              bluetide uart serve --name PC --pty /tmp/ttyPC
            """,
        subcommands: [UARTConnectCommand.self, UARTServeCommand.self, UARTPlotCommand.self, UARTDaemonCommand.self],
        defaultSubcommand: UARTConnectCommand.self)

    static func parseTCP(_ text: String) throws -> (host: String, port: UInt16) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let hostPart: String
        let portPart: String
        switch parts.count {
        case 1: (hostPart, portPart) = ("127.0.0.1", parts[0])
        case 2: (hostPart, portPart) = (parts[0].isEmpty ? "127.0.0.1" : parts[0], parts[1])
        default: throw CommandFailure("--tcp \(text): expected HOST:PORT or PORT, e.g. 127.0.0.1:7000")
        }
        guard let port = UInt16(portPart) else { throw CommandFailure("--tcp \(text): \(portPart) is not a port number (0–65535)") }
        return (hostPart, port)
    }
}

/// `bluetide uart [connect] [DEVICE…]`: a terminal, a pipe or a serial-port bridge to HM-10 and
/// Nordic UART devices.
struct UARTConnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect",
        abstract: "Talk to BLE serial devices (HM-10, Nordic UART) as text: a terminal, a pipe, a pty or a TCP port.",
        discussion: """
            With no DEVICE it searches for --scan-time seconds and lists UART devices strongest first (coloured \
            bars, name, address, services); on a terminal you pick one, elsewhere a single one is used.
            On a terminal you type lines (Enter sends the line and --eol, Ctrl-C quits); Ctrl-] opens a menu: quit, hex on/off, \
            send a file, RSSI, reconnect, next device. With stdin or stdout not a terminal it is a pipe: stdin goes \
            to the device, the device's bytes to stdout, and it exits once stdin has ended and nothing came back \
            for --idle-timeout seconds. --pty PATH makes a pseudo-terminal linked at PATH for minicom, screen or \
            pyserial; --tcp HOST:PORT serves one TCP client at a time. Status lines (connected, link lost, \
            reconnecting n of N, gave up) go to stderr; --json makes them JSON. While a link is down, up to \
            --outage-buffer bytes wait and are sent once it is back; more is refused with a message.

            Examples:
              bluetide uart --emulate hm10              # type AT+NAME?, Enter
              echo 'AT+VERS?' | bluetide uart HMSoft --emulate hm10
              bluetide uart Robot1 --pty /tmp/ttyBLE    # screen /tmp/ttyBLE
              bluetide uart Robot1 --tcp 127.0.0.1:7000 # nc 127.0.0.1 7000
              bluetide uart Robot1 Robot2 --broadcast --timestamps
              bluetide uart --list --scan-time 10 --transport hci-socket:0
              bluetide uart Sensor --service 1234 --write 1235 --notify 1236
              bluetide uart Robot1 --log robot.log --permit ro
              bluetide uart serve --name PC --pty /tmp/ttyPC   # be the device
            """)

    @Argument(help: "Devices by advertised name or address (AA:BB:CC:DD:EE:FF[/P|/R]); none: search and pick.")
    var devices: [String] = []

    @OptionGroup var session: DeviceSessionOptions

    @Option(name: .long, help: "Seconds to search for devices (with no DEVICE, or to find the ones named).")
    var scanTime: Double = 5

    @Flag(name: .long, help: "List the UART devices found and exit.")
    var list = false

    @Flag(name: .long, help: "With --list: every device, not only UART ones.")
    var all = false

    @Option(name: .long, help: "What Enter (or a newline read from a pipe) sends: cr, lf, crlf or none. Pipes pass bytes unchanged unless this is given.")
    var eol: String?

    @Flag(name: .long, help: "Show what you send (line mode: keep the typed line; --char-mode: echo keys).")
    var echo = false

    @Flag(name: .long, help: "Send each key as it is typed instead of a line at a time.")
    var charMode = false

    @Flag(name: .long, help: "Show received bytes as hex.")
    var hex = false

    @Flag(name: .long, help: "Prefix each received line with the time.")
    var timestamps = false

    @Option(name: .long, help: "Pipe mode: seconds without a reply, after stdin ended, before exiting.")
    var idleTimeout: Double = 1

    @Option(name: .long, help: "Create a pseudo-terminal and a symlink at PATH to it (e.g. /tmp/ttyBLE).")
    var pty: String?

    @Option(name: .long, help: "Serve one TCP client at a time on HOST:PORT (HOST defaults to 127.0.0.1).")
    var tcp: String?

    @Flag(name: .long, help: "With several devices: send input to all of them (default: the selected one).")
    var broadcast = false

    @Option(name: .long, help: "Most devices connected at once.")
    var maxConnections = 4

    @Option(name: .long, help: "Reconnect attempts after a lost link (0: none).")
    var reconnectTries = 3

    @Option(name: .long, help: "Seconds between reconnect attempts and between connect retries.")
    var reconnectInterval: Double = 1

    @Option(name: .long, help: "Extra connect attempts after a failed connect.")
    var connectRetries = 3

    @Option(name: .long, help: "Bytes held for a device while its link is down; more is refused.")
    var outageBuffer = 16_384

    @Option(name: .long, help: "Report each link's RSSI every SECONDS on stderr.")
    var rssiInterval: Double?

    @Option(name: .long, help: "Serial service UUID, with --write and --notify, for devices that are neither HM-10 nor Nordic UART.")
    var service: String?

    @Option(name: .customLong("write"), help: "Characteristic to write outgoing bytes to (with --service).")
    var writeCharacteristic: String?

    @Option(name: .customLong("notify"), help: "Characteristic that notifies incoming bytes (with --service).")
    var notifyCharacteristic: String?

    @Flag(name: .long, help: "Send with Write Requests (each acknowledged by the device) instead of Write Commands.")
    var writeWithResponse = false

    @OptionGroup var traffic: UARTTrafficOptions

    @OptionGroup var broker: MQTTPublishOptions

    @Flag(name: .long, help: "Status lines (and received data, device lists) as JSON lines.")
    var json = false

    func run() async throws {
        try await execute(io: .standard())
    }

    /// The serial-link options the flags ask for.
    func linkOptions() throws -> SerialLinkOptions {
        guard reconnectTries >= 0 else { throw CommandFailure("--reconnect-tries \(reconnectTries): expected 0 or more") }
        guard connectRetries >= 0 else { throw CommandFailure("--connect-retries \(connectRetries): expected 0 or more") }
        guard reconnectInterval.isFinite, reconnectInterval >= 0 else { throw CommandFailure("--reconnect-interval \(reconnectInterval): expected seconds ≥ 0") }
        guard outageBuffer >= 0 else { throw CommandFailure("--outage-buffer \(outageBuffer): expected bytes ≥ 0") }
        if let rssiInterval, !(rssiInterval.isFinite && rssiInterval > 0) { throw CommandFailure("--rssi-interval \(rssiInterval): expected seconds > 0") }
        var profile: SerialProfile?
        switch (service, writeCharacteristic, notifyCharacteristic) {
        case (nil, nil, nil): break
        case let (service?, write?, notify?):
            func uuid(_ text: String, _ flag: String) throws -> BluetoothUUID {
                guard let value = try? BluetoothUUID(text) else {
                    throw CommandFailure("\(flag) \(text): expected a UUID (FFE1 or 6E400002-B5A3-F393-E0A9-E50E24DCCA9E)")
                }
                return value
            }
            profile = SerialProfile(kind: .custom, service: try uuid(service, "--service"), write: try uuid(write, "--write"), notify: try uuid(notify, "--notify"))
        default:
            throw CommandFailure("--service, --write and --notify go together: name all three, e.g. --service FFE0 --write FFE1 --notify FFE1")
        }
        return SerialLinkOptions(
            reconnectTries: reconnectTries, reconnectInterval: .milliseconds(Int64(reconnectInterval * 1000)),
            connectRetries: connectRetries, outageBufferLimit: outageBuffer, profile: profile,
            rssiInterval: rssiInterval.map { .milliseconds(Int64($0 * 1000)) }, writeWithResponse: writeWithResponse)
    }

    /// Checks the flags that do not need a device.
    func validate(io: UARTConsole) throws -> LineEnding? {
        guard scanTime.isFinite, scanTime > 0 else { throw CommandFailure("--scan-time \(scanTime): expected seconds > 0") }
        guard idleTimeout.isFinite, idleTimeout >= 0 else { throw CommandFailure("--idle-timeout \(idleTimeout): expected seconds ≥ 0") }
        guard maxConnections >= 1 else { throw CommandFailure("--max-connections \(maxConnections): expected at least 1") }
        guard devices.count <= maxConnections else {
            throw CommandFailure("\(devices.count) devices named but --max-connections is \(maxConnections); raise it or name fewer")
        }
        if pty != nil, tcp != nil { throw CommandFailure("--pty and --tcp: choose one bridge") }
        if (pty != nil || tcp != nil), devices.count > 1 { throw CommandFailure("--pty and --tcp bridge one device; name one") }
        guard let eol else { return nil }
        guard let ending = LineEnding(rawValue: eol.lowercased()) else {
            throw CommandFailure("--eol \(eol): expected one of cr, lf, crlf, none")
        }
        return ending
    }

    /// Runs the command with `io` as its terminal (tests pass pipes).
    func execute(io: UARTConsole) async throws {
        let ending = try validate(io: io)
        let options = try linkOptions()
        let tcpAddress = try tcp.map(UARTCommand.parseTCP)
        let permit = try traffic.permission()
        let log = try traffic.openLog()
        defer { log?.close() }
        try broker.validate(app: "uart")
        let publisher = try await broker.connect(app: "uart")
        do {
            try await execute(io: io, ending: ending, options: options, tcpAddress: tcpAddress, permit: permit, log: log, publisher: publisher)
        } catch {
            await publisher?.finishReporting()
            throw error
        }
        if let publisher, let problem = await publisher.finishReporting() { throw CommandFailure(problem) }
    }

    private func execute(
        io: UARTConsole, ending: LineEnding?, options: SerialLinkOptions, tcpAddress: (host: String, port: UInt16)?,
        permit: UARTPermission, log: UARTTrafficLog?, publisher: AppPublisher?
    ) async throws {
        // The UART console owns standard input: pairing is answered by --pairing (or Just Works).
        let deviceSession = try await DeviceSession.open(session, conversation: nil)
        await deviceSession.central.setMaximumConnections(maxConnections)
        let reporter = UARTStatusReporter(io: io, json: json)
        var links: [SerialLink] = []
        do {
            let scanner = SerialScanner(central: deviceSession.central)
            let targets = try await chooseDevices(scanner: scanner, io: io)
            guard !targets.isEmpty else { await deviceSession.close(); return }
            for target in targets {
                let label = target.name ?? "\(target.address)"
                do {
                    links.append(try await SerialLink.connect(to: target, on: deviceSession.central, options: options))
                } catch let error as SerialLinkError {
                    throw CommandFailure("\(error)")
                } catch {
                    throw CommandFailure("cannot connect to \(label): \(error)")
                }
            }
            let runner = UARTRunner(
                links: links, io: io, reporter: reporter,
                formatter: UARTOutputFormatter(hex: hex, prefixNames: links.count > 1, timestamps: timestamps),
                json: json, broadcast: broadcast, permit: permit, log: log, publisher: publisher)
            // Each link's status events are reported while the mode runs.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for link in links { group.addTask { for await event in link.status { reporter.report(event, link: link) } } }
                defer { group.cancelAll() }
                if let pty {
                    try await runner.bridgePTY(path: pty)
                } else if let tcpAddress {
                    try await runner.bridgeTCP(host: tcpAddress.host, port: tcpAddress.port)
                } else if io.isInteractive {
                    try await runner.interactive(ending: ending ?? .crlf, echo: echo, charMode: charMode)
                } else {
                    try await runner.pipe(ending: ending, idleTimeout: idleTimeout)
                }
            }
        } catch {
            for link in links { await link.close() }
            await deviceSession.close()
            throw error
        }
        for link in links { await link.close() }
        await deviceSession.close()
    }

    /// The devices to connect: those named, or one picked from a search.
    func chooseDevices(scanner: SerialScanner, io: UARTConsole) async throws -> [Advertisement] {
        if !devices.isEmpty, !list {
            var found: [Advertisement] = []
            for device in devices {
                do { found.append(try await scanner.find(device, timeout: .milliseconds(Int64(scanTime * 1000)))) } catch {
                    throw CommandFailure("\(error)")
                }
            }
            return found
        }
        io.status(json ? "" : "searching for UART devices for \(DeviceSession.format(scanTime)) s…", skipEmpty: true)
        let found: [Advertisement]
        do { found = try await scanner.discover(timeout: .milliseconds(Int64(scanTime * 1000)), everything: all) } catch {
            throw CommandFailure("cannot scan: \(error)")
        }
        let rows = UARTDeviceList.rows(found, color: io.isInteractive && !json, json: json)
        if list {
            for row in rows { await io.printLine(row) }
            if found.isEmpty, !json { io.status("no UART devices found; try --all to list every device, or a longer --scan-time") }
            return []
        }
        guard !found.isEmpty else {
            let everything = (try? await scanner.discover(timeout: .milliseconds(500), everything: true)) ?? []
            let names = everything.map { $0.name ?? "\($0.address)" }
            throw CommandFailure("no UART devices (HM-10 FFE0 or Nordic UART) found in \(DeviceSession.format(scanTime)) s"
                + (names.isEmpty ? "; is the transport right (--transport)?" : "; seen: \(names.joined(separator: ", ")); name one to try it anyway"))
        }
        for row in rows { io.status(row) }
        if found.count == 1 { return found }
        guard io.isInteractive else {
            throw CommandFailure("\(found.count) UART devices found; name one, e.g. bluetide uart \"\(found[0].name ?? "\(found[0].address)")\"")
        }
        let choice = try await io.prompt("pick 1–\(found.count) (Enter: 1): ")
        let trimmed = choice.trimmingCharacters(in: .whitespaces)
        guard let index = trimmed.isEmpty ? 1 : Int(trimmed), (1...found.count).contains(index) else {
            throw CommandFailure("\"\(trimmed)\" is not a number from 1 to \(found.count)")
        }
        return [found[index - 1]]
    }
}
