import Foundation
import Testing

/// Bumble central ↔ Bumble peripheral through `controllers.py`: proves the interop kit (scripts
/// and harness) before Bluetide's host replaces one side of each pair.
@Suite("Bumble interop kit (Bumble ↔ Bumble)", .serialized, .bumbleInterop)
struct BumbleHarnessTests {
    /// What the peripheral reported, collected until it saw the link go down.
    struct PeripheralLog {
        var connectedPeer: String?
        var writtenEcho: [String] = []
        var subscribed: [String] = []
        var disconnectReason: Int?
    }

    /// Reads the peripheral's events (as an AsyncSequence with a per-line timeout) until
    /// `disconnected`.
    static func collect(_ peripheral: BumbleProcess) async throws -> PeripheralLog {
        var log = PeripheralLog()
        for try await event in peripheral.jsonLines(timeout: .seconds(60)) {
            switch event["event"]?.string {
            case "connected": log.connectedPeer = event["peer"]?.string
            case "written" where event["characteristic"]?.string == "echo":
                log.writtenEcho.append(event["hex"]?.string ?? "")
            case "subscribed": log.subscribed.append(event["characteristic"]?.string ?? "")
            case "disconnected":
                log.disconnectReason = event["reason"]?.int
                return log
            case "error", "timeout":
                throw await peripheral.failure("peripheral reported \(event)")
            default: break
            }
        }
        throw await peripheral.failure("peripheral output ended before it reported a disconnection")
    }

    /// Asserts what the full script must find on the test peripheral.
    static func expectFullScript(
        _ summary: BumbleCentralSummary, peripheral: BumblePeripheralOptions, longLength: Int
    ) {
        #expect(summary.ok)
        #expect(summary.peer == peripheral.address + "/R")
        for service in [
            "1800", "1801", BumbleTestService.heartRateService, BumbleTestService.batteryService,
            BumbleTestService.service,
        ] {
            #expect(summary.services.contains(service), "service \(service) not discovered")
        }
        #expect(summary.readErrors.isEmpty)
        #expect(summary.reads[BumbleTestService.longRead] == BumbleTestService.longReadValue.bumbleHex)
        #expect(summary.reads[BumbleTestService.bodySensorLocation] == "01")
        #expect(summary.reads[BumbleTestService.batteryLevel] == "57")
        #expect(summary.reads[BumbleTestService.readOnly] == Array("read-only".utf8).bumbleHex)
        #expect(summary.reads["2A00"] == Array(peripheral.name.utf8).bumbleHex)

        let writes = summary.writes[BumbleTestService.echo] ?? []
        #expect(writes.map(\.kind) == ["short", "long"])
        #expect(writes.first?.hex == BumbleTestService.centralShortValue.bumbleHex)
        #expect(writes.last?.hex == BumbleTestService.centralLongValue(length: longLength).bumbleHex)
        #expect(writes.allSatisfy { $0.readbackMatches == true })

        let notify = summary.subscriptions[BumbleTestService.notify]
        #expect(notify?.kind == "notify")
        #expect(notify?.count == peripheral.notifyCount)
        #expect(notify?.values == numbered(peripheral.notifyCount))
        let indicate = summary.subscriptions[BumbleTestService.indicate]
        #expect(indicate?.kind == "indicate")
        #expect(indicate?.count == peripheral.indicateCount)
        #expect(indicate?.values == numbered(peripheral.indicateCount))
        #expect(summary.subscriptions[BumbleTestService.heartRateMeasurement]?.count == peripheral.heartRateCount)
        #expect(summary.subscriptions[BumbleTestService.heartRateMeasurement]?.values.first == "003c")
        #expect(summary.subscriptions[BumbleTestService.batteryLevel]?.values == ["57"])

        #expect(summary.readDenied[BumbleTestService.writeOnly] == .some(BumbleTestService.readNotPermitted))
        #expect(summary.writeDenied[BumbleTestService.readOnly] == .some(BumbleTestService.writeNotPermitted))
        #expect(summary.disconnectReason == 0x13)
    }

    /// The numbered payloads `index u16 LE | total u16 LE` for 0..<total, in hex.
    static func numbered(_ total: Int) -> [String] {
        (0..<total).map { index in
            [UInt8(index & 0xFF), UInt8(index >> 8), UInt8(total & 0xFF), UInt8(total >> 8)].bumbleHex
        }
    }

    @Test("Central scans by name (extended reports) and runs the full GATT script at MTU 517")
    func fullScriptByName() async throws {
        try await withBumble { bumble in
            let (_, ports) = try await bumble.startControllers()
            let peripheralOptions = BumblePeripheralOptions()
            let (peripheral, ready) = try await bumble.startPeripheral(port: ports[1], options: peripheralOptions)
            #expect(ready["address"]?.string == "C6:C5:C4:C3:C2:C1/R")
            #expect(ready["handles"]?["long-read"]?.int != nil)

            let options = BumbleCentralOptions.fullScript(target: .name(peripheralOptions.name))
            let central = try await bumble.startCentral(port: ports[0], options: options)
            async let peripheralLog = Self.collect(peripheral)
            let summary = try await bumble.centralSummary(central)
            let log = try await peripheralLog

            Self.expectFullScript(summary, peripheral: peripheralOptions, longLength: options.longLength)
            #expect(summary.mtu == 517)
            #expect(log.connectedPeer == "F0:F0:F0:F0:F0:F0/R")
            #expect(log.writtenEcho == writesHex(summary))
            #expect(log.subscribed.contains("notify") && log.subscribed.contains("indicate"))
            #expect(log.disconnectReason == 0x13)
            #expect(await central.waitForExit(timeout: .seconds(30)) == 0)
            #expect(await peripheral.waitForExit(timeout: .seconds(30)) == 0)
        }
    }

