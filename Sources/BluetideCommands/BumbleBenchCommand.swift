import ArgumentParser
import BluetideBench
import BluetideBase
import BluetideTransport
import Foundation

extension BumbleBenchScenario: ExpressibleByArgument {}

/// Runs a bench library call, turning its failures into the command's one-line failures.
func benchCall<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let failure as BenchFailure {
        throw CommandFailure(failure.message, isLinkLoss: failure.isLinkLoss)
    }
}

/// Options every `bench central|peripheral|loopback` run shares, named as Bumble's bench app
/// names them.
struct BumbleBenchOptions: ParsableArguments {
    @Option(name: .long, help: "send, receive, ping or pong (default: send for the central, receive for the peripheral).")
    var scenario: BumbleBenchScenario?

    @Option(name: [.long, .customShort("c")], help: "SEQUENCE packets to send (send, ping).")
    var packetCount = 10

    @Option(name: [.long, .customShort("s")], help: "Octets per packet, 10-octet header included; at most ATT MTU − 3 over GATT (send, ping).")
    var packetSize = 500

    @Option(name: .long, help: "Milliseconds between packets; 0 sends as fast as the controller's buffers allow (send, ping).")
    var pace: Double = 0

    @Option(name: .long, help: "Seconds to wait once the link is ready, before the RESET (send, ping).")
    var startDelay: Double = 1

    @Flag(name: .long, help: "Keep serving runs after the last packet until the peer disconnects (receive, pong).")
    var linger = false

    @Option(name: .long, help: "Further runs after the first (send, ping); the peer must --linger.")
    var `repeat` = 0

    @Option(name: .long, help: "Seconds between repeated runs.")
    var repeatDelay: Double = 1

    @Option(name: .long, help: "ATT MTU to offer, 23 to 517.")
    var attMtu = 517

    @Option(name: .long, help: "Seconds to find and connect to the peer (central), or to wait for one (peripheral), and for its first packet.")
    var timeout: Double = 30

    @Option(name: .long, help: "Seconds without an expected packet after which the run fails.")
    var stallTimeout: Double = 10

    @Flag(name: .long, help: "Print each run's figures as one JSON object.")
    var json = false

    @Flag(name: .long, help: "No progress lines on standard error.")
    var quiet = false

    /// The settings for `role`, checked.
    func settings(for role: BumbleBenchRole) throws -> BumbleBenchSettings {
        let settings = BumbleBenchSettings(
            scenario: scenario ?? role.defaultScenario, packetCount: packetCount, packetSize: packetSize,
            paceMilliseconds: pace, startDelaySeconds: startDelay, linger: linger, repeatCount: `repeat`,
            repeatDelaySeconds: repeatDelay, stallSeconds: stallTimeout)
        do { try settings.validate() } catch { throw CommandFailure(error.message) }
        guard (23...517).contains(attMtu) else { throw CommandFailure("--att-mtu \(attMtu): expected 23 to 517") }
        guard timeout > 0, timeout.isFinite else { throw CommandFailure("--timeout \(timeout): expected a positive number of seconds") }
        return settings
    }

    /// Where progress goes (standard error), unless `--quiet`.
    var log: @Sendable (String) -> Void {
        if quiet { return { _ in } }
        return { line in StandardStreams.error.line("bench: \(line)") }
    }

    /// Prints the reports; fails when a run lost, reordered or garbled packets.
    func emit(_ reports: [BumbleBenchReport]) throws {
        for report in reports { StandardStreams.output.line(json ? report.json : report.line) }
        if !json, let summary = BumbleBenchReport.summary(of: reports) { StandardStreams.output.line(summary) }
        if let bad = reports.first(where: { !$0.isClean }) {
            throw CommandFailure("bench \(bad.scenario.rawValue): the data was not intact: \(bad.line)")
        }
    }
}

/// Transport and address options of one side.
struct BumbleBenchTransportOptions: ParsableArguments {
    @Option(name: .long, help: "Controller transport shared with the peer: \(TransportSpec.syntaxSummary)")
    var transport: String

    /// Opens the transport; the in-process virtual link is refused (the peer could not be there).
    func open() async throws -> any HCITransport {
        let spec: TransportSpec
        do { spec = try TransportSpec(parsing: transport) } catch { throw CommandFailure("--transport: \(error)") }
        if case .virtual = spec.kind {
            throw CommandFailure("--transport \(transport): the in-process virtual link has no peer from another process; use `bluetide bench loopback` for both sides in this process, or share controllers (`bluetide controllers tcp-server:_:9000 tcp-server:_:9001`, or Bumble's) and pass --transport tcp-client:127.0.0.1:9000")
        }
        do { return try await Transport.open(spec) } catch {
            throw CommandFailure.cannotOpenTransport(transport, error)
        }
    }
}

/// Parses a random static address for `option`.
func benchOwnAddress(_ text: String, option: String) throws -> BluetoothAddress {
    do { return try BumbleBenchSide.ownAddress(text, option: option) } catch { throw CommandFailure(error.message) }
}

extension BumbleBenchOptions {
    /// One side of the bench against a peer in another process: checks the options and this
    /// side's `address`, opens `link`'s transport, runs `role` (finding `peer` as a central; a
    /// peripheral advertises `name`) and prints the reports.
    func runSide(
        _ role: BumbleBenchRole, link: BumbleBenchTransportOptions, address: String, peer: String, name: String
    ) async throws {
        let settings = try settings(for: role)
        let own = try benchOwnAddress(address, option: "--address")
        let transport = try await link.open()
        try emit(try await BumbleBenchSide.run(
            role: role, transport: transport, address: own, peer: peer, name: name, options: self, settings: settings))
    }
}

