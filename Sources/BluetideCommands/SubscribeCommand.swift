import ArgumentParser
import Bluetide
import BluetideBase
import Foundation
import BluetideSupport

/// `bluetide subscribe DEVICE CHARACTERISTIC`: notified values as they arrive, decoded.
struct SubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscribe",
        abstract: "Print a characteristic's notifications (or indications) decoded, as they arrive.",
        discussion: """
            Runs until Ctrl-C, --count values or --duration seconds. With --reconnect a lost link is re-established \
            (with back-off) and printing goes on; a line says when it is reconnecting and when it is back.

            Examples:
              bluetide subscribe "Bluetide HRM" heart-rate --emulate heart-rate --count 5
              bluetide subscribe "Bluetide CSC" 2A5B --emulate csc --json --duration 10
              bluetide subscribe C6:C5:C4:C3:C2:C1/R 2A37 \\
                  --transport serial:/dev/ttyACM0 --reconnect
            """)

    @OptionGroup var target: CharacteristicTarget
    @OptionGroup var session: DeviceSessionOptions
    @OptionGroup var format: ValueFormatOptions

    @Option(name: .long, help: "Stop after this many values.")
    var count: Int?

    @Option(name: .long, help: "Stop after this many seconds.")
    var duration: Double?

    @Flag(name: .long, help: "Reconnect after link loss and keep printing.")
    var reconnect = false

    @Option(name: .long, help: "Wheel circumference, metres (CSC and Cycling Power speed and distance).")
    var circumference: Double = 2.105

    func run() async throws {
        let command = self
        try await VirtualTimeOption.run(session) { try await command.execute(CommandOutput.standardOutput(), stopOnSignals: true, clock: $0) }
    }

    /// Prints values until --count, --duration or (with `stopOnSignals`) Ctrl-C. The session runs
    /// on `clock`: `--timeout`, `--duration` and the printed times are measured on it.
    func execute(_ output: CommandOutput, stopOnSignals: Bool = false, clock: BluetideClock = .continuous) async throws {
        if let count, count < 1 { throw CommandFailure("--count \(count): expected at least 1") }
        if let duration, !(duration.isFinite && duration > 0) { throw CommandFailure("--duration \(duration): expected seconds > 0") }
        let session = try await DeviceSession.open(session, clock: clock)
        do {
            let policy: ConnectionPolicy = reconnect ? .resilient : .default
            let (connection, label) = try await session.connect(target.device, timeout: target.timeout, policy: policy)
            let (_, characteristic) = try CharacteristicLookup.find(
                target.characteristic, in: try await connection.services(), device: label)
            guard !characteristic.properties.isDisjoint(with: [.notify, .indicate]) else {
                throw CommandFailure("\(CharacteristicLookup.describe(characteristic.uuid)) on \(label) does not notify or indicate (it is \(GATTCommand.properties(characteristic.properties).joined(separator: ", ")))")
            }
            let decoding = try ValueDecoding(uuid: characteristic.uuid, profile: format.profile, options: ProfileOptions(wheelCircumference: circumference))
            let values: AsyncThrowingStream<[UInt8], any Error>
            do { values = try await connection.notifications(of: characteristic.uuid) } catch {
                if PairingFailureLine.isPairingFailure(error) { throw CommandFailure(session.explain(error, address: connection.address)) }
                let reason = session.explain(error, address: connection.address, level: await connection.securityLevel)
                throw CommandFailure("subscribing to \(CharacteristicLookup.describe(characteristic.uuid)) on \(label) failed: \(reason)")
            }
            let json = format.json
            let watcher = Task {
                for await event in connection.events {
                    switch event {
                    case let .reconnecting(attempt):
                        output.emit(json ? JSONOutput.line("reconnecting", ["attempt": .integer(Int64(attempt))]) : "reconnecting to \(label) (attempt \(attempt))…")
                    case .reconnected:
                        output.emit(json ? JSONOutput.line("reconnected", [:]) : "reconnected to \(label)")
                    case let .disconnected(reason):
                        output.emit(json ? JSONOutput.line("disconnected", ["reason": .string("\(reason)")]) : "link lost: \(reason)")
                    default:
                        break
                    }
                }
            }
            defer { watcher.cancel() }
            let start = clock.now
            let limit = count
            let reader = Task { () throws -> Void in
                var seen = 0
                for try await bytes in values {
                    let time = session.seconds(since: start)
                    output.emit(format.line(bytes, decoding: decoding, at: time, type: "notification", extra: json ? [
                        "device": ValueFormatOptions.device(connection.address, label: label), "time": JSONOutput.time(monotonic: time),
                    ] : [:]))
                    seen += 1
                    if let limit, seen >= limit { return }
                }
            }
            let ender = Task {
                if stopOnSignals { await StopSignal.install(duration: duration, clock: clock).wait() } else if let duration { await session.pause(seconds: duration) } else {
                    while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
                }
                reader.cancel()
            }
            defer { ender.cancel() }
            do {
                try await reader.value
            } catch is CancellationError {
            } catch {
                throw CommandFailure("\(label): notifications ended: \(error)")
            }
        } catch {
            await session.close()
            throw error
        }
        await session.close()
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        ContinuousClock.now.seconds(since: start)
    }
}
