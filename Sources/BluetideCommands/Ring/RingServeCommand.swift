import ArgumentParser
import BluetideRing
import BluetideRingWeb
import Foundation

/// `bluetide ring serve`: the synced history in a browser.
struct RingServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Show the synced history in a browser: heart rate over a day, steps, sleep, SpO2 (works on a phone).",
        discussion: """
            Reads the database `ring sync` fills; reload the page after a sync. /samples.csv is the export.

            Examples:
              bluetide ring serve (then open http://127.0.0.1:8080)
              bluetide ring serve --host 0.0.0.0 --port 8090   # from a phone too
            """)

    @Option(name: .long, help: "Database file (default: \(RingStore.defaultPath())).")
    var db: String?

    @Option(name: .long, help: "Address to listen on (0.0.0.0 = every interface).")
    var host = "127.0.0.1"

    @Option(name: .long, help: "Port to listen on (0 = any free port).")
    var port = 8080

    func run() async throws { try await execute(CommandOutput.standardOutput()) }

    func execute(_ output: CommandOutput) async throws {
        guard (0...65_535).contains(port) else { throw CommandFailure("--port \(port): expected 0 to 65535, e.g. --port 8080") }
        let path = db ?? RingStore.defaultPath()
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure("no ring database at \(path); run `bluetide ring sync` first (or pass --db FILE)")
        }
        let store: RingStore
        do { store = try RingStore(path: path) } catch { throw CommandFailure("\(error)") }
        let server = RingWebServer(dashboard: RingDashboard(store: store))
        let shownHost = host == "0.0.0.0" ? "127.0.0.1" : host
        do {
            try await server.serve(host: host, port: port) { bound in
                output.emit("serving \(path) on http://\(shownHost):\(bound) (Ctrl-C stops)")
            }
        } catch {
            throw ListenFailure.failure(host: host, port: port, error)
        }
    }
}
