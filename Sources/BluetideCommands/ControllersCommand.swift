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
            connect or disconnect. Stops on SIGINT or SIGTERM.

            Controllers listen on this computer only (127.0.0.1) unless you name an interface:
            tcp-server:0.0.0.0:9000 lets other machines (and anyone on the network) attach a host.

            Examples:
              bluetide controllers tcp-server:_:9000 tcp-server:_:9001
              bluetide controllers tcp-server:127.0.0.1:0 tcp-server:127.0.0.1:0 \\
                  --exit-on-stdin-eof
            then, in other terminals:
              python Interop/bumble/peripheral.py tcp-client:127.0.0.1:9001
              python -m bumble.apps.bench central tcp-client:127.0.0.1:9000
            """)

    @Argument(help: "tcp-server:HOST:PORT for each controller (HOST _ = this computer only, 127.0.0.1; 0.0.0.0 = every interface; PORT 0 = any free port).")
    var specs: [String] = []

    @Flag(name: .long, help: "Also stop when standard input reaches end of file (so the controllers die with the process that started them).")
    var exitOnStdinEOF = false

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
        let reach = endpoint.host == "127.0.0.1" || endpoint.host == "::1" || endpoint.host == "localhost"
            ? " (this computer only; tcp-server:0.0.0.0:PORT listens on every interface)" : ""
        return "controller \(endpoint.number): tcp-server \(endpoint.host):\(endpoint.port), address \(endpoint.publicAddress)\(reach)"
    }

    func run() async throws {
        let listeners = try listeners()
        let stop = StopSignal.install(onStdinEOF: exitOnStdinEOF)
        let server: VirtualControllerServer
        do {
            server = try await VirtualControllerServer.start(listeners)
        } catch {
            throw CommandFailure("controllers: \(error)")
        }
        Console.line("READY " + server.endpoints.map { String($0.port) }.joined(separator: " "))
        for endpoint in server.endpoints { Console.line(Self.line(for: endpoint)) }
        let logger = Task {
            for await event in server.events { Console.line("\(event)") }
        }
        let reason = await stop.wait()
        Console.line("stopping (\(reason))")
        await server.close()
        await logger.value
    }
}

/// Line output that reaches a pipe at once (scripts wait for the READY line).
enum Console {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}

