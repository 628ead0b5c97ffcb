import ArgumentParser
import Bluetide
import BluetideSerial
import BluetideTransport
import Foundation
import BluetideSupport

/// `bluetide uart serve`: the computer as a BLE serial device (Nordic UART or HM-10 peripheral),
/// bridged to stdin/stdout, a pty or a TCP port.
struct UARTServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Be a BLE serial device (Nordic UART or HM-10) that phones, microcontrollers and bluetide uart connect to.",
        discussion: """
            Advertises --name with the --profile's service and bridges it to stdin/stdout (a pipe), a pseudo-terminal \
            (--pty PATH) or one TCP client at a time (--tcp HOST:PORT). What centrals write comes out; what goes in is \
            notified to every subscribed central in chunks of ATT MTU − 3 bytes (HM-10: 20), at the link's pace; nothing is \
            sent while no central is subscribed (input waits). Nordic UART takes up to --max-centrals centrals, HM-10 one, as \
            the module does. Status lines (advertising, central connected, subscribed, left) go to stderr; --json makes them \
            JSON and prints received data as `received` records. As a pipe it exits once stdin has ended, everything was \
            sent, and no central wrote for --idle-timeout seconds; otherwise on Ctrl-C or SIGTERM.

            Examples:
              bluetide uart serve --name PC       # then elsewhere: bluetide uart PC
              bluetide uart serve --profile hm10 --name Robot --pty /tmp/ttyPC
              bluetide uart serve --name PC --tcp 7001 --transport hci-socket:0
              bluetide uart serve --log pc.log --log-format hex --transport hci-socket:0
            """)

    @Option(name: .long, help: "The service to serve: nus (Nordic UART) or hm10.")
    var profile: String = "nus"

    @Option(name: .long, help: "The name to advertise (default: Bluetide UART for nus, HMSoft for hm10).")
    var name: String?

    @Option(name: .long, help: "Controller transport: \(TransportSpec.syntaxSummary)")
    var transport: String = "virtual"

    @Option(name: .long, help: "Most centrals connected at once (Nordic UART only; HM-10 takes one).")
    var maxCentrals = 4

    @Option(name: .long, help: "Create a pseudo-terminal and a symlink at PATH to it (e.g. /tmp/ttyPC).")
    var pty: String?

    @Option(name: .long, help: "Serve one TCP client at a time on HOST:PORT (HOST defaults to 127.0.0.1).")
    var tcp: String?

    @Option(name: .long, help: "Pipe mode: seconds without a write from a central, after stdin ended and was sent, before exiting.")
    var idleTimeout: Double = 1

    @OptionGroup var traffic: UARTTrafficOptions

    @Flag(name: .long, help: "Status lines and received data as JSON lines.")
    var json = false

    func run() async throws {
        try await execute(io: .standard())
    }

    /// The server options the flags ask for.
    func serverOptions() throws -> SerialServerOptions {
        let kind: SerialProfile
        switch profile.lowercased() {
        case "nus", "nordic", "nordic-uart": kind = .nordicUART
        case "hm10", "hm-10": kind = .hm10
        default: throw CommandFailure("--profile \(profile): expected nus or hm10")
        }
        guard maxCentrals >= 1 else { throw CommandFailure("--max-centrals \(maxCentrals): expected at least 1") }
        let label = name ?? (kind.kind == .hm10 ? "HMSoft" : "Bluetide UART")
        guard !label.isEmpty, label.utf8.count <= 29 else {
            throw CommandFailure("--name \(label): expected 1 to 29 bytes (it must fit in an advertisement)")
        }
        return SerialServerOptions(name: label, profile: kind, maximumCentrals: kind.kind == .hm10 ? 1 : maxCentrals)
    }

    /// Runs the command with `io` as its terminal (tests pass pipes).
    func execute(io: UARTConsole) async throws {
        let options = try serverOptions()
        guard idleTimeout.isFinite, idleTimeout >= 0 else { throw CommandFailure("--idle-timeout \(idleTimeout): expected seconds ≥ 0") }
        if pty != nil, tcp != nil { throw CommandFailure("--pty and --tcp: choose one bridge") }
        let tcpAddress = try tcp.map(UARTCommand.parseTCP)
        let permit = try traffic.permission()
        let log = try traffic.openLog()
        defer { log?.close() }
        do { _ = try TransportSpec(parsing: transport) } catch { throw CommandFailure("--transport: \(error)") }
        let bluetooth: Bluetooth
        do {
            bluetooth = try await Bluetooth.open(transport: transport, configuration: .init(deviceName: options.name))
        } catch {
            throw CommandFailure.cannotOpenTransport(transport, error)
        }
        // Caught from here, so a stop right after the "advertising" line is not lost.
        let signal = StopSignal.install()
        let stop = Task { await signal.wait() }
        defer { stop.cancel() }
        let server: SerialServer
        do { server = try await SerialServer.start(on: bluetooth.peripheral, options: options) } catch {
            await PromptShutdown.close(bluetooth)
            throw CommandFailure("\(error)")
        }
        let reporter = UARTServeReporter(io: io, json: json, name: options.name)
        let watcher = Task { for await event in server.events { reporter.report(event) } }
        let bridge = SerialServerBridge(server: server, permission: permit) { [name = options.name] event in
            switch event {
            case let .sent(bytes): log?.record(.sent, device: name, bytes: bytes)
            case let .received(chunk): log?.record(.received, device: chunk.central.map { "\($0)" } ?? "?", bytes: chunk.bytes)
            case let .notice(notice): reporter.message("\(notice)")
            }
        }
        do {
            if let pty {
                try await Self.untilStopped(stop) { try await bridge.bridgePseudoTerminal(at: pty) }
            } else if let tcpAddress {
                try await Self.untilStopped(stop) { try await bridge.bridgeTCP(host: tcpAddress.host, port: tcpAddress.port) }
            } else {
                // A stop ends the input and closes the server (a pending drain ends), then the pipe.
                let json = json
                try await Self.untilStopped(stop, onStop: { io.input.stop(); await server.close() }) {
                    await bridge.pipe(input: io.input, idleTimeout: .milliseconds(Int64(idleTimeout * 1000)), clock: ContinuousClock()) { chunk in
                        await Self.print(chunk, to: io, json: json, reporter: reporter)
                    }
                }
            }
        } catch {
            await server.close()
            watcher.cancel()
            await PromptShutdown.close(bluetooth)
            throw error as? CommandFailure ?? CommandFailure("\(error)")
        }
        await server.close()
        await watcher.value
        await PromptShutdown.close(bluetooth)
    }

    /// Runs `body` until it ends or `stop` comes; then `onStop` runs and `body` is cancelled
    /// (and waited for). `stop` itself is left running (its signal handling lasts until the end).
    static func untilStopped(_ stop: Task<String, Never>, onStop: @escaping @Sendable () async -> Void = {},
                             _ body: @escaping @Sendable () async throws -> Void) async throws {
        let work = Task { try await body() }
        let watcher = Task {
            _ = await stop.value
            guard !Task.isCancelled else { return }
            await onStop()
            work.cancel()
        }
        defer { watcher.cancel() }
        try await withTaskCancellationHandler { try await work.value } onCancel: { work.cancel() }
    }

    /// A central's write on stdout: the bytes, or with --json a `received` record.
    static func print(_ chunk: SerialServerChunk, to io: UARTConsole, json: Bool, reporter: UARTServeReporter) async {
        guard json else { return await io.writeData(chunk.bytes) }
        var fields: [String: JSONOutputValue] = ["value": JSONOutput.value(chunk.bytes), "text": .string(String(decoding: chunk.bytes, as: UTF8.self))]
        if let central = chunk.central { fields["device"] = JSONOutput.device(central) }
        await io.writeData(Array((reporter.line("received", fields) + "\n").utf8))
    }
}

