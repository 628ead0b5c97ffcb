import BluetideBase
import BluetideHCI
import BluetideTransport
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideHost

/// A whole GATT session captured with `+snoop:FILE` reads back with our reader and opens in
/// Wireshark's dissectors (`tshark`) with no malformed packets.
@Suite(.timeLimit(.minutes(1))) struct SnoopCaptureTests {
    @Test(.needs("tshark", install: "apt-get install tshark")) func fullSessionCaptureOpensInTsharkWithoutMalformedPackets() async throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("bluetide-snoop-\(UUID().uuidString).btsnoop").path
        defer { if ProcessInfo.processInfo.environment["BLUETIDE_KEEP_SNOOP"] == nil { try? FileManager.default.removeItem(atPath: path) } }
        let linkName = "snoop-\(UUID().uuidString)"

        let capturedTransport = try await Transport.open("virtual:\(linkName)+snoop:\(path)")
        let peripheralTransport = await VirtualTransport.attach(toLinkNamed: linkName)
        let address = BluetoothAddress.randomStatic(0x0123_4567_89AB)
        let peripheral = HostStack(
            transport: peripheralTransport,
            configuration: .init(randomAddress: address, deviceName: "Snooped", services: [TestService.definition]))
        let central = HostStack(transport: capturedTransport, configuration: .init(randomAddress: .randomStatic(0x42)))
        try await peripheral.start()
        try await central.start()
        try await peripheral.startAdvertising(AdvertisingData([.completeLocalName("Snooped")]), intervalMilliseconds: 20)

        let link = try await within(10, "connect") { try await central.connect(to: address, timeout: 5) }
        _ = try await link.gatt.exchangeMTU()
        let services = try await link.gatt.discoverDatabase()
        let characteristics = services.flatMap(\.characteristics).map(\.characteristic)
        let long = try #require(characteristics.first { $0.uuid == TestService.longValue })
        #expect(try await link.gatt.read(handle: long.valueHandle) == TestService.longBytes)
        let echo = try #require(characteristics.first { $0.uuid == TestService.echo })
        try await link.gatt.writeLong(handle: echo.valueHandle, value: Array(repeating: 0x5A, count: 400))
        let notify = try #require(characteristics.first { $0.uuid == TestService.notify })
        let values = try await link.gatt.subscribe(to: notify)
        let handle = try #require(await peripheral.valueHandle(of: TestService.notify))
        await peripheral.updateValue([7], at: handle)
        var iterator = values.makeAsyncIterator()
        #expect(await iterator.next() == [7])
        try await link.disconnect()
        await central.close()
        await peripheral.close()

        // Our reader: a header, then commands, events and ACL both ways.
        let records = try BTSnoopReader.records(atPath: path)
        #expect(records.count > 40)
        #expect(records.contains { if case .command = $0.packet { true } else { false } })
        #expect(records.contains { if case .acl = $0.packet { true } else { false } })
        #expect(zip(records, records.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp })

        try await Self.expectOpensInTshark(path, records: records.count)
    }

    /// `gatt`-style dump (discover everything, read every readable value) of a Bumble peer
    /// (`Interop/bumble/peripheral.py`) over Bumble's controllers, captured with `+snoop`.
    @Test(.bumbleInterop, .needs("tshark", install: "apt-get install tshark")) func gattDumpOfABumblePeerOpensInTshark() async throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("bluetide-bumble-snoop-\(UUID().uuidString).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await withBumble { bumble in
            let (_, ports) = try await bumble.startControllers(legacyReports: false)
            let options = BumblePeripheralOptions()
            let (peripheral, _) = try await bumble.startPeripheral(port: ports[1], options: options)
            let transport = try await Transport.open("tcp-client:127.0.0.1:\(ports[0])+snoop:\(path)")
            let stack = HostStack(transport: transport, configuration: .init(randomAddress: .randomStatic(0x51_5E_ED)))
            do {
                try await within(30, "start") { try await stack.start() }
                let peer = try BluetoothAddress(options.address, type: .random)
                let link = try await within(30, "connect") { try await stack.connect(to: peer, timeout: 15) }
                _ = try await link.gatt.exchangeMTU()
                let services = try await link.gatt.discoverDatabase()
                #expect(services.contains { $0.service.uuid == .heartRate })
                var reads = 0
                for characteristic in services.flatMap(\.characteristics).map(\.characteristic)
                where characteristic.properties.contains(.read) {
                    // One of them refuses reads (ATT error 0x02): that exchange belongs in the capture too.
                    if (try? await link.gatt.read(handle: characteristic.valueHandle)) != nil { reads += 1 }
                }
                #expect(reads >= 4)
                try await link.disconnect()
            } catch {
                await stack.close()
                throw error
            }
            await stack.close()
            _ = await peripheral.waitForExit(timeout: .seconds(10))
        }
        let records = try BTSnoopReader.records(atPath: path)
        #expect(records.count > 40)
        try await Self.expectOpensInTshark(path, records: records.count)
    }

    /// Wireshark's dissectors read the capture: every record is a frame, none malformed, ATT seen.
    static func expectOpensInTshark(
        _ path: String, records: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let tshark = try #require(Self.tshark(), "tshark is not installed: apt-get install tshark (.ci/run does)")
        let frames = try await Self.run(tshark, ["-r", path, "-T", "fields", "-e", "frame.number"])
        #expect(frames.split(separator: "\n").count == records, sourceLocation: sourceLocation)
        let malformed = try await Self.run(tshark, ["-r", path, "-Y", "_ws.malformed || _ws.expert.severity >= \"error\""])
        #expect(
            malformed.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty,
            "tshark found malformed packets:\n\(malformed)", sourceLocation: sourceLocation)
        let att = try await Self.run(tshark, ["-r", path, "-Y", "btatt", "-T", "fields", "-e", "btatt.opcode"])
        #expect(att.split(separator: "\n").count >= 10, "tshark saw too few ATT PDUs: \(att)", sourceLocation: sourceLocation)
    }

    static func tshark() -> URL? {
        for directory in ["/usr/bin", "/usr/local/bin", "/bin"] {
            let url = URL(fileURLWithPath: directory).appendingPathComponent("tshark")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    /// Runs a tool to completion on a thread of its own (never on the 2-thread cooperative pool).
    static func run(_ executable: URL, _ arguments: [String]) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try runBlocking(executable, arguments) }) }.start()
        }
    }

    private static func runBlocking(_ executable: URL, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