extension BumbleBenchSide {
    /// Runs one side with the command's options (see the library's `run`).
    static func run(
        role: BumbleBenchRole, transport: any HCITransport, address: BluetoothAddress, peer: String, name: String,
        options: BumbleBenchOptions, settings: BumbleBenchSettings
    ) async throws -> [BumbleBenchReport] {
        try await benchCall {
            try await run(
                role: role, transport: transport, address: address, peer: peer, name: name, attMTU: options.attMtu,
                timeout: options.timeout, settings: settings, log: options.log)
        }
    }
}

/// `bluetide bench central`: the central side of Bumble's bench (GATT client).
struct BumbleBenchCentral: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "central",
        abstract: "Bumble-compatible bench, central side: connect to a bench peripheral and run a scenario over GATT.",
        discussion: """
            Speaks the GATT service and packet format of Bumble's bench app (bumble.apps.bench), so either side can be Bumble or Bluetide. Scenarios pair up: send ↔ receive (throughput, Write Command central→peripheral or notifications peripheral→central), ping ↔ pong (round-trip time). Figures go to standard output, progress to standard error; the exit status is 2 when a run fails or its data was not intact.

            Examples, with two linked virtual controllers:
              bluetide controllers tcp-server:_:9000 tcp-server:_:9001
              python -m bumble.apps.bench peripheral tcp-client:127.0.0.1:9001
              bluetide bench central --transport tcp-client:127.0.0.1:9000 \\
                  --packet-count 300 --packet-size 500
            Latency against a Bumble pong:
              python -m bumble.apps.bench --scenario pong peripheral \\
                  tcp-client:127.0.0.1:9001
              bluetide bench central --transport tcp-client:127.0.0.1:9000 \\
                  --scenario ping --packet-count 100 --packet-size 100
            """)

    @OptionGroup var link: BumbleBenchTransportOptions

    @Option(name: .long, help: "Address (any type) or advertised name of the bench peripheral.")
    var peripheral = BumbleBenchService.peripheralAddress

    @Option(name: .long, help: "This central's random static address.")
    var address = BumbleBenchService.centralAddress

    @OptionGroup var options: BumbleBenchOptions

    func run() async throws {
        try await options.runSide(.central, link: link, address: address, peer: peripheral, name: "Bluetide Bench Central")
    }
}

/// `bluetide bench peripheral`: the peripheral side of Bumble's bench (GATT server).
struct BumbleBenchPeripheral: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peripheral",
        abstract: "Bumble-compatible bench, peripheral side: advertise the bench GATT service and run a scenario with the central that connects.",
        discussion: """
            Advertises the name (default "Speed Peripheral") from a random static address (default F1:F1:F1:F1:F1:F1) as Bumble's bench app does, serves its service (TX takes Write Command and Write Request, RX notifies), and is ready once the central subscribes to RX.

            Examples, with two linked virtual controllers:
              bluetide controllers tcp-server:_:9000 tcp-server:_:9001
              bluetide bench peripheral --transport tcp-client:127.0.0.1:9001
              python -m bumble.apps.bench central tcp-client:127.0.0.1:9000
            Notifications towards a Bumble central:
              bluetide bench peripheral --transport tcp-client:127.0.0.1:9001 \\
                  --scenario send --packet-count 300
              python -m bumble.apps.bench --scenario receive central \\
                  tcp-client:127.0.0.1:9000
            """)

    @OptionGroup var link: BumbleBenchTransportOptions

    @Option(name: .long, help: "This peripheral's random static address.")
    var address = BumbleBenchService.peripheralAddress

    @Option(name: .long, help: "The name to advertise.")
    var name = BumbleBenchService.peripheralName

    @OptionGroup var options: BumbleBenchOptions

    func run() async throws {
        guard !name.isEmpty, name.utf8.count <= 26 else {
            throw CommandFailure("--name \"\(name)\": expected 1 to 26 octets (it must fit in the advertising data)")
        }
        try await options.runSide(.peripheral, link: link, address: address, peer: "", name: name)
    }
}

/// `bluetide bench loopback`: both sides in this process, on a private virtual link.
struct BumbleBenchLoopback: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loopback",
        abstract: "Run both sides of the Bumble-compatible bench in this process, on an in-process virtual link.",
        discussion: """
            The central runs --scenario (default send) and the peripheral its peer scenario (receive, send, pong or ping). Prints both sides' figures.

            Examples:
              bluetide bench loopback --packet-count 1000 --packet-size 244
              bluetide bench loopback --scenario receive --packet-count 1000
              bluetide bench loopback --scenario ping --packet-count 50 \\
                  --packet-size 100 --json
            """)

    @OptionGroup var options: BumbleBenchOptions

    func run() async throws {
        var central = try options.settings(for: .central)
        // Repeated runs need a receiver that lingers (linger matters to receivers only).
        if central.repeatCount > 0 { central.linger = true }
        var peripheral = central
        peripheral.scenario = central.scenario.peer
        try options.emit(try await Self.run(central: central, peripheral: peripheral, options: options))
    }

    /// Runs both sides on a fresh virtual link; returns the central's reports, then the peripheral's.
    static func run(
        central: BumbleBenchSettings, peripheral: BumbleBenchSettings, options: BumbleBenchOptions
    ) async throws -> [BumbleBenchReport] {
        try await benchCall {
            try await BumbleBenchSide.loopback(
                central: central, peripheral: peripheral, attMTU: options.attMtu, timeout: options.timeout, log: options.log)
        }
    }
}
