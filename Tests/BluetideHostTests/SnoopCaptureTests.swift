import BluetideCore
import BluetideHCI
import BluetideTransport
import Foundation
import Testing
@testable import BluetideHost

/// A whole GATT session captured with `+snoop:FILE` reads back with our reader and opens in
/// Wireshark's dissectors (`tshark`) with no malformed packets.
@Suite(.timeLimit(.minutes(1))) struct SnoopCaptureTests {
    @Test func fullSessionCaptureOpensInTsharkWithoutMalformedPackets() async throws {
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

        // Wireshark's dissectors: every record is a frame, none malformed.
        let tshark = try #require(Self.tshark(), "tshark is not installed: apt-get install tshark (.ci/run does)")
        let frames = try Self.run(tshark, ["-r", path, "-T", "fields", "-e", "frame.number"])
        #expect(frames.split(separator: "\n").count == records.count)
        let malformed = try Self.run(tshark, ["-r", path, "-Y", "_ws.malformed || _ws.expert.severity >= \"error\""])
        #expect(malformed.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "tshark found malformed packets:\n\(malformed)")
        let att = try Self.run(tshark, ["-r", path, "-Y", "btatt", "-T", "fields", "-e", "btatt.opcode"])
        #expect(att.split(separator: "\n").count >= 10, "tshark saw too few ATT PDUs: \(att)")
    }

    static func tshark() -> URL? {
        for directory in ["/usr/bin", "/usr/local/bin", "/bin"] {
            let url = URL(fileURLWithPath: directory).appendingPathComponent("tshark")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    static func run(_ executable: URL, _ arguments: [String]) throws -> String {
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
