import BluetideTestSupport
import BluetideTransport
import Foundation
import Testing
@testable import Bluetide

/// Runs the README's "Using the API" examples (ReadmeExamples.swift): each against the other in
/// the virtual world, against our own central, and against Bumble's peripheral.py / central.py
/// over Bumble's virtual controllers.
@Suite(.timeLimit(.minutes(2))) struct ReadmeExampleTests {
    static let beats: [UInt16] = [61, 64, 66, 63]

    @Test func theCentralExampleReadsTheHeartRateStrapOfThePeripheralExample() async throws {
        let link = "virtual:\(uniqueLinkName())"
        let strap = Task { try await serveHeartRateStrap(transport: link, name: "Readme HRM", beats: Self.beats) }
        defer { strap.cancel() }
        let watched = try await within(60, "central example") {
            try await watchHeartRate(transport: link, name: "Readme HRM", count: Self.beats.count)
        }
        #expect(watched.location == .chest)
        #expect(watched.battery == BatteryLevel(percent: 87))
        #expect(watched.measurements.map(\.beatsPerMinute) == Self.beats)
        // The central disconnected, so the peripheral example returned.
        try await within(30, "peripheral example ends") { try await strap.value }
    }

    @Test func thePeripheralExampleServesOurCentral() async throws {
        let link = uniqueLinkName()
        let central = try await TestCentral.start(link: link)
        defer { Task { await central.close() } }
        let strap = Task { try await serveHeartRateStrap(transport: "virtual:\(link)", name: "Readme Strap", beats: Self.beats) }
        defer { strap.cancel() }

        let scan = try await central.central.scan(filter: ScanFilter(serviceUUIDs: [.heartRate]), timeout: .seconds(30))
        let advertisement = try #require(await scan.first { _ in true })
        #expect(advertisement.name == "Readme Strap")
        #expect(advertisement.serviceUUIDs == [.heartRate, .battery])
        let connection = try await central.central.connect(to: advertisement, policy: .test)
        #expect(try await connection.read(.bodySensorLocation) == [0x01])
        #expect(try await connection.read(.batteryLevel) == [87])
        try await connection.write(HeartRateControlPoint.resetEnergyExpended, to: .heartRateControlPoint)
        await #expect(throws: BluetideError.attError(ATTErrorCode(0x80), characteristic: .heartRateControlPoint, operation: "write")) {
            try await connection.write(HeartRateControlPoint.unsupported(2), to: .heartRateControlPoint)
        }
        let values = try await connection.notifications(of: .heartRateMeasurement)
        var received: [[UInt8]] = []
        for try await value in values {
            received.append(value)
            if received.count == Self.beats.count { break }
        }
        #expect(received == Self.beats.map { [0x00, UInt8($0)] })
        await connection.disconnect()
        try await within(30, "peripheral example ends") { try await strap.value }
    }
}

/// README.md shows exactly the code of ReadmeExamples.swift.
@Suite struct ReadmeExampleTextTests {
    @Test func theReadmeShowsTheCompiledExamples() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let compiled = try String(
            contentsOf: root.appendingPathComponent("Tests/BluetideTests/ReadmeExamples.swift"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## Using the API\n").dropFirst().first?
            .components(separatedBy: "\n## ").first)
        let blocks = section.components(separatedBy: "```swift\nimport Bluetide\n\n").dropFirst()
            .compactMap { $0.components(separatedBy: "```").first }
        #expect(blocks.count == 2)
        for block in blocks {
            #expect(compiled.contains(block), "README block not in ReadmeExamples.swift:\n\(block)")
        }
    }
}

/// The same examples against Bumble (Interop/bumble): our central example reads
/// `peripheral.py`, and `central.py` runs its script against our peripheral example.
@Suite(.serialized, .bumbleInterop, .timeLimit(.minutes(2))) struct ReadmeExampleBumbleTests {
    @Test func theCentralExampleReadsBumblesHeartRatePeripheral() async throws {
        let (controllers, ports) = try await BumbleLinkedControllers.start()
        var processes = [controllers]
        defer { let all = processes; Task { for process in all.reversed() { await process.stop() } } }
        let peripheral = try await BumbleProcess.launchPython(
            .interopScript("peripheral.py"),
            arguments: [
                String(ports[1]), "--name", "Bumble HRM", "--heart-rate-count", "3", "--timeout", "60",
                "--exit-on-stdin-eof",
            ])
        processes.append(peripheral)
        _ = try await peripheral.firstJSON("event", "ready", timeout: .seconds(30))

        let watched = try await within(60, "central example against peripheral.py") {
            try await watchHeartRate(transport: "tcp-client:127.0.0.1:\(ports[0])", name: "Bumble HRM", count: 3)
        }
        #expect(watched.location == .chest)
        #expect(watched.battery == BatteryLevel(percent: 87))
        #expect(watched.measurements.map(\.beatsPerMinute) == [60, 61, 62])
        // peripheral.py exits 0 once the link is disconnected.
        #expect(await peripheral.waitForExit(timeout: .seconds(30)) == 0)
    }

    @Test func bumblesCentralReadsWritesAndSubscribesToThePeripheralExample() async throws {
        let (controllers, ports) = try await BumbleLinkedControllers.start()
        defer { Task { await controllers.stop() } }
        let strap = Task {
            try await serveHeartRateStrap(transport: "tcp-client:127.0.0.1:\(ports[0])", name: "Readme Bumble", beats: [70, 71, 72])
        }
        defer { strap.cancel() }
        let central = try await BumbleProcess.launchPython(
            .interopScript("central.py"),
            arguments: [
                String(ports[1]), "--name", "Readme Bumble",
                "--write-short", "2A39", "--short-hex", "01", "--subscribe", "2A37=3",
                "--read-denied", "2A39", "--write-denied", "2A38",
                "--step-timeout", "20", "--scan-timeout", "30", "--connect-timeout", "20", "--timeout", "90",
                "--exit-on-stdin-eof",
            ])
        defer { Task { await central.stop() } }
        let line = try await central.firstLine(timeout: .seconds(100), describing: "summary") {
            JSONValue(line: $0)?["step"]?.string == "summary"
        }
        let summary = try CentralSummary(line: line)
        let printed = await central.output()
        #expect(summary.ok, "\(printed.joined(separator: "\n"))")
        #expect(summary.services.contains("180D") && summary.services.contains("180F"))
        #expect(summary.reads["2A38"] == "01")
        #expect(summary.reads["2A19"] == "57")
        #expect(summary.writes["2A39"]?.map(\.hex) == ["01"])
        #expect(summary.subscriptions["2A37"]?.values == ["0046", "0047", "0048"])
        // Reading the write-only control point and writing the read-only location are refused.
        #expect(summary.readDenied["2A39"] == 0x02)
        #expect(summary.writeDenied["2A38"] == 0x03)
        #expect(await central.waitForExit(timeout: .seconds(20)) == 0)
        // central.py disconnected, so the peripheral example returned.
        try await within(30, "peripheral example ends") { try await strap.value }
    }
}

/// The fields of central.py's summary line these tests check.
struct CentralSummary: Decodable {
    struct Write: Decodable { let hex: String }
    struct Subscription: Decodable { let values: [String] }
    let ok: Bool
    let services: [String]
    let reads: [String: String]
    let writes: [String: [Write]]
    let subscriptions: [String: Subscription]
    let readDenied: [String: Int?]
    let writeDenied: [String: Int?]

    init(line: String) throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        self = try decoder.decode(Self.self, from: Data(line.utf8))
    }
}
