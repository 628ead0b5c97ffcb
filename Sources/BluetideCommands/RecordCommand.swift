import ArgumentParser
import Bluetide
import BluetideBase
import BluetideRecording
import BluetideSupport
import Foundation

/// `bluetide record DEVICE [CHARACTERISTIC…] --out FILE.jsonl`: a value log of a live device.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a device's notified values to a value log (and optionally an HCI btsnoop capture).",
        discussion: """
            Subscribes to the given characteristics (default: every one that notifies or indicates) and appends each \
            value to FILE.jsonl (format: docs/value-log-format.md), printing it decoded. Runs until Ctrl-C, --duration \
            seconds or --count values. Play the log back with bluetide replay.

            Examples:
              bluetide record "Bluetide HRM" --emulate heart-rate --out hrm.jsonl \\
                  --duration 10
              bluetide record "Bluetide CSC" 2A5B --emulate csc --out ride.jsonl \\
                  --snoop ride.btsnoop --duration 30
              bluetide replay hrm.jsonl
            """)

    @Argument(help: "Device address (optionally /R or /P) or advertised name.")
    var device: String

    @Argument(help: "Characteristics to record (default: every notify/indicate characteristic except Service Changed).")
    var characteristics: [String] = []

    @Option(name: .long, help: "The value log to write (JSON Lines).")
    var out: String

    @Option(name: .long, help: "Also write an HCI capture (btsnoop) to this file.")
    var snoop: String?

    @OptionGroup var stop: DurationOption

    @Option(name: .long, help: "Stop after this many values.")
    var count: Int?

    @Option(name: .long, help: "Seconds to look for the device by name or address.")
    var timeout: Double = 5

    @Flag(name: .long, help: "Print one JSON object per recorded value instead of a decoded line.")
    var json = false

    @OptionGroup var session: DeviceSessionOptions

    @OptionGroup var wheel: WheelOptions

    @Flag(name: .long, help: "Re-establish a lost link (with back-off) and go on recording; without it, a lost link ends record with status 1.")
    var reconnect = false

    func run() async throws {
        let command = self
        try await VirtualTimeOption.run(session) { try await command.execute(CommandOutput.standardOutput(), stopOnSignals: true, clock: $0) }
    }

    /// Records until --count, --duration, a lost link or (with `stopOnSignals`) Ctrl-C. The
    /// session runs on `clock`: `--timeout` and `--duration` are measured on it.
    func execute(_ output: CommandOutput, stopOnSignals: Bool = false, clock: BluetideClock = .continuous) async throws {
        if let count, count < 1 { throw CommandFailure("--count \(count): expected at least 1") }
        try stop.validated()
        try wheel.validated()
        let duration = stop.duration
        let session = try await DeviceSession.open(session, snoop: snoop, clock: clock)
        do {
            let (connection, label) = try await session.connect(device, timeout: timeout, policy: reconnect ? .resilient : .default)
            let (address, name) = (connection.address, label)
            let services = try await connection.services()
            var chosen: [(GATTServiceRange, GATTCharacteristic)] = []
            if characteristics.isEmpty {
                // Service Changed (Generic Attribute) is link housekeeping, not device data.
                for service in services where service.service.uuid != BluetoothUUID(0x1801) {
                    for remote in service.characteristics where !remote.characteristic.properties.isDisjoint(with: [.notify, .indicate]) {
                        chosen.append((service.service, remote.characteristic))
                    }
                }
                guard !chosen.isEmpty else { throw CommandFailure("\(label) has no characteristic that notifies or indicates: nothing to record") }
            } else {
                for text in characteristics {
                    let found = try CharacteristicLookup.find(text, in: services, device: label)
                    guard !found.1.properties.isDisjoint(with: [.notify, .indicate]) else {
                        throw CommandFailure("\(CharacteristicLookup.describe(found.1.uuid)) on \(label) does not notify or indicate: it cannot be recorded")
                    }
                    chosen.append(found)
                }
            }
            let writer: ValueLogWriter
            do {
                writer = try ValueLogWriter(path: out, header: ValueLogHeader(startedAt: WallClockTime.now()), flushEvery: 1)
            } catch {
                throw CommandFailure("cannot write \(out): \(error)")
            }
            // Record times on the session's clock (virtual time when the command runs in it).
            let recorder = ValueRecorder(writer: writer, clock: clock)
            var sources: [LiveRecording.Source] = []
            var decoders: [BluetoothUUID: ValueDecoding] = [:]
            for (service, characteristic) in chosen {
                let values: AsyncThrowingStream<[UInt8], any Error>
                do { values = try await connection.notifications(of: characteristic.uuid) } catch {
                    throw CommandFailure("subscribing to \(CharacteristicLookup.describe(characteristic.uuid)) on \(label) failed: \(error)")
                }
                let decoding = try decoders[characteristic.uuid] ?? ValueDecoding(uuid: characteristic.uuid, profile: nil, options: wheel.profileOptions)
                decoders[characteristic.uuid] = decoding
                let operation: ValueOperation = characteristic.properties.contains(.notify) ? .notify : .indicate
                sources.append(LiveRecording.Source(
                    service: service.uuid, characteristic: characteristic.uuid, operation: operation, values: values, profile: decoding.profile))
            }
            output.emit(json ? JSONOutput.line("recording", ["device": JSONOutput.device(address, name: name == "\(address)" ? nil : name.components(separatedBy: " (").first), "out": .string(out),
                                                     "characteristics": .array(chosen.map { JSONOutput.characteristic($0.1.uuid) })])
                        : "recording \(chosen.map { CharacteristicLookup.describe($0.1.uuid) }.joined(separator: ", ")) from \(label) to \(out)")
            let stopWhen: (@Sendable () async -> Void)?
            if stopOnSignals {
                stopWhen = { await StopSignal.install(duration: duration, clock: clock).wait() }
            } else if let duration {
                stopWhen = { await session.pause(seconds: duration) }
            } else {
                stopWhen = nil
            }
            let lineFormat = try ValueFormatOptions.parse(json ? ["--json"] : [])
            // The address as commands take it back (`…/R` when random), so a replay knows its type.
            let identity = DeviceIdentity(address: address.description, name: name == "\(address)" ? nil : name.components(separatedBy: " (").first)
            let outcome: LiveRecording.Outcome
            do {
                outcome = try await LiveRecording.run(sources, device: identity, into: recorder, count: count, until: stopWhen) { record in
                    guard let decoding = decoders[record.characteristic] else { return }
                    output.emit(lineFormat.line(record.value, decoding: decoding, at: record.timestamp, type: "recorded",
                                                extra: json ? ["time": JSONOutput.time(monotonic: record.timestamp)] : [:]))
                }
            } catch let error as ValueLogError {
                throw CommandFailure("cannot write \(out): \(error)")
            }
            do { try writer.close() } catch { throw CommandFailure("cannot finish \(out): \(error)") }
            let written = outcome.records
            if outcome.dropped > 0 {
                appLogger.warning("\(outcome.dropped) value\(outcome.dropped == 1 ? "" : "s") arrived faster than \(out) could take them and were not recorded")
            }
            if case let .sourceEnded(reason) = outcome.ending {
                throw CommandFailure("the link to \(label) was lost after \(written) value\(written == 1 ? "" : "s") (\(reason)); "
                    + "they are saved in \(out). Check that the device is on and in range, then run record again (--reconnect rides out short drops)",
                    isLinkLoss: true)
            }
            output.emit(json ? JSONOutput.line("stopped", ["records": .integer(Int64(written)), "out": .string(out)])
                        : "recorded \(written) value\(written == 1 ? "" : "s") to \(out)\(snoop.map { " (HCI capture: \($0))" } ?? "")")
        } catch {
            await session.close()
            throw error
        }
        await session.close()
    }
}