/// Server events as status lines on stderr ("PC: central F1:…/R connected"), or with --json as
/// records of docs/json-output.md: `advertising` (`localName`, `profile`), `connected`, `subscribed`
/// (`chunkBytes`), `unsubscribed`, `disconnected` (`reason`), `refused` (`maximum`), each with
/// the central as `device`; `closed`; `message` (`text`).
struct UARTServeReporter: Sendable {
    let io: UARTConsole
    let json: Bool
    let name: String
    let start = ContinuousClock.now

    func report(_ event: SerialServerEvent) {
        guard json else { return io.status("\(name): \(event)") }
        var fields: [String: JSONOutputValue] = [:]
        switch event {
        case let .advertising(name, profile):
            fields["localName"] = .string(name)
            fields["profile"] = .string(profile.kind.rawValue)
        case let .connected(central), let .unsubscribed(central):
            fields["device"] = JSONOutput.device(central)
        case let .subscribed(central, chunk):
            fields["device"] = JSONOutput.device(central)
            fields["chunkBytes"] = .integer(Int64(chunk))
        case let .disconnected(central, reason):
            fields["device"] = JSONOutput.device(central)
            fields["reason"] = .string(reason)
        case let .refused(central, maximum):
            fields["device"] = JSONOutput.device(central)
            fields["maximum"] = .integer(Int64(maximum))
        case .closed: break
        }
        io.status(line(event.name, fields))
    }

    func message(_ text: String) {
        io.status(json ? line("message", ["text": .string(text)]) : "\(name): \(text)")
    }

    /// One record: `fields`, the `type` and the `time`.
    func line(_ type: String, _ fields: [String: JSONOutputValue]) -> String {
        let elapsed = ContinuousClock.now - start
        var fields = fields
        fields["time"] = JSONOutput.time(
            monotonic: elapsed.inSeconds)
        return JSONOutput.line(type, fields)
    }
}
