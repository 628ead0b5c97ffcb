import ArgumentParser
import BluetideRide
import BluetideRideWeb
import Synchronization

/// `bluetide ride serve`: the ride (live devices or a replay) on a web page, for a tablet on the
/// handlebars, while the terminal shows it as `bluetide ride` does.
struct RideServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Ride with the live numbers and a rolling chart on a web page (for a tablet on the handlebars).",
        discussion: """
            Takes every option of `bluetide ride` (devices, --erg/--grade/--workout, --record, --replay) and also \
            serves http://HOST:PORT/: power, heart rate, cadence, speed, distance, time, target and workout progress \
            in big numbers, and a chart of the last five minutes, updated each second over a WebSocket (/live). \
            /latest.json is the last sample. It listens on this computer only unless --host names an interface \
            (0.0.0.0: every interface, so a tablet on the same Wi-Fi can open it).

            The page also controls the ride: target power and grade, pause, start, lap, the workout's start and \
            free riding, as buttons and over a WebSocket (/control, see docs/ride.md). Only the page itself may: \
            its own origin, addressed by IP address or localhost, with the token it carries. Whoever can open the \
            page can use them: --view-only leaves them out.

            Examples:
              bluetide ride serve --emulate tacx-fec,heart-rate --erg 200
              bluetide ride serve --trainer "Tacx Neo 2T" --transport hci-socket:0 \\
                  --host 0.0.0.0 --port 8088 --workout sweetspot.zwo --ftp 250
              bluetide ride serve --replay ride.jsonl --pace 4
            """)

    @OptionGroup var ride: RideRunOptions

    @Option(name: .long, help: "Interface to listen on: 127.0.0.1 (this computer), 0.0.0.0 (every interface) or an address.")
    var host: String = "127.0.0.1"
    @Option(name: .long, help: "Port to listen on (0: any free port, printed).")
    var port: Int = 8088
    @Flag(name: .long, help: "Numbers only: no controls on the page and no /control socket.")
    var viewOnly = false

    func run() async throws {
        try await execute(CommandOutput.standardOutput(), stopOnSignals: true)
    }

    /// Serves and rides until the ride ends; `onListening` gets the bound port.
    func execute(_ output: CommandOutput, stopOnSignals: Bool = false, onListening: (@Sendable (Int) -> Void)? = nil) async throws {
        guard (0...65_535).contains(port) else { throw CommandFailure("--port \(port): expected 0…65535") }
        let feed = RideLiveFeed()
        // The page's commands go to the ride's session once it started.
        let session = Mutex<RideSession?>(nil)
        let control = viewOnly ? nil : RideWebControl { line in
            guard let ride = session.withLock({ $0 }) else { throw RideError("the ride has not started yet; try again in a moment") }
            let answer = try await ride.perform(try RideControlCommand.parse(line))
            appLogger.notice("page: \(line) → \(answer)")
            return answer
        }
        let running: RunningRideWeb
        do { running = try await RideWebServer(feed: feed, control: control).start(host: host, port: port) } catch {
            throw ListenFailure.failure(host: host, port: port, error)
        }
        let shown = host == "0.0.0.0" ? "THIS-COMPUTER'S-ADDRESS" : host
        appLogger.notice("live page: http://\(shown):\(running.port)/")
        if !output.isTerminal { output.emit("# live page: http://\(shown):\(running.port)/") }
        onListening?(running.port)
        do {
            try await ride.execute(
                output, stopOnSignals: stopOnSignals, observe: { await feed.publish($0) },
                onSession: { ride in session.withLock { $0 = ride } })
        } catch {
            await running.stop()
            throw error
        }
        await running.stop()
    }
}
