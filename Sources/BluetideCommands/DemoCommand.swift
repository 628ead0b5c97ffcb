import ArgumentParser
import Bluetide
import BluetideCore
import BluetideEmulation
import BluetideEmulators
import BluetideProfiles
import Foundation

/// `bluetide demo`: a virtual world of emulated devices, scanned, connected and shown live.
///
/// The newcomer's first command: no radio needed. Five emulated peripherals (heart-rate strap,
/// FTMS trainer, COLMI R02 ring, reflex trainer, HM-10 serial module) advertise on a private
/// virtual link; a central on the same link scans, connects to each and prints what it decodes
/// through the profile types for `--duration` seconds, then exits 0.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Emulated devices in a virtual world: scan, connect and show live decoded data (no radio needed).",
        discussion: """
            Starts a heart-rate strap, a smart trainer (FTMS), a COLMI R02 ring, a reflex (Punch) trainer and an \
            HM-10 serial module on an in-process virtual link, scans for them, connects to each and shows live \
            decoded data: heart rate with RR intervals; trainer speed, cadence and power converging on an ERG \
            target set through the control point; ring battery and a real-time heart-rate reading; the simulated \
            athlete's punch responses; the HM-10's echo. Exits 0 when every device answered.

            Examples:
              bluetide demo
              bluetide demo --duration 15
              bluetide demo --json --seed 7
            """)

    @Option(name: .long, help: "Seconds of live data, about (default 8).")
    var duration: Double = 8

    @Flag(name: .long, help: "Print one JSON object per event.")
    var json = false

    @Option(name: .long, help: "Seed of the emulated devices' randomness (same seed, same data).")
    var seed: UInt64 = 0

    func run() async throws {
        let printer = LinePrinter()
        let json = self.json
        try await perform { event in printer.emit(json ? event.jsonLine : event.text) }
    }

    /// Runs the whole demo, handing every event to `emit`; throws ``CommandFailure`` (one line)
    /// when a device does not answer.
    func perform(emit: @escaping @Sendable (DemoEvent) -> Void) async throws {
        guard duration.isFinite, duration > 0, duration <= 3600 else {
            throw CommandFailure("--duration \(duration): expected seconds > 0 (and at most 3600)")
        }
        let world = DemoWorld(seed: seed, liveSeconds: duration, emit: emit)
        do {
            try await world.run()
        } catch let failure as CommandFailure {
            await world.shutDown()
            throw failure
        } catch {
            await world.shutDown()
            throw CommandFailure("demo failed: \(error)")
        }
        await world.shutDown()
    }
}

/// One thing the demo shows: a section heading, a scan row, a decoded value, an action.
struct DemoEvent: Sendable {
    /// Which part of the demo: "world", "scan", or a device model name (`heart-rate`, …).
    var device: String
    /// What happened: `section`, `started`, `found`, `connected`, `write`, `value`, `done`.
    var kind: String
    /// The readable line (without the device label).
    var summary: String
    /// Extra machine-readable fields for `--json`.
    var fields: [String: String] = [:]
    /// Shown before the summary in text output (padded device name, with a bar for live data).
    var label: String? = nil

    /// The text line: section headings stand alone, other lines are indented under them.
    var text: String { kind == "section" ? "\n== \(summary) ==" : "  " + (label ?? "") + summary }

    /// One record of the one schema: `type` is the kind, `source` the part of the demo
    /// (`world`, `scan`, a model name); an address in the fields becomes the `device` object,
    /// numbers become numbers (an empty field is null).
    var jsonLine: String {
        var rest = fields
        var object: [String: JSONOutputValue] = ["source": .string(device), "summary": .string(summary)]
        if let address = rest.removeValue(forKey: "address") {
            var seen = JSONOutput.device(text: address, name: rest.removeValue(forKey: "name"))
            if let rssi = rest.removeValue(forKey: "rssi").flatMap({ Int64($0) }), case var .object(members) = seen {
                members["rssiDbm"] = .integer(rssi)
                seen = .object(members)
            }
            object["device"] = seen
        }
        for (key, text) in rest {
            if text.isEmpty { object[key] = .null }
            else if let integer = Int64(text) { object[key] = .integer(integer) }
            else if let number = Double(text), number.isFinite { object[key] = .number(number) }
            else { object[key] = .string(text) }
        }
        return JSONOutput.line(kind, object)
    }
}

