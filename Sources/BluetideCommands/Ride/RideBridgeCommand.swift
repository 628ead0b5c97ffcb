import ArgumentParser
import Bluetide
import BluetideTransport
import BluetideRide
import Foundation

/// `bluetide ride bridge`: reads the trainer and sensors and serves them as one standard FTMS
/// trainer (plus Cycling Power and Heart Rate), so an FTMS-only app can ride them.
struct RideBridgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bridge",
        abstract: "Serve the trainer and sensors as one standard FTMS trainer for apps that only speak FTMS.",
        discussion: """
            Reads a Tacx FE-C trainer, a CSC sensor plus a power meter, or an FTMS trainer (and a heart-rate \
            strap), and serves them as a Fitness Machine (Indoor Bike Data, Feature, supported ranges, Control \
            Point, Status), Cycling Power and Heart Rate peripheral. The app's Request Control, target power (ERG), \
            simulation (grade, wind), inclination, resistance and reset are carried out on the real trainer (FE-C \
            pages 49, 51, 48, or its FTMS control point) and answered with the trainer's outcome: success, or \
            "operation failed" (04) when it refused. Each request and its answer is printed.

            The bridge serves on the same controller it reads with (central and peripheral at once), or on a \
            second one with --serve-transport.

            Examples:
              bluetide ride bridge --trainer "Tacx Neo 2T" --transport hci-socket:0
              bluetide ride bridge --cadence "CSC 1234" --power "Assioma" --hr "HRM-Pro" \\
                  --transport hci-socket:0 --serve-transport hci-socket:1
            Without hardware (three terminals; the FTMS client is `bluetide ride` itself):
              bluetide controllers tcp-server:_:9000 tcp-server:_:9001
              bluetide ride bridge --emulate tacx-fec,heart-rate \\
                  --serve-transport tcp-client:127.0.0.1:9000
              bluetide ride --trainer "Bluetide Bridge" \\
                  --transport tcp-client:127.0.0.1:9001 --erg 180
            """)

    @OptionGroup var session: DeviceSessionOptions
    @OptionGroup var devices: RideDeviceOptions

    @Option(name: .long, help: "The name apps see.")
    var name: String = "Bluetide Bridge"
    @Option(name: .long, help: "Serve on this controller instead of the one the devices are read with: \(TransportSpec.syntaxSummary)")
    var serveTransport: String?
    @Flag(name: .long, help: "Serve only the Fitness Machine service (no Cycling Power, no Heart Rate).")
    var ftmsOnly = false
    @Option(name: .long, help: "Record every device's values to this value log.")
    var record: String?
    @OptionGroup var stop: DurationOption
    @Flag(name: .long, help: "One JSON object per sample and per bridge event.")
    var json = false

    func run() async throws {
        try await execute(CommandOutput.standardOutput(), stopOnSignals: true)
    }

    /// Bridges until --duration or (with `stopOnSignals`) Ctrl-C.
    func execute(_ output: CommandOutput, stopOnSignals: Bool = false) async throws {
        try stop.validated()
        try devices.validated()
        guard !name.isEmpty, name.utf8.count <= 29 else {
            throw CommandFailure("--name \(name): expected 1…29 bytes (it must fit in an advertisement)")
        }
        if serveTransport == nil, session.emulate != nil {
            appLogger.warning("the emulated devices are on a private link no app can reach: add --serve-transport (e.g. hci-socket:0 or tcp-client:HOST:PORT) to serve the bridge where an app can see it")
        }
        let live = try await DeviceSession.open(session)
        var serving: Bluetooth?
        let peripheral: Peripheral
        if let serveTransport {
            do {
                let opened = try await Bluetooth.open(transport: serveTransport, configuration: .init(deviceName: name))
                serving = opened
                peripheral = opened.peripheral
            } catch {
                await live.close()
                throw CommandFailure("--serve-transport \(serveTransport): \(error)")
            }
        } else {
            peripheral = live.bluetooth.peripheral
        }
        let source = LiveRideSource(central: live.central, requests: devices.requests(), configuration: .init(scanSeconds: devices.scan))
        let ride = RideSession(
            source: source, configuration: .init(merger: .init(wheelCircumferenceMeters: devices.wheel.circumference), recordPath: record))
        let bridge = RideBridge(
            session: ride, peripheral: peripheral,
            configuration: .init(name: name, servesCyclingPower: !ftmsOnly, servesHeartRate: !ftmsOnly))
        do {
            try await run(ride, bridge: bridge, output: output, stopOnSignals: stopOnSignals)
        } catch {
            await bridge.stop()
            await ride.stop()
            await serving?.close()
            await live.close()
            throw error
        }
        await bridge.stop()
        await ride.stop()
        await serving?.close()
        await live.close()
    }

    private func run(_ ride: RideSession, bridge: RideBridge, output: CommandOutput, stopOnSignals: Bool) async throws {
        let samples = try await RideRunning.start(ride)
        let startedAt = Date()
        let json = json
        for device in await ride.source.devices {
            output.emit(json ? await RideRunning.deviceLine(device, source: ride.source) : "# \(device.role): \(device.label)")
        }
        do { try await bridge.start() } catch {
            throw CommandFailure("cannot serve the bridge: \(error)")
        }
        let events = Task {
            for await event in bridge.events {
                var fields: [String: JSONOutputValue] = ["text": .string(event.text)]
                if let result = event.result { fields["result"] = .integer(Int64(result.rawValue)) }
                output.emit(json ? JSONOutput.line("bridge-\(event.kind.rawValue)", fields) : "# \(event.text)")
            }
        }
        let notices = Task {
            for await notice in ride.notices {
                output.emit(json ? RideRunning.noticeLine(notice) : "# \(notice)")
            }
        }
        defer {
            events.cancel()
            notices.cancel()
        }
        let pump = Task {
            for await sample in samples {
                await bridge.publish(sample)
                guard sample.trigger == .tick else { continue }
                output.emit(json ? RideRunning.sampleLine(sample, startedAt: startedAt) : RideView.line(sample))
            }
        }
        await RideRunning.wait(for: pump, duration: stop.duration, stopOnSignals: stopOnSignals)
    }
}
