import ArgumentParser
import Bluetide
import BluetideReflex
import BluetideReflexCoach
import BluetideReflexEmulation
import BluetideReflexWeb
import BluetideTransport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `bluetide reflex coach serve`: the web dashboard (athletes, sequences, live runs, charts)
/// for a phone on the gym's network.
struct ReflexCoachServe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the coach's web dashboard: athletes, charts, the sequence editor and live runs.",
        discussion: """
            Serves pages for a phone or laptop on the same network: the athletes and their history with \
            charts, the sequence editor (target buttons coloured like the LEDs) and a run page whose \
            results arrive live. One run at a time: a single session on one trainer, or a game \
            (head-to-head, relay, colour chase) on several, shown big on /tv for the gym's screen.

            Examples:
              bluetide reflex coach serve --emulate
                  no hardware: two emulated trainers with simulated athletes; open http://localhost:8080
                  (the gym's screen: http://localhost:8080/tv)
              bluetide reflex coach password && \\
                  bluetide reflex coach serve --lan --transport hci-socket:0
                  the gym: set the coach's password once, then serve phones on the Wi-Fi (each logs in)
              bluetide reflex coach serve --emulate --sample-data --port 8081
                  the same, with three sample athletes and a few weeks of history to look at
              bluetide reflex coach serve --transport hci-socket:0 --db ~/gym.sqlite
                  a real trainer through the adapter hci0 (bring it down first: sudo hciconfig hci0 down)
              bluetide reflex coach serve --transport tcp-client:127.0.0.1:9000 \\
                  --device Reflex-C1C2
                  a trainer behind a controller on TCP (e.g. `bluetide controllers`), picked by name
            """)

    @OptionGroup var database: CoachDatabaseOptions
    @Option(name: .long, help: "Address to listen on (default 127.0.0.1, this computer only; with --lan 0.0.0.0).") var host: String?
    @Flag(name: .long, help: "Serve phones on the network (every interface); requires the coach's password (see `coach password`).")
    var lan = false
    @Option(name: .long, help: "TCP port (0 picks a free one).") var port: Int = 8080
    @Option(name: .long, help: "Controller transport: \(TransportSpec.syntaxSummary)") var transport: String = "virtual"
    @Flag(name: .long, help: "Start an emulated punch trainer with simulated athletes on the same virtual link (hardware-free).")
    var emulate = false
    @Option(name: .long, help: "With --emulate: emulated trainers to start, 1-8, for games (/tv; each with a simulated athlete of its own skill, and a heart-rate strap while both fit 8 links).")
    var trainers: Int = 2
    @Flag(name: .long, help: "Add three sample athletes, sequences and sessions when the database has no athletes.")
    var sampleData = false
    @Option(name: .long, help: "Trainer name or address (default: strongest signal).") var device: String?
    @Option(name: .long, help: "Seconds to look for the trainer at each run (--scan-seconds, its old name, still works).") var timeout: Double = 30
    /// `--scan-seconds`, the old name of `--timeout` (hidden, deprecated).
    @Option(name: .customLong("scan-seconds"), help: .hidden) var deprecatedScanSeconds: Double?
    /// Seconds to look for the trainer at each run.
    var scanSeconds: Double { deprecatedScanSeconds ?? timeout }
    @Option(name: .long, help: .hidden) var scanRoundMilliseconds: Int = 2000
    @OptionGroup var output: CoachOutputOptions

    /// The dashboard and what it drives, while serving.
    struct Serving: Sendable {
        let dashboard: RunningDashboard
        let link: CoachBluetooth
        /// The runs the dashboard starts (the terminal follows them too).
        let runs: RunController

        /// Stops the server (and the run, stored with `reason`), then Bluetooth and the emulated trainer.
        func stop(reason: String = "the dashboard stopped") async {
            await dashboard.stop(reason: reason)
            await link.close()
        }
    }

    func run() async throws {
        let stop = StopSignal.install()
        let printer = output
        let serving = try await startServing(emit: { printer.emit([$0]) })
        printer.emit([CoachOutput("Ctrl-C stops the dashboard.", type: nil)])
        fflush(nil)  // every output stream: the addresses are wanted now, also when the output goes to a log
        // Runs started from a browser show up here too, a line per event, as they happen.
        let messages = await serving.runs.listen()
        let echo = Task {
            for await message in messages {
                guard let line = Self.terminalLine(message) else { continue }
                printer.emit([CoachOutput(line, type: "run", [
                    "run": .integer(Int64(message.run)), "event": .string("\(message.kind)"), "message": .string(line),
                ])])
            }
        }
        defer { echo.cancel() }
        let reason = await stop.wait()
        printer.emit([CoachOutput("stopping (\(reason))", type: "stopping", ["reason": .string(reason)])])
        await serving.stop(reason: "server stopping (\(reason))")
    }

    /// Opens the store and Bluetooth, starts the server and prints where to open it.
    func start(output: @escaping @Sendable (String) -> Void) async throws -> Serving {
        try await startServing(emit: { for line in $0.lines { output(line) } })
    }

    /// ``start(output:)`` with each report as text and record (for `--json`).
    func startServing(emit: @escaping @Sendable (CoachOutput) -> Void) async throws -> Serving {
        guard (0...65_535).contains(port) else { throw CommandFailure("--port \(port): expected 0...65535 (0 picks a free port)") }
        guard scanSeconds > 0, scanSeconds <= 300 else { throw CommandFailure("--timeout \(scanSeconds): expected 0 < s ≤ 300") }
        guard scanRoundMilliseconds >= 100 else { throw CommandFailure("--scan-round-milliseconds: expected at least 100") }
        let host: String
        do { host = try DashboardAddress.listenHost(given: self.host, lan: lan) } catch { throw CommandFailure(error.description) }
        let store = try database.open()
        // Requests must name this dashboard's host (DNS rebinding): its IP addresses and localhost,
        // a --host given by name, and with --lan this computer's name (and NAME.local) as phones type it.
        let hostNames = DashboardAddress.hostNames(host: host, lan: lan)
        var access = DashboardAccess(hostNames: hostNames)
        if lan {
            guard let hash = try CoachCLI.failing({ try store.setting(PasswordHash.settingKey) }) else {
                throw CommandFailure("--lan needs the coach's password: set it once with `bluetide reflex coach password`, then start serve again")
            }
            access = DashboardAccess(passwordHash: hash, hostNames: hostNames)
        }
        if sampleData, try store.athletes().isEmpty {
            let summary = try SampleData.add(to: store, now: Date())
            emit(CoachOutput("added sample data: \(summary.athletes.count) athletes, \(summary.sequences.count) sequences, \(summary.sessions) sessions",
                             type: "sample-data", ["athletes": .integer(Int64(summary.athletes.count)),
                                                   "sequences": .integer(Int64(summary.sequences.count)), "sessions": .integer(Int64(summary.sessions))]))
        }
        if let warning = CoachTransportWarning.line(transport: transport, emulate: emulate) { appLogger.warning("\(warning)") }
        guard (1...8).contains(trainers) else { throw CommandFailure("--trainers \(trainers): expected 1 to 8 (a central holds 8 links)") }
        let straps = CoachBluetooth.laneStraps(trainers: trainers, emulate: emulate)
        let link = try await CoachCLI.openBluetooth(transport: transport, emulate: emulate, count: emulate ? trainers : 1, straps: straps,
                                                   output: { emit(CoachJSON.message($0)) })
        var coach = ReflexCoach(central: link.bluetooth.central, store: store)
        coach.scanTimeout = .milliseconds(Int64(scanSeconds * 1000))
        coach.scanRound = .milliseconds(Int64(min(scanRoundMilliseconds, Int(scanSeconds * 1000))))
        let runs = RunController(coach: coach, choice: TrainerChoice(parsing: device),
                                 laneStraps: (0..<straps).map { .name(CoachBluetooth.strapName($0)) })
        let server = DashboardServer(runs: runs, access: access)
        let dashboard: RunningDashboard
        do {
            dashboard = try await server.start(host: host, port: port)
        } catch {
            await link.close()
            throw ListenFailure.failure(host: host, port: port, error)
        }
        let path = database.db ?? CoachStore.defaultPath()
        emit(CoachOutput("database: \(path)", type: "database", ["file": .string(path)]))
        emit(CoachOutput(lan ? "serving the network on \(host); every phone logs in with the coach's password"
                             : "listening on \(host) only (this computer); --lan serves phones on the network, with a login",
                         type: "listening", ["host": .string(host), "port": .integer(Int64(dashboard.port)), "lan": .bool(lan)]))
        for url in DashboardAddress.urls(host: host, port: dashboard.port) {
            emit(CoachOutput("open \(url)", type: "open", ["url": .string(String(url.prefix { $0 != " " }))]))
        }
        return Serving(dashboard: dashboard, link: link, runs: runs)
    }

    /// One terminal line for a live-run message (nil for the ones not worth a line).
    static func terminalLine(_ message: LiveRunMessage) -> String? {
        let prefix = "run \(message.run): " + (message.lane.map { "lane \($0) \(message.athlete ?? "?"): " } ?? "")
        switch message.kind {
        case .gameStarted:
            return message.text.map { "run \(message.run): game: " + $0 }
        case .decided:
            return message.text.map { "run \(message.run): decided: " + $0 }
        case .gameOver:
            let board = (message.standings ?? []).map { "\($0.place). \($0.athletes.joined(separator: " & ")) \($0.hits)/\($0.steps)" }
            return "run \(message.run): game over: \(message.text ?? "")" + (board.isEmpty ? "" : " [\(board.joined(separator: ", "))]")
        case .idle, .session:
            return nil
        case .started:
            let steps = message.stepCount.map { " (\($0) steps)" } ?? ""
            return prefix + "\(message.athlete ?? "?"), sequence \"\(message.sequence ?? "?")\"\(steps)"
        case .progress, .status:
            return message.text.map { prefix + $0 }
        case .step:
            let step = (message.step ?? 0) + 1
            let target = message.target.map { "target \($0)" } ?? "target ?"
            let colour = message.colour.map { " (\($0))" } ?? ""
            let reaction = message.reactionMilliseconds.map { " \($0) ms" } ?? ""
            let result = message.hit == true ? "hit" + reaction : "miss" + (message.wrongTarget == true ? ", wrong target first" : "")
            return prefix + "step \(step) \(target)\(colour): \(result)"
        case .ended:
            let state = message.complete == true ? "complete" : "incomplete"
            let stored = message.stepsStored.map { ", \($0) steps stored" } ?? ""
            return prefix + state + stored + (message.text.map { " (\($0))" } ?? "")
        case .failed:
            return prefix + "failed: " + (message.text ?? "unknown reason")
        }
    }
}
