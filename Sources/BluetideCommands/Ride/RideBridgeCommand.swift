import ArgumentParser
import Bluetide
import BluetideTransport
import BluetideRide
import Foundation
import Synchronization

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
            second one with --serve-transport. With --dircon it also serves the same services over Wi-Fi as Wahoo \
            Direct Connect (DIRCON: TCP, port 36866 by default), advertised over mDNS as _wahoo-fitness-tnp._tcp \
            when Avahi's avahi-publish-service is installed, for apps on a TV or tablet out of Bluetooth range.

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
    @Flag(name: .long, help: "Also serve over the network as Wahoo Direct Connect (DIRCON), advertised over mDNS.")
    var dircon = false
    @Option(name: .long, help: "The DIRCON TCP port (0: any free port, printed).")
    var dirconPort: Int = 36866
    @Option(name: .long, help: "The interface DIRCON listens on: 0.0.0.0 (every interface), 127.0.0.1 or an IPv4 address.")
    var dirconHost: String = "0.0.0.0"
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
        if serveTransport == nil, session.emulate != nil, !dircon {
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
        var network: DirconServer?
        if dircon {
            do {
                network = try DirconServer(
                    bridge: DirconBridge(session: ride, cyclingPower: !ftmsOnly, heartRate: !ftmsOnly), host: dirconHost, port: dirconPort)
            } catch {
                let failure: CommandFailure = switch error {
                case .portOutOfRange: CommandFailure("--dircon-port \(dirconPort): expected 0…65535")
                case let .cannotListen(_, _, reason): CommandFailure("--dircon-host \(dirconHost) --dircon-port \(dirconPort): \(reason)")
                }
                await serving?.close()
                await live.close()
                throw failure
            }
        }
        do {
            try await run(ride, bridge: bridge, dircon: network, output: output, stopOnSignals: stopOnSignals)
        } catch {
            await network?.stop()
            await bridge.stop()
            await ride.stop()
            await serving?.close()
            await live.close()
            throw error
        }
        await network?.stop()
        await bridge.stop()
        await ride.stop()
        await serving?.close()
        await live.close()
    }

    /// Bridges with ``RideBridgeRun`` and prints what happens (a line or --json object per
    /// tick, notice and bridge event); starts the DIRCON listener and its mDNS advertising
    /// once the bridge serves. Maps the run's errors to their one-line texts.
    private func run(_ ride: RideSession, bridge: RideBridge, dircon: DirconServer?, output: CommandOutput, stopOnSignals: Bool) async throws {
        let stop = RideRunning.catchStops(stopOnSignals)
        let startedAt = Mutex(Date())
        let json = json, ftmsOnly = ftmsOnly, name = name, dirconHost = dirconHost
        let show = { @Sendable (event: RideBridgeEvent) in
            var fields: [String: JSONOutputValue] = ["text": .string(event.text)]
            if let result = event.result { fields["result"] = .integer(Int64(result.rawValue)) }
            output.emit(json ? JSONOutput.line("bridge-\(event.kind.rawValue)", fields) : "# \(event.text)")
        }
        let report: @Sendable (RideBridgeRun.Event) async -> Void = { event in
            switch event {
            case .started:
                startedAt.withLock { $0 = Date() }
                for device in await ride.source.devices {
                    output.emit(json ? await RideRunning.deviceLine(device, source: ride.source) : "# \(device.role): \(device.label)")
                }
            case .serving:
                guard let dircon else { return }
                await dircon.start()
                let services = ["0x1826"] + (ftmsOnly ? [] : ["0x1818", "0x180D"])
                let problem = await dircon.advertise(name: name, serviceUUIDs: services, identity: name) { reason in
                    show(RideBridgeEvent(kind: .advertising, text: reason))
                }
                let address = "\(dirconHost):\(dircon.port)"
                show(RideBridgeEvent(kind: .advertising, text: problem.map { "DIRCON on \(address), not advertised over mDNS: \($0)" }
                    ?? "DIRCON on \(address), advertising over mDNS as \"\(name)\" (\(DirconServer.serviceType), with avahi-publish-service)"))
            case let .bridge(event):
                show(event)
            case let .notice(notice):
                output.emit(json ? RideRunning.noticeLine(notice) : "# \(notice)")
            case let .sample(sample):
                guard sample.trigger == .tick else { return }
                output.emit(json ? RideRunning.sampleLine(sample, startedAt: startedAt.withLock { $0 }) : RideView.line(sample))
            }
        }
        var stopWhen: (@Sendable () async -> String)?
        if let stop { stopWhen = { await stop.wait() } }
        do throws(RideBridgeRunError) {
            _ = try await RideBridgeRun(duration: self.stop.duration.map { .seconds($0) })
                .run(ride, bridge: bridge, network: dircon?.bridge, stopWhen: stopWhen, report: report)
        } catch {
            throw CommandFailure("\(error)")
        }
    }
}
