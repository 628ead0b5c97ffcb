import Bluetide
import BluetideBase
import BluetideEmulation
import BluetideHost
import BluetideProfiles
import BluetideRecording
import BluetideTransport
import Foundation
import Synchronization
import Testing

/// ``ReplayPeripheral`` serving a value log from its file, read as a stream twice (what to serve,
/// then the values as they play), never held whole.
@Suite struct ReplayPeripheralStreamTests {
    static func file(_ lines: [String]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("replay-stream-\(UUID().uuidString.prefix(8)).jsonl").path
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The example log with a malformed line after the first notification: served like the log
    /// in memory, the malformed line warned about with its number as playback passes it.
    @Test func aFileIsServedAndPlayedAsAStream() async throws {
        try await inVirtualTime { clock in
            let example = ReplayPeripheralTests.exampleLog.split(separator: "\n").map(String.init)
            let path = try Self.file([example[0], example[1], #"{"t":"later"}"#] + example[2...])
            defer { try? FileManager.default.removeItem(atPath: path) }
            let inMemory = try ValueLogReader.read(bytes: Array(ReplayPeripheralTests.exampleLog.utf8))
            let warnings = Mutex<[ValueLogWarning]>([])
            let address = BluetoothAddress.randomStatic(0x1234_0000_0F1F)
            let (rig, peripheral) = try await EmulationRig.connect(address: address, clock: clock) { transport in
                let bluetooth = try await Bluetooth.start(
                    on: transport, spec: "virtual", configuration: .init(
                        address: address, deviceName: "Replay", commandTimeout: .seconds(testCommandTimeout), clock: clock))
                let peripheral = try ReplayPeripheral(bluetooth: bluetooth, logAt: path, pace: .speed(10)) { warning in
                    warnings.withLock { $0.append(warning) }
                }
                try await peripheral.start()
                return peripheral
            }
            #expect(peripheral.recordCount == 3, "two notifications and a read; the write is not played")
            #expect(peripheral.advertisedName == "KICKR CORE 1234")
            #expect(rig.database.map(\.service.uuid).contains(.cyclingSpeedAndCadence))
            #expect(rig.database.flatMap(\.characteristics).allSatisfy { $0.characteristic.uuid != .scControlPoint })
            let battery = try rig.characteristic(.batteryLevel, in: .battery)
            #expect(!battery.properties.contains(.notify))
            #expect(warnings.withLock { $0.isEmpty }, "the outline pass warns about nothing; playback does")

            let measurement = try rig.characteristic(.cscMeasurement, in: .cyclingSpeedAndCadence)
            let stream = try await rig.connection.gatt.subscribe(to: measurement)
            let values = try await take(2, from: stream, "two replayed CSC notifications")
            #expect(values == inMemory.records.prefix(2).map(\.value))
            await peripheral.waitUntilPlayed()
            #expect(try await rig.connection.gatt.read(handle: battery.valueHandle) == [0x5F])
            let seen = warnings.withLock { $0 }
            #expect(seen.map(\.kind) == [.malformedLine] && seen.map(\.problem.line) == [3], "\(seen)")
            #expect(await peripheral.failure == nil)
            await peripheral.close()
            await rig.close()
        }
    }

    /// `strict` refuses a damaged file before serving; a pipe is refused (it cannot be read
    /// twice); a missing file names the file.
    @Test func strictPipesAndMissingFilesAreRefusedBeforeServing() async throws {
        let example = ReplayPeripheralTests.exampleLog.split(separator: "\n").map(String.init)
        let damaged = try Self.file([example[0], example[1], "{", example[2]])
        defer { try? FileManager.default.removeItem(atPath: damaged) }
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("replay-fifo-\(UUID().uuidString.prefix(8))").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let missing = "/nonexistent/\(UUID().uuidString).jsonl"
        let link = "replay-refusals-\(UUID().uuidString.prefix(8))"
        let transport = await VirtualTransport.attach(toLinkNamed: link)
        let bluetooth = try await Bluetooth.start(
            on: transport, spec: "virtual", configuration: .init(address: .randomStatic(0x1234_0000_0F2F), commandTimeout: .seconds(testCommandTimeout)))
        for (path, expected) in [(damaged, "line 3"), (fifo, "not a regular file"), (missing, missing)] {
            do {
                _ = try ReplayPeripheral(bluetooth: bluetooth, logAt: path, strict: true)
                Issue.record("\(path) was accepted")
            } catch {
                #expect("\(error)".contains(expected), "\(error)")
            }
        }
        await bluetooth.close()
    }
}
