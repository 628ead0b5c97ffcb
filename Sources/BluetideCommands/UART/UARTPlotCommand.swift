import ArgumentParser
import Bluetide
import BluetideDeviceModels
import BluetideSerial
import BluetideSerialWeb
import Foundation

/// `bluetide uart plot DEVICE`: the numbers in a device's lines, charted live on a web page.
struct UARTPlotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plot",
        abstract: "Chart the numbers a BLE serial device prints, live on a web page (pause, CSV export).",
        discussion: """
            Connects to DEVICE (as bluetide uart does) and serves a page at http://HOST:PORT/ that charts every number \
            in the lines it prints: key=value or key:value pairs (temp=21.5 hum=40), CSV (a header line of names names \
            the columns) or whitespace-separated numbers (columns 1, 2, …). Several series, each its colour; Pause \
            freezes the chart while points keep coming; Export CSV saves them (also /export.csv). The lines also go \
            to stdout. Runs until Ctrl-C or SIGTERM, or until the device is gone.

            Examples:
              bluetide uart plot "Bluetide UART" --emulate nus --stream both
              bluetide uart plot Robot1 --port 8090 --transport hci-socket:0
            """)

    @Argument(help: "The device by advertised name or address (AA:BB:CC:DD:EE:FF[/P|/R]).")
    var device: String

    @OptionGroup var session: DeviceSessionOptions

    @Option(name: .long, help: "With --emulate hm10 or nus: the emulated device prints sine, counter or both lines.")
    var stream: String = "both"

    @Option(name: .long, help: "Seconds to search for the device.")
    var scanTime: Double = 5

    @Option(name: .long, help: "Address the page listens on (0.0.0.0: every interface).")
    var host: String = "127.0.0.1"

    @Option(name: .long, help: "Port of the page (0: a free one, printed).")
    var port: Int = 8090

    func run() async throws {
        guard scanTime.isFinite, scanTime > 0 else { throw CommandFailure("--scan-time \(scanTime): expected seconds > 0") }
        guard (0...65_535).contains(port) else { throw CommandFailure("--port \(port): expected 0 to 65535") }
        guard let series = NumericLineStream.Series(rawValue: stream.lowercased()) else {
            throw CommandFailure("--stream \(stream): expected sine, counter or both")
        }
        var emulated = EmulatorOptions()
        emulated.serialStream = series
        let signal = StopSignal.install()
        let stop = Task { await signal.wait() }
        defer { stop.cancel() }
        let deviceSession = try await DeviceSession.open(session, conversation: nil, emulatorOptions: emulated)
        let link: SerialLink
        do {
            let target = try await SerialScanner(central: deviceSession.central).find(device, timeout: .milliseconds(Int64(scanTime * 1000)))
            link = try await SerialLink.connect(to: target, on: deviceSession.central)
        } catch {
            await deviceSession.close()
            throw CommandFailure("\(error)")
        }
        let feed = PlotFeed()
        let web: RunningPlotWeb
        do { web = try await PlotWebServer(feed: feed, title: "\(link.name) — Bluetide plot").start(host: host, port: port) } catch {
            await link.close()
            await deviceSession.close()
            throw CommandFailure("--port \(port): cannot serve the page on \(host):\(port): \(error)")
        }
        StandardStreams.error.line("\(link.name): plotting at http://\(host == "0.0.0.0" ? "127.0.0.1" : host):\(web.port)/")
        // Until a stop signal or the link's close (the plotting itself is the library's).
        let reason: String? = await withTaskGroup(of: String?.self) { group in
            group.addTask {
                await feed.plot(link, clock: ContinuousClock(), echo: { StandardStreams.output.line($0) },
                                status: { StandardStreams.error.line("\(link.name): \($0)") })
            }
            group.addTask {
                // Cancelled when the link closed first: the stop wait ends too.
                await withTaskCancellationHandler { _ = await stop.value } onCancel: { stop.cancel() }
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        await web.stop()
        await link.close()
        await deviceSession.close()
        if let reason, reason != "closed" { throw CommandFailure("\(link.name): \(reason)") }
    }
}
