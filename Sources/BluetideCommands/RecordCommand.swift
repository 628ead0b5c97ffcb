import ArgumentParser
import Bluetide
import BluetideBase
import BluetideRecording
import BluetideSupport
import Foundation
import Synchronization

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

    /// One value seen on one characteristic.
    struct Arrival: Sendable {
        var service: BluetoothUUID
        var characteristic: BluetoothUUID
        var operation: ValueOperation
        var bytes: [UInt8]
    }

    /// Records until --count, --duration, a lost link or (with `stopOnSignals`) Ctrl-C. The
    /// session runs on `clock`: `--timeout` and `--duration` are measured on it.
    func execute(_ output: CommandOutput, stopOnSignals: Bool = false, clock: BluetideClock = .continuous) async throws {
        if let count, count < 1 { throw CommandFailure("--count \(count): expected at least 1") }
        try stop.validated()
        try wheel.validated()
        let duration = stop.duration
        let session = try await DeviceSession.open(session, snoop: snoop, clock: clock)
        var subscriptions: [Task<Void, Never>] = []
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
            let (arrivals, sink) = AsyncStream<Arrival>.makeStream(bufferingPolicy: .unbounded)
            // Why the notifications stopped coming when it was not us who stopped them (the link was lost).
            let lost = LostLink()
            for (service, characteristic) in chosen {
                let values: AsyncThrowingStream<[UInt8], any Error>
                do { values = try await connection.notifications(of: characteristic.uuid) } catch {
                    throw CommandFailure("subscribing to \(CharacteristicLookup.describe(characteristic.uuid)) on \(label) failed: \(error)")
                }
                let operation: ValueOperation = characteristic.properties.contains(.notify) ? .notify : .indicate
                subscriptions.append(Task {
                    var reason = "the device stopped sending"
                    do {
                        for try await bytes in values {
                            sink.yield(Arrival(service: service.uuid, characteristic: characteristic.uuid, operation: operation, bytes: bytes))
                        }
                    } catch {
                        reason = "\(error)"
                    }
                    if !Task.isCancelled {
                        lost.reason.withLock { $0 = $0 ?? reason }
                        sink.finish()
                    }
                })
            }
            output.emit(json ? JSONOutput.line("recording", ["device": JSONOutput.device(address, name: name == "\(address)" ? nil : name.components(separatedBy: " (").first), "out": .string(out),
                                                     "characteristics": .array(chosen.map { JSONOutput.characteristic($0.1.uuid) })])
                        : "recording \(chosen.map { CharacteristicLookup.describe($0.1.uuid) }.joined(separator: ", ")) from \(label) to \(out)")
            let ender = Task {
                if stopOnSignals { await StopSignal.install(duration: duration, clock: clock).wait() } else if let duration { await session.pause(seconds: duration) } else {
                    while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
                }
                sink.finish()
            }
            defer { ender.cancel() }
            let lineFormat = try ValueFormatOptions.parse(json ? ["--json"] : [])
            var decoders: [BluetoothUUID: ValueDecoding] = [:]
            var written = 0
            // The address as commands take it back (`…/R` when random), so a replay knows its type.
            let identity = DeviceIdentity(address: address.description, name: name == "\(address)" ? nil : name.components(separatedBy: " (").first)
            for await arrival in arrivals {
                let decoding = try decoders[arrival.characteristic] ?? ValueDecoding(uuid: arrival.characteristic, profile: nil, options: wheel.profileOptions)
                decoders[arrival.characteristic] = decoding
                let record: ValueRecord
                do {
                    record = try recorder.record(
                        device: identity, service: arrival.service, characteristic: arrival.characteristic,
                        operation: arrival.operation, value: arrival.bytes, profile: decoding.profile)
                } catch {
                    throw CommandFailure("cannot write \(out): \(error)")
                }
                let format = lineFormat
                output.emit(format.line(arrival.bytes, decoding: decoding, at: record.timestamp, type: "recorded",
                                        extra: json ? ["time": JSONOutput.time(monotonic: record.timestamp)] : [:]))
                written += 1
                if let count, written >= count { break }
            }
            for task in subscriptions { task.cancel() }
            do { try writer.close() } catch { throw CommandFailure("cannot finish \(out): \(error)") }
            if let reason = lost.reason.withLock({ $0 }), count.map({ written < $0 }) ?? true {
                throw CommandFailure("the link to \(label) was lost after \(written) value\(written == 1 ? "" : "s") (\(reason)); "
                    + "they are saved in \(out). Check that the device is on and in range, then run record again (--reconnect rides out short drops)",
                    isLinkLoss: true)
            }
            output.emit(json ? JSONOutput.line("stopped", ["records": .integer(Int64(written)), "out": .string(out)])
                        : "recorded \(written) value\(written == 1 ? "" : "s") to \(out)\(snoop.map { " (HCI capture: \($0))" } ?? "")")
        } catch {
            for task in subscriptions { task.cancel() }
            await session.close()
            throw error
        }
        await session.close()
    }
}

/// Why a recording's notifications stopped, set by whichever subscription saw it first.
private final class LostLink: Sendable {
    let reason = Mutex<String?>(nil)
}