    @Test("MTU 23 forces Read Blob and Prepare/Execute Write; legacy advertising reports")
    func smallMTUWithLegacyReports() async throws {
        try await withBumble { bumble in
            let (_, ports) = try await bumble.startControllers(legacyReports: true)
            var peripheralOptions = BumblePeripheralOptions()
            peripheralOptions.name = "Bluetide Small MTU"
            peripheralOptions.address = "D1:D2:D3:D4:D5:D6"
            peripheralOptions.notifyCount = 7
            peripheralOptions.indicateCount = 2
            let (peripheral, _) = try await bumble.startPeripheral(port: ports[1], options: peripheralOptions)

            var options = BumbleCentralOptions.fullScript(
                target: .name(peripheralOptions.name), peripheral: peripheralOptions)
            options.mtu = 23
            options.longLength = 512
            options.ownAddress = "E1:E2:E3:E4:E5:E6"
            let central = try await bumble.startCentral(port: ports[0], options: options)
            async let peripheralLog = Self.collect(peripheral)
            let summary = try await bumble.centralSummary(central)
            let log = try await peripheralLog

            Self.expectFullScript(summary, peripheral: peripheralOptions, longLength: 512)
            #expect(summary.mtu == 23)
            #expect(log.connectedPeer == "E1:E2:E3:E4:E5:E6/R")
            #expect(log.writtenEcho == writesHex(summary))
            #expect(await central.waitForExit(timeout: .seconds(30)) == 0)
        }
    }

    @Test("Central connects by random address; three controllers get distinct ports")
    func connectByAddress() async throws {
        try await withBumble { bumble in
            let (_, ports) = try await bumble.startControllers(count: 3)
            #expect(Set(ports).count == 3)
            let peripheralOptions = BumblePeripheralOptions()
            let (peripheral, _) = try await bumble.startPeripheral(port: ports[2], options: peripheralOptions)

            var options = BumbleCentralOptions(target: .address(peripheralOptions.address + "/R"))
            options.readDenied = [BumbleTestService.writeOnly]
            options.writeDenied = [BumbleTestService.readOnly]
            options.extraArguments = ["--no-read-all"]
            let central = try await bumble.startCentral(port: ports[0], options: options)

            // Walk the central's steps as an AsyncSequence.
            var steps: [String] = []
            for try await step in central.jsonLines(timeout: .seconds(60)) {
                steps.append(step["step"]?.string ?? "?")
                if step["step"]?.string == "summary" {
                    #expect(step["ok"]?.bool == true)
                    #expect(step["read_denied"]?[BumbleTestService.writeOnly]?.int == 2)
                    #expect(step["write_denied"]?[BumbleTestService.readOnly]?.int == 3)
                    break
                }
            }
            #expect(steps == ["ready", "connected", "mtu", "discovered", "read-denied", "write-denied",
                              "disconnected", "summary"])
            #expect(await central.waitForExit(timeout: .seconds(30)) == 0)
            #expect(await peripheral.waitForExit(timeout: .seconds(30)) == 0)
        }
    }

    @Test("Central reports a JSON error and exits non-zero when nobody answers")
    func centralFailsWithoutPeer() async throws {
        try await withBumble { bumble in
            let (_, ports) = try await bumble.startControllers()
            // Public address type: no such advertiser, so the connection never completes.
            var options = BumbleCentralOptions(target: .address("C6:C5:C4:C3:C2:C1/P"))
            options.connectTimeoutSeconds = 2
            let central = try await bumble.startCentral(port: ports[0], options: options)
            let error = try await central.firstJSON("step", "error", timeout: .seconds(60))
            #expect(error["during"]?.string == "connect")
            let summary = try await bumble.centralSummary(central)
            #expect(!summary.ok)
            #expect(summary.peer == nil)
            #expect(await central.waitForExit(timeout: .seconds(30)) == 1)
        }
    }

    @Test("A script that never answers is stopped by PID when the test body throws")
    func processesAreStoppedOnFailure() async throws {
        var leftover: BumbleProcess?
        await #expect(throws: BumbleHarnessError.self) {
            try await withBumble { bumble in
                let (controllers, _) = try await bumble.startControllers()
                leftover = controllers
                throw BumbleHarnessError(description: "simulated test failure")
            }
        }
        let controllers = try #require(leftover)
        #expect(await controllers.waitForExit(timeout: .seconds(15)) != nil)
    }

    func writesHex(_ summary: BumbleCentralSummary) -> [String] {
        (summary.writes[BumbleTestService.echo] ?? []).map(\.hex)
    }
}
