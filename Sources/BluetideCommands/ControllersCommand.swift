import ArgumentParser
import BluetideTransport
import Dispatch
import Foundation

/// `bluetide controllers SPEC SPEC…`: virtual LE controllers on TCP ports sharing one virtual
/// radio, for hosts in other processes (our own stack over `tcp-client:…`, Bumble hosts).
struct ControllersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "controllers",
        abstract: "Run linked virtual LE controllers, one per TCP port (H4 over TCP), sharing one virtual radio.",
        discussion: """
            Each controller takes one host at a time; a second connection is refused. When a host
            disconnects, its links end for the peers with reason 0x08 (supervision timeout), its
            advertising and scanning stop, and the next host on that port gets a clean controller.

            The first output line is "READY PORT PORT ..." with the real port numbers (in the order
            given; port 0 picks a free port), then one line per controller, then one line per host
            connect or disconnect. Stops on SIGINT or SIGTERM. With --json every line is a record of
            docs/json-output.md instead: ready (ports), controller (number, listen, device),
            host-connected, host-disconnected (reason), host-refused, stopping (reason).

            Controllers listen on this computer only (127.0.0.1) unless you name an interface:
            tcp-server:0.0.0.0:9000 lets other machines (and anyone on the network) attach a host.

            Examples:
              bluetide controllers tcp-server:_:9000 tcp-server:_:9001
              bluetide controllers tcp-server:127.0.0.1:0 tcp-server:127.0.0.1:0 \\
                  --exit-on-stdin-eof
              bluetide controllers tcp-server:_:9000 tcp-server:_:9001 tcp-server:_:9002 \\
                  --rssi 1-2=-50 --rssi 1-3=-80
            then, in other terminals:
              python Interop/bumble/peripheral.py tcp-client:127.0.0.1:9001
              python -m bumble.apps.bench central tcp-client:127.0.0.1:9000
            """)

    @Argument(help: "tcp-server:HOST:PORT for each controller (HOST _ = this computer only, 127.0.0.1; 0.0.0.0 = every interface; PORT 0 = any free port).")
    var specs: [String] = []

    @Option(name: .long, parsing: .singleValue, help: ArgumentHelp(
        "A-B=DBM: controllers A and B (numbers in the order given, from 1) hear each other at DBM dBm, e.g. 1-2=-50 (repeatable; default -50 for every pair).",
        valueName: "pair"))
    var rssi: [String] = []

    @Flag(name: .long, help: "Also stop when standard input reaches end of file (so the controllers die with the process that started them).")
    var exitOnStdinEOF = false

    @Flag(name: .long, help: "One JSON object per line (docs/json-output.md) instead of text.")
    var json = false

    /// The listeners the specs ask for; a bad spec is a one-line error (exit 2).
    func listeners() throws -> [VirtualControllerServer.Listener] {
        guard !specs.isEmpty else {
            throw CommandFailure.usage("controllers: give at least one tcp-server:HOST:PORT (example: bluetide controllers tcp-server:_:9000 tcp-server:_:9001)")
        }
        return try specs.map { spec in
            do {
                return try VirtualControllerServer.Listener(spec: spec)
            } catch {
                throw CommandFailure.usage("controllers: \(error)")
            }
        }
    }

    /// The line printed for each listening controller.
    static func line(for endpoint: VirtualControllerServer.Endpoint) -> String {
        let reach = isLocalOnly(endpoint) ? " (this computer only; tcp-server:0.0.0.0:PORT listens on every interface)" : ""
        return "controller \(endpoint.number): tcp-server \(endpoint.host):\(endpoint.port), address \(endpoint.publicAddress)\(reach)"
    }

    private static func isLocalOnly(_ endpoint: VirtualControllerServer.Endpoint) -> Bool {
        endpoint.host == "127.0.0.1" || endpoint.host == "::1" || endpoint.host == "localhost"
    }

    /// The `--json` record of a listening controller: its number, where it listens (`localOnly`
    /// when only this computer can reach it) and its public address as a `device`.
    static func record(for endpoint: VirtualControllerServer.Endpoint, at time: JSONOutputValue) -> String {
        JSONOutput.line("controller", [
            "controller": .integer(Int64(endpoint.number)),
            "listen": ["host": .string(endpoint.host), "port": .integer(Int64(endpoint.port)), "localOnly": .bool(isLocalOnly(endpoint))],
            "transport": .string("tcp-server:\(endpoint.host):\(endpoint.port)"),
            "device": JSONOutput.device(endpoint.publicAddress),
            "time": time,
        ])
    }

    /// The `--json` record of a host connecting, leaving or being refused; `from` is the host's
    /// TCP address (IP:port).
    static func record(for event: VirtualControllerServer.Event, at time: JSONOutputValue) -> String {
        switch event {
        case let .hostConnected(controller, peer):
            JSONOutput.line("host-connected", ["controller": .integer(Int64(controller)), "from": .string(peer), "time": time])
        case let .hostDisconnected(controller, peer, reason):
            JSONOutput.line("host-disconnected", [
                "controller": .integer(Int64(controller)), "from": .string(peer), "reason": .string(reason), "time": time,
            ])
        case let .hostRefused(controller, peer):
            JSONOutput.line("host-refused", [
                "controller": .integer(Int64(controller)), "from": .string(peer),
                "reason": "another host is connected", "time": time,
            ])
        }
    }

    func run() async throws {
        let listeners = try listeners()
        let start = ContinuousClock.now
        let json = self.json
        let time: @Sendable () -> JSONOutputValue = { JSONOutput.time(monotonic: SubscribeCommand.seconds(since: start)) }
        var pairs: [ControllerPairRSSI] = []
        for text in rssi {
            guard let pair = ControllerPairRSSI(parsing: text), pair.first <= listeners.count, pair.second <= listeners.count else {
                throw CommandFailure.usage(
                    "--rssi \(text): expected A-B=DBM with two different controller numbers of 1…\(listeners.count) and -127…20 dBm, e.g. --rssi 1-2=-50",
                    field: "--rssi")
            }
            pairs.append(pair)
        }
        let stop = StopSignal.install(onStdinEOF: exitOnStdinEOF)
        let server: VirtualControllerServer
        do {
            server = try await VirtualControllerServer.start(listeners, rssi: pairs)
        } catch {
            throw CommandFailure("controllers: \(error)")
        }
        let ports = server.endpoints.map(\.port)
        Console.line(json
            ? JSONOutput.line("ready", ["ports": .array(ports.map { .integer(Int64($0)) }), "time": time()])
            : "READY " + ports.map(String.init).joined(separator: " "))
        for endpoint in server.endpoints {
            Console.line(json ? Self.record(for: endpoint, at: time()) : Self.line(for: endpoint))
        }
        let logger = Task {
            for await event in server.events { Console.line(json ? Self.record(for: event, at: time()) : "\(event)") }
        }
        let reason = await stop.wait()
        Console.line(json ? JSONOutput.line("stopping", ["reason": .string(reason), "time": time()]) : "stopping (\(reason))")
        await server.close()
        await logger.value
    }
}

/// Line output that reaches a pipe at once (scripts wait for the READY line).
enum Console {
    static func line(_ text: String) {
        StandardStreams.output.line(text)
    }
}

