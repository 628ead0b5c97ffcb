import BluetideTestSupport
import Foundation
import Testing

/// Bumble central ↔ Bumble peripheral through `controllers.py`: proves the interop kit (scripts
/// and harness) before Bluetide's host replaces one side of each pair.
@Suite("Bumble interop kit (Bumble ↔ Bumble)", .serialized, .bumbleInterop)
struct BumbleHarnessTests {
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
            async let peripheralLog = BumblePeripheralLog.collect(from: peripheral)
            let summary = try await bumble.centralSummary(central)
            let log = try await peripheralLog

            expectFullBumbleScript(summary, peripheral: peripheralOptions, longLength: options.longLength)
            #expect(summary.mtu == 517)
            #expect(log.connectedPeer == "F0:F0:F0:F0:F0:F0/R")
            #expect(log.writtenEcho == writesHex(summary))
            #expect(log.subscribed == ["notify", "indicate", "heart-rate-measurement", "battery-level"])
            #expect(log.sent["notify"] == peripheralOptions.notifyCount)
            #expect(log.sent["indicate"] == peripheralOptions.indicateCount)
            #expect(log.mtu == 517)
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
            async let peripheralLog = BumblePeripheralLog.collect(from: peripheral)
            let summary = try await bumble.centralSummary(central)
            let log = try await peripheralLog

            expectFullBumbleScript(summary, peripheral: peripheralOptions, longLength: 512)
            #expect(summary.mtu == 23)
            #expect(log.connectedPeer == "E1:E2:E3:E4:E5:E6/R")
            #expect(log.writtenEcho == writesHex(summary))
            #expect(await central.waitForExit(timeout: .seconds(30)) == 0)
        }
    }

    @Test("Central connects by random address; three controllers get distinct ports")
    func connectByRandomAddress() async throws {
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
            // After the exit the output ends: the harness reports the end instead of timing out.
            #expect(try await central.nextLine(timeout: .seconds(30)) == nil)
        }
    }

    @Test("Both sides on public addresses: each controller has its own, and data flows")
    func publicAddresses() async throws {
        try await withBumble { bumble in
            let (_, ports) = try await bumble.startControllers(count: 3)
            var peripheralOptions = BumblePeripheralOptions()
            peripheralOptions.usePublicAddress = true
            // Controller 2 (0-based) has public address 00:00:00:00:00:03.
            let (peripheral, ready) = try await bumble.startPeripheral(port: ports[2], options: peripheralOptions)
            #expect(ready["address"]?.string == "00:00:00:00:00:03/P")

            var options = BumbleCentralOptions(target: .address("00:00:00:00:00:03/P"))
            options.usePublicAddress = true
            options.writeLong = [BumbleTestService.echo]
            options.subscribe = [.init(uuid: BumbleTestService.indicate, count: peripheralOptions.indicateCount)]
            let central = try await bumble.startCentral(port: ports[0], options: options)
            async let peripheralLog = BumblePeripheralLog.collect(from: peripheral)
            let summary = try await bumble.centralSummary(central)
            let log = try await peripheralLog

            #expect(summary.ok)
            #expect(summary.peer == "00:00:00:00:00:03/P")
            #expect(log.connectedPeer == "00:00:00:00:00:01/P")
            #expect(summary.reads[BumbleTestService.longRead] == BumbleTestService.longReadValue.bumbleHex)
            #expect(log.writtenEcho == [BumbleTestService.centralLongValue(length: options.longLength).bumbleHex])
            #expect(summary.subscriptions[BumbleTestService.indicate]?.count == peripheralOptions.indicateCount)
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

    private func writesHex(_ summary: BumbleCentralSummary) -> [String] {
        (summary.writes[BumbleTestService.echo] ?? []).map(\.hex)
    }
}

/// The pieces under the Bumble harness (no Python needed): the timed queue and JSON lines.
@Suite("Bumble harness support")
struct BumbleHarnessSupportTests {
    @Test("Values come out in delivery order, then nil after finish")
    func orderAndEnd() async throws {
        let mailbox = TimedMailbox<Int>()
        for value in 1...3 { await mailbox.deliver(value) }
        await mailbox.finish()
        var received: [Int] = []
        while let value = try await mailbox.next(timeout: .seconds(30)) { received.append(value) }
        #expect(received == [1, 2, 3])
        #expect(await mailbox.history == [1, 2, 3])
    }

    @Test("A waiting reader gets a value delivered later")
    func waiterIsResumed() async throws {
        let mailbox = TimedMailbox<String>()
        async let value = mailbox.next(timeout: .seconds(60))
        await mailbox.deliver("hello")
        #expect(try await value == "hello")
    }

    @Test("Nothing delivered: the read throws Timeout")
    func timeout() async {
        let mailbox = TimedMailbox<Int>()
        await #expect(throws: TimedMailbox<Int>.Timeout.self) {
            _ = try await mailbox.next(timeout: .milliseconds(20))
        }
    }

    @Test("Cancelling the reader ends its wait with CancellationError")
    func cancellation() async {
        let mailbox = TimedMailbox<Int>()
        let reader = Task { try await mailbox.next(timeout: .seconds(600)) }
        reader.cancel()
        await #expect(throws: CancellationError.self) { _ = try await reader.value }
    }

    @Test("JSONValue parses script lines and rejects other text")
    func jsonLines() throws {
        let line = #"{"step": "read", "length": 300, "ok": true, "values": ["00", null]}"#
        let json = try #require(JSONValue(line: line))
        #expect(json["step"]?.string == "read")
        #expect(json["length"]?.int == 300)
        #expect(json["ok"]?.bool == true)
        #expect(json["values"]?[0]?.string == "00")
        #expect(json["values"]?[1] == .null)
        #expect(json["missing"] == nil)
        #expect(JSONValue(line: "READY 1234 5678") == nil)
    }
}