/// The demo's devices, central and script. Owns what it starts and stops all of it.
actor DemoWorld {
    /// The emulated devices, in the order they are shown.
    static let deviceNames = ["heart-rate", "ftms-bike", "colmi-r02", "punch", "hm10"]

    let seed: UInt64
    let liveSeconds: Double
    let emit: @Sendable (DemoEvent) -> Void
    let linkSpec: String
    /// The demo's private link, its devices and the central's host.
    private let world: VirtualWorld
    private var bluetooth: Bluetooth?

    init(seed: UInt64, liveSeconds: Double, emit: @escaping @Sendable (DemoEvent) -> Void) {
        self.seed = seed
        self.liveSeconds = liveSeconds
        self.emit = emit
        // A link of our own, so concurrent demos (and tests) never see each other's devices.
        world = VirtualWorld(linkName: "bluetide-demo-\(UUID().uuidString.prefix(8))")
        linkSpec = world.transportSpec
    }

    func run() async throws {
        emit(DemoEvent(device: "world", kind: "section", summary: "Virtual world (\(linkSpec))"))
        var addresses: [BluetoothAddress: String] = [:]
        for (index, name) in Self.deviceNames.enumerated() {
            guard let model = EmulatorCatalog.make(name: name, seed: seed &+ UInt64(index)) else {
                throw CommandFailure("\(name): no such emulator")
            }
            let address = BluetoothAddress.randomStatic(0xDE40_0000_0000 &+ (seed & 0xFFFF) &* 0x100 &+ UInt64(index))
            let peripheral: EmulatedPeripheral
            do {
                peripheral = try await world.emulate([model], address: address)
            } catch {
                throw CommandFailure("\(name): could not start: \(error)")
            }
            addresses[address] = name
            emit(DemoEvent(
                device: name, kind: "started",
                summary: "advertising as \"\(peripheral.advertisedName)\" from \(address.string)",
                fields: ["name": peripheral.advertisedName, "address": address.description], label: pad(name, 11)))
        }
        let bluetooth: Bluetooth
        do { bluetooth = try await world.openHost() } catch {
            throw CommandFailure("central: \(error)")
        }
        self.bluetooth = bluetooth

        // Scan until every device is seen (at most 10 s).
        emit(DemoEvent(device: "scan", kind: "section", summary: "Scan"))
        var seen: [String: Advertisement] = [:]
        let scanEnd = ContinuousClock.now + .seconds(10)
        for await advertisement in try await bluetooth.central.scan(timeout: .seconds(10)) {
            if let name = addresses[advertisement.address], seen[name] == nil {
                seen[name] = advertisement
            }
            if seen.count == Self.deviceNames.count || ContinuousClock.now > scanEnd { break }
        }
        emit(DemoEvent(device: "scan", kind: "header", summary: "\(pad("NAME", 14)) \(pad("ADDRESS", 19)) RSSI"))
        for name in Self.deviceNames {
            guard let advertisement = seen[name] else {
                throw CommandFailure("scan: \(name) was not seen within 10 s")
            }
            let shown = advertisement.name ?? "(no name)"
            emit(DemoEvent(
                device: "scan", kind: "found",
                summary: "\(pad(shown, 14)) \(pad(advertisement.address.string, 19)) \(advertisement.rssi) dBm",
                fields: ["model": name, "name": shown, "address": advertisement.address.description, "rssi": "\(advertisement.rssi)"]))
        }

        // Connect to each, one at a time (a controller makes one connection at a time).
        emit(DemoEvent(device: "world", kind: "section", summary: "Connecting"))
        var connections: [(String, Connection)] = []
        for name in Self.deviceNames {
            guard let advertisement = seen[name] else { continue }
            let connection: Connection
            do {
                connection = try await bluetooth.central.connect(to: advertisement, timeout: .seconds(10))
            } catch {
                throw CommandFailure("\(name): connect failed: \(error)")
            }
            connections.append((name, connection))
            let services = (try? await connection.services().count) ?? 0
            emit(DemoEvent(
                device: name, kind: "connected",
                summary: "connected, \(services) services, MTU \(await connection.mtu)", label: pad(name, 11)))
        }

        // Live data from all devices at once; lines are prefixed with the device.
        emit(DemoEvent(device: "world", kind: "section", summary: "Live data (\(DemoSession.fixed(liveSeconds, 0)) s)"))
        let softDeadline = ContinuousClock.now + .seconds(liveSeconds)
        let hardLimit = liveSeconds + 20
        let emit = self.emit
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (name, connection) in connections {
                let session = DemoSession(device: name, connection: connection, softDeadline: softDeadline, emit: emit)
                group.addTask {
                    try await DemoSession.limited(hardLimit, "\(name): no decoded data within \(Int(hardLimit)) s") {
                        try await session.run()
                    }
                }
            }
            try await group.waitForAll()
        }
        emit(DemoEvent(device: "world", kind: "section", summary: "Done"))
        emit(DemoEvent(device: "world", kind: "done", summary: "every device answered; disconnecting"))
    }

    /// Disconnects and stops everything started. Idempotent.
    func shutDown() async {
        if let bluetooth {
            await bluetooth.close()
            self.bluetooth = nil
        }
        await world.close()
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

/// The script of one device section: what the demo writes and what it shows.
struct DemoSession: Sendable {
    let device: String
    let connection: Connection
    /// When the live phase ends (a session also waits for its first results).
    let softDeadline: ContinuousClock.Instant
    let emit: @Sendable (DemoEvent) -> Void

    var pastDeadline: Bool { ContinuousClock.now >= softDeadline }

    func show(_ kind: String, _ summary: String, _ fields: [String: String] = [:]) {
        let tag = device.count >= 10 ? device : device + String(repeating: " ", count: 10 - device.count)
        emit(DemoEvent(device: device, kind: kind, summary: summary, fields: fields, label: tag + " │ "))
    }

    func run() async throws {
        switch device {
        case "heart-rate": try await heartRate()
        case "ftms-bike": try await trainer()
        case "colmi-r02": try await ring()
        case "punch": try await punch()
        case "hm10": try await serial()
        default: throw CommandFailure("\(device): no demo script")
        }
    }

    /// Heart rate with RR intervals, until the deadline (at least two measurements).
    func heartRate() async throws {
        var count = 0
        for try await measurement in try await connection.notifications(of: .heartRateMeasurement, as: HeartRateMeasurement.self) {
            count += 1
            show("value", measurement.summary, [
                "bpm": "\(measurement.beatsPerMinute)",
                "rr": measurement.rrIntervalSeconds.map { DemoSession.fixed($0, 3) }.joined(separator: " "),
            ])
            if count >= 2, pastDeadline { break }
        }
        guard count > 0 else { throw CommandFailure("\(device): notifications ended before any measurement") }
    }

    /// Indoor bike data; takes control, sets an ERG target and shows the power converge.
    func trainer() async throws {
        let data = try await connection.notifications(of: .indoorBikeData, as: IndoorBikeData.self)
        let answers = try await connection.notifications(of: .fitnessMachineControlPoint, as: FitnessMachineControlPointResponse.self)
        var answerIterator = answers.makeAsyncIterator()
        let target: Int16 = 250
        for request in [FitnessMachineControlPointRequest.requestControl, .setTargetPower(watts: target)] {
            show("write", "control point ← \(request)")
            try await connection.write(request, to: .fitnessMachineControlPoint)
            guard let answer = try await answerIterator.next() else {
                throw CommandFailure("\(device): control point indications ended")
            }
            show("value", "control point → \(answer)")
            guard answer.result == .success else {
                throw CommandFailure("\(device): control point refused \(request): \(answer)")
            }
        }
        var count = 0
        for try await bike in data {
            count += 1
            var parts: [String] = []
            if let speed = bike.instantaneousSpeedKmh { parts.append("\(DemoSession.fixed(speed, 1)) km/h") }
            if let cadence = bike.instantaneousCadenceRpm { parts.append("\(DemoSession.fixed(cadence, 1)) rpm") }
            if let power = bike.instantaneousPowerWatts { parts.append("\(power) W (ERG target \(target) W)") }
            show("value", parts.joined(separator: ", "), [
                "speedKmh": bike.instantaneousSpeedKmh.map { DemoSession.fixed($0, 2) } ?? "",
                "cadenceRpm": bike.instantaneousCadenceRpm.map { DemoSession.fixed($0, 1) } ?? "",
                "powerW": bike.instantaneousPowerWatts.map { "\($0)" } ?? "",
                "targetW": "\(target)",
            ])
            if count >= 2, pastDeadline { break }
        }
        guard count > 0 else { throw CommandFailure("\(device): indoor bike data ended before any value") }
    }

    /// Ring battery and a real-time heart-rate reading through the COLMI commands.
    func ring() async throws {
        let replies = try await connection.notifications(of: COLMIUUID.notify, as: COLMIResponse.self)
        show("write", "← battery request")
        try await connection.write(COLMIRequest.battery, to: COLMIUUID.write)
        show("write", "← start real-time heart rate")
        try await connection.write(COLMIRequest.realTimeStart(.heartRate, .start), to: COLMIUUID.write)
        var battery = false
        var heartRate = false
        var readings = 0
        for try await reply in replies {
            switch reply {
            case let .battery(level):
                battery = true
                show("value", reply.summary, ["batteryPercent": "\(level.levelPercent)"])
            case let .realTimeReading(reading) where reading.type == .heartRate:
                readings += 1
                if reading.value == 0 {
                    show("value", "real-time heart rate: measuring…")
                } else {
                    heartRate = true
                    show("value", "real-time heart rate \(reading.value) bpm", ["bpm": "\(reading.value)"])
                }
            default:
                show("value", reply.summary)
            }
            if battery, heartRate, pastDeadline { break }
        }
        try? await connection.write(COLMIRequest.realTimeStop(.heartRate), to: COLMIUUID.write)
        guard battery, readings > 0 else { throw CommandFailure("\(device): no battery or heart-rate reply") }
    }

    /// Writes a short punch sequence, starts it and shows the simulated athlete's responses.
    func punch() async throws {
        let responses = try await connection.notifications(of: PunchUUID.response, as: PunchResponse.self)
        let statuses = try await connection.notifications(of: PunchUUID.control, as: PunchControlStatus.self)
        let sequence = try PunchSequence(targets: [1, 3, 2, 5, 4])
        let times = try PunchTimeSequence(milliseconds: [600, 600, 600, 600, 600])
        show("write", "sequence ← targets \(sequence.targets.map(String.init).joined(separator: " ")), 600 ms each")
        try await connection.write(sequence, to: PunchUUID.sequence)
        try await connection.write(times, to: PunchUUID.timeSequence)
        show("write", "control ← \(PunchControlCommand.start.summary)")
        try await connection.write(PunchControlCommand.start, to: PunchUUID.control)
        let expected = sequence.count
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await status in statuses {
                    show("value", "control → \(status.summary)")
                    if case .finished = status { return }
                    if case .error = status { throw CommandFailure("punch: trainer refused the start: \(status.summary)") }
                }
            }
            group.addTask {
                var count = 0
                for try await response in responses {
                    count += 1
                    show("value", response.summary, [
                        "target": "\(response.target)", "hit": "\(response.hit)",
                        "reactionMs": "\(response.reactionTimeMilliseconds)",
                    ])
                    if count >= expected { return }
                }
                throw CommandFailure("punch: responses ended after \(count) of \(expected)")
            }
            try await group.waitForAll()
        }
    }

    /// Writes "hello" to the HM-10 and shows the echo.
    func serial() async throws {
        let echoes = try await connection.notifications(of: SerialUUID.hm10Data)
        let text = "hello"
        show("write", "data ← \"\(text)\"")
        try await connection.send(Array(text.utf8), to: SerialUUID.hm10Data)
        var received: [UInt8] = []
        for try await chunk in echoes {
            received += chunk
            if received.count >= text.utf8.count { break }
        }
        let echo = String(decoding: received, as: UTF8.self)
        show("value", "data → \"\(echo)\" (echo)", ["echo": echo])
        guard echo == text else { throw CommandFailure("hm10: echo \"\(echo)\" is not \"\(text)\"") }
    }

    /// `value` with `decimals` digits after the point.
    static func fixed(_ value: Double, _ decimals: Int) -> String { String(format: "%.\(decimals)f", value) }

    /// Runs `body`, failing with `message` when it takes more than `seconds`.
    static func limited(_ seconds: Double, _ message: String, _ body: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await body()
                return true
            }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return false
            }
            let finished = try await group.next() ?? false
            group.cancelAll()
            guard finished else { throw CommandFailure(message) }
        }
    }
}
