import Bluetide
import BluetideSupport
import BluetideBase
import BluetideProfiles
import BluetideReflexCoach
import BluetideRide
import BluetideRing
import Foundation

/// The script of one device section: what the demo writes and what it shows.
public struct DemoSession: Sendable {
    let device: String
    let connection: Connection
    /// The world's clock.
    let clock: BluetideClock
    /// When the live phase ends, on ``clock`` (a session also waits for its first results).
    let softDeadline: BluetideClock.Instant
    let emit: @Sendable (DemoEvent) -> Void

    var pastDeadline: Bool { clock.now >= softDeadline }

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
        default: throw DemoFailure("\(device): no demo script")
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
        guard count > 0 else { throw DemoFailure("\(device): notifications ended before any measurement") }
    }

    /// Indoor bike data; takes control and sets an ERG target through BluetideRide's
    /// ``FTMSTrainerControl``, and shows the power converge.
    func trainer() async throws {
        let data = try await connection.notifications(of: .indoorBikeData, as: IndoorBikeData.self)
        let control = FTMSTrainerControl(
            connection: connection, device: RideDevice(role: .ftmsTrainer, address: connection.address.string, name: device))
        try await control.start()
        let target: Int16 = 250
        for request in [FitnessMachineControlPointRequest.requestControl, .setTargetPower(watts: target)] {
            show("write", "control point ← \(request)")
            do { try await control.send(request) } catch {
                await control.stop()
                throw DemoFailure("\(device): control point refused \(request): \(error)")
            }
            // The control answers only once the trainer indicated success for this request.
            show("value", "control point → \(FitnessMachineControlPointResponse(requestOpcode: request.opcode, result: .success))")
        }
        await control.stop()
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
        guard count > 0 else { throw DemoFailure("\(device): indoor bike data ended before any value") }
    }

    /// Ring battery and a real-time heart-rate reading through BluetideRing's ``Ring`` session.
    func ring() async throws {
        var options = Ring.Options()
        options.setsTimeOnOpen = false
        options.bondsWhenAsked = false
        let ring: Ring
        do { ring = try await Ring.open(connection, options: options) } catch {
            throw DemoFailure("\(device): \(error)")
        }
        do {
            show("write", "← battery request")
            let level = try await ring.battery()
            show("value", COLMIResponse.battery(level).summary, ["batteryPercent": "\(level.levelPercent)"])
            show("write", "← start real-time heart rate")
            try await ring.startMeasurement(.heartRate)
        } catch {
            await ring.close()
            throw DemoFailure("\(device): no battery or heart-rate reply: \(error)")
        }
        var heartRate = false
        var readings = 0
        for await reading in ring.readings where reading.type == .heartRate {
            readings += 1
            if reading.value == 0 {
                show("value", "real-time heart rate: measuring…")
            } else {
                heartRate = true
                show("value", "real-time heart rate \(reading.value) bpm", ["bpm": "\(reading.value)"])
            }
            if heartRate, pastDeadline { break }
        }
        await ring.close()  // stops the measurement
        guard readings > 0 else { throw DemoFailure("\(device): no battery or heart-rate reply") }
    }

    /// Loads a short punch program and starts it through BluetideReflexCoach's ``PunchTrainerCommands``,
    /// and shows the simulated athlete's responses.
    func punch() async throws {
        let responses = try await connection.notifications(of: PunchUUID.response, as: PunchResponse.self)
        let statuses = try await connection.notifications(of: PunchUUID.control, as: PunchControlStatus.self)
        let program = try PunchProgram(
            sequence: try PunchSequence(targets: [1, 3, 2, 5, 4]), timeSequence: try PunchTimeSequence(milliseconds: [600, 600, 600, 600, 600]))
        show("write", "sequence ← targets \(program.sequence.targets.map(String.init).joined(separator: " ")), 600 ms each")
        try await PunchTrainerCommands.load(program, on: connection)
        show("write", "control ← \(PunchControlCommand.start.summary)")
        try await PunchTrainerCommands.start(on: connection)
        let expected = program.sequence.count
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await status in statuses {
                    show("value", "control → \(status.summary)")
                    if case .finished = status { return }
                    if case .error = status { throw DemoFailure("punch: trainer refused the start: \(status.summary)") }
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
                throw DemoFailure("punch: responses ended after \(count) of \(expected)")
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
        guard echo == text else { throw DemoFailure("hm10: echo \"\(echo)\" is not \"\(text)\"") }
    }

    /// `value` with `decimals` digits after the point.
    public static func fixed(_ value: Double, _ decimals: Int) -> String { String(format: "%.\(decimals)f", value) }

    /// Runs `body`, failing with `message` when it takes more than `seconds` on `clock` (the
    /// world's clock: virtual time in a world on a ``ManualClock``).
    public static func limited(
        _ seconds: Double, _ message: String, clock: BluetideClock = .continuous, _ body: @escaping @Sendable () async throws -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await body()
                return true
            }
            group.addTask {
                try await clock.sleep(for: .seconds(seconds))
                return false
            }
            let finished = try await group.next() ?? false
            group.cancelAll()
            guard finished else { throw DemoFailure(message) }
        }
    }
}
