import BluetideBase
import BluetideHCI
import BluetideTransport
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideHost

/// Bluetide's whole ``HostStack`` over `tcp-client` against Bumble's virtual controllers
/// (`Interop/bumble/controllers.py`), with a Bumble peer on the other controller:
/// `peripheral.py` when we are the central, `central.py` when we are the peripheral.
@Suite("HostStack ↔ Bumble", .serialized, .bumbleInterop, .timeLimit(.minutes(2)))
struct HostStackBumbleTests {
    /// Our own random static address on the Bumble link.
    static let ourAddress = BluetoothAddress.randomStatic(0x31F2_F3F4_F5F6)

    // MARK: Bluetide central ↔ Bumble peripheral

    @Test("Central: extended reports, MTU 517, the whole GATT script against peripheral.py")
    func centralAgainstBumblePeripheral() async throws {
        let outcome = try await runCentral(legacyReports: false, localMTU: 517, peripheral: BumblePeripheralOptions())
        #expect(outcome.mtu == 517)
        #expect(outcome.log.mtu == 517)
    }

    @Test("Central: legacy reports, MTU 23 (Read Blob, Prepare/Execute Write), other counts")
    func centralAtMTU23WithLegacyReports() async throws {
        var options = BumblePeripheralOptions()
        options.name = "Bluetide Small"
        options.address = "D1:D2:D3:D4:D5:D6"
        options.notifyCount = 7
        options.indicateCount = 2
        options.heartRateCount = 4
        let outcome = try await runCentral(legacyReports: true, localMTU: 23, peripheral: options)
        #expect(outcome.mtu == 23)
        #expect(outcome.log.mtu == 23)
    }

    /// What a central run observed: the effective MTU and the peripheral's event log.
    struct CentralOutcome: Sendable {
        var mtu: Int
        var log: BumblePeripheralLog
    }

    /// Runs the central script against a fresh `peripheral.py`; checks everything except the MTU.
    func runCentral(
        legacyReports: Bool, localMTU: Int, peripheral options: BumblePeripheralOptions,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> CentralOutcome {
        try await withBumble { bumble in
            let (_, ports) = try await bumble.startControllers(legacyReports: legacyReports)
            let (peripheral, ready) = try await bumble.startPeripheral(port: ports[1], options: options)
            async let collected = BumblePeripheralLog.collect(from: peripheral, lineTimeout: .seconds(20))
            let stack = try await startStack(
                port: ports[0], configuration: .init(randomAddress: Self.ourAddress, localMTU: localMTU))
            let mtu: Int
            do {
                mtu = try await within(60, "central script") {
                    try await Self.centralScript(stack: stack, options: options, ready: ready, legacyReports: legacyReports)
                }
            } catch {
                await stack.close()
                throw error
            }
            await stack.close()
            let log = try await collected

            #expect(log.connectedPeer == Self.ourAddress.description, sourceLocation: sourceLocation)
            #expect(log.writtenEcho == [Self.shortValue.bumbleHex, Self.longValue.bumbleHex], sourceLocation: sourceLocation)
            #expect(log.writtenWriteOnly.isEmpty, sourceLocation: sourceLocation)
            #expect(
                log.subscribed == ["notify", "indicate", "heart-rate-measurement", "battery-level"],
                sourceLocation: sourceLocation)
            #expect(log.sent["notify"] == options.notifyCount, sourceLocation: sourceLocation)
            #expect(log.sent["indicate"] == options.indicateCount, sourceLocation: sourceLocation)
            #expect(log.disconnectReason == 0x13, sourceLocation: sourceLocation)
            #expect(await peripheral.waitForExit(timeout: .seconds(10)) == 0, sourceLocation: sourceLocation)
            return CentralOutcome(mtu: mtu, log: log)
        }
    }

    /// The value written short, then long, to the echo characteristic.
    static let shortValue = Array("bluetide-central".utf8)
    static let longValue = (0..<400).map { UInt8(($0 * 11 + 5) % 256) }

    /// Scan, connect, MTU, discovery, reads, writes, subscriptions, refusals, disconnect.
    /// Returns the effective ATT MTU.
    static func centralScript(
        stack: HostStack, options: BumblePeripheralOptions, ready: JSONValue, legacyReports: Bool
    ) async throws -> Int {
        let peerAddress = try BluetoothAddress(options.address, type: .random)

        // Scan: Bumble's controller sends extended reports (0x0D) unless --legacy-reports.
        let found: AdvertisementReport? = try await within(20, "scan for \(options.name)") {
            for await report in try await stack.scan() where report.data.localName == options.name {
                return report
            }
            return nil
        }
        let report = try #require(found, "scan ended without seeing \(options.name)")
        #expect(report.address == peerAddress)
        #expect(report.isConnectable || report.isScanResponse)
        // Only extended reports carry a TX power (Bumble's say 0 dBm); legacy ones have none.
        #expect((report.txPower != nil) == !legacyReports, "legacy reports: \(legacyReports), got \(report)")

        let link = try await stack.connect(to: peerAddress, timeout: 15)
        #expect(link.role == .central)
        #expect(link.peer == peerAddress)

        // MTU: the effective MTU is the smaller of both sides' offers.
        let serverMTU = try await link.gatt.exchangeMTU()
        #expect(serverMTU == 517)
        let mtu = await link.mtu()
        let localMTU = await stack.configuration.localMTU
        #expect(mtu == localMTU)

        // Discovery: GAP and GATT first, then the test services; value handles match the script's.
        let database = try await link.gatt.discoverDatabase()
        let serviceUUIDs = database.map(\.service.uuid)
        #expect(serviceUUIDs.prefix(2) == [.genericAccess, .genericAttribute])
        for uuid in [BluetoothUUID.heartRate, .battery, try BluetoothUUID(BumbleTestService.service)] {
            #expect(serviceUUIDs.contains(uuid), "service \(uuid) not discovered")
        }
        let characteristics = database.flatMap(\.characteristics)
        func characteristic(_ text: String) throws -> GATTRemoteCharacteristic {
            let uuid = try BluetoothUUID(text)
            return try #require(characteristics.first { $0.characteristic.uuid == uuid }, "characteristic \(text)")
        }
        let handles: [(String, String)] = [
            ("long-read", BumbleTestService.longRead), ("echo", BumbleTestService.echo),
            ("indicate", BumbleTestService.indicate), ("notify", BumbleTestService.notify),
            ("write-only", BumbleTestService.writeOnly), ("read-only", BumbleTestService.readOnly),
            ("heart-rate-measurement", BumbleTestService.heartRateMeasurement),
            ("body-sensor-location", BumbleTestService.bodySensorLocation),
            ("battery-level", BumbleTestService.batteryLevel),
        ]
        for (name, uuid) in handles {
            let expected = ready["handles"]?[name]?.int
            #expect(try characteristic(uuid).characteristic.valueHandle == expected.map { UInt16($0) }, "\(name)")
        }
        for uuid in [BumbleTestService.notify, BumbleTestService.indicate, BumbleTestService.heartRateMeasurement] {
            #expect(try characteristic(uuid).descriptors.contains { $0.uuid == .clientCharacteristicConfiguration })
        }
        let gatt = link.gatt
        func value(_ text: String) throws -> UInt16 { try characteristic(text).characteristic.valueHandle }

        // Reads: short values, and the 300-byte one (Read + Read Blob below MTU 301).
        let deviceName = try #require(characteristics.first { $0.characteristic.uuid == .deviceName })
        #expect(try await gatt.read(handle: deviceName.characteristic.valueHandle) == Array(options.name.utf8))
        #expect(try await gatt.read(handle: value(BumbleTestService.bodySensorLocation)) == [0x01])
        #expect(try await gatt.read(handle: value(BumbleTestService.batteryLevel)) == [87])
        #expect(try await gatt.read(handle: value(BumbleTestService.readOnly)) == Array("read-only".utf8))
        #expect(try await gatt.read(handle: value(BumbleTestService.longRead)) == BumbleTestService.longReadValue)

        // Writes: short (Write Request) and long (Prepare Write parts + Execute Write), read back.
        let echo = try value(BumbleTestService.echo)
        #expect(try await gatt.read(handle: echo) == [])
        try await gatt.write(handle: echo, value: shortValue)
        #expect(try await gatt.read(handle: echo) == shortValue)
        try await gatt.writeLong(handle: echo, value: longValue)
        #expect(try await gatt.read(handle: echo) == longValue)

        // Subscriptions: the script sends its numbered values once the CCCD is written.
        func receive(_ count: Int, from stream: AsyncStream<[UInt8]>, _ what: String) async throws -> [[UInt8]] {
            try await within(20, "\(count) values from \(what)") {
                var values: [[UInt8]] = []
                for await value in stream {
                    values.append(value)
                    if values.count == count { break }
                }
                return values
            }
        }
        func numbered(_ total: Int) -> [[UInt8]] {
            (0..<total).map { [UInt8($0 & 0xFF), UInt8($0 >> 8), UInt8(total & 0xFF), UInt8(total >> 8)] }
        }
        let notifications = try await gatt.subscribe(to: characteristic(BumbleTestService.notify).characteristic)
        #expect(try await receive(options.notifyCount, from: notifications, "notify") == numbered(options.notifyCount))
        let indications = try await gatt.subscribe(to: characteristic(BumbleTestService.indicate).characteristic)
        #expect(try await receive(options.indicateCount, from: indications, "indicate") == numbered(options.indicateCount))
        let heartRate = try await gatt.subscribe(
            to: characteristic(BumbleTestService.heartRateMeasurement).characteristic)
        #expect(
            try await receive(options.heartRateCount, from: heartRate, "heart rate")
                == (0..<options.heartRateCount).map { [0x00, UInt8(60 + $0)] })
        let battery = try await gatt.subscribe(to: characteristic(BumbleTestService.batteryLevel).characteristic)
        #expect(try await receive(1, from: battery, "battery level") == [[87]])

        // Refusals arrive as ATT errors naming the handle and the request.
        let writeOnly = try value(BumbleTestService.writeOnly)
        await #expect(throws: GATTClientError.att(.readNotPermitted, handle: writeOnly, request: .readRequest)) {
            try await gatt.read(handle: writeOnly)
        }
        let readOnly = try value(BumbleTestService.readOnly)
        await #expect(throws: GATTClientError.att(.writeNotPermitted, handle: readOnly, request: .writeRequest)) {
            try await gatt.write(handle: readOnly, value: [0x01])
        }

        // Disconnect: Bumble reports our reason (0x13) on both sides.
        let reason = try await link.disconnect(timeout: 15)
        #expect([HCIStatus.remoteUserTerminated, .localHostTerminated].contains(reason))
        #expect(await link.isOpen() == false)
        #expect(await stack.openConnections.isEmpty)
        return mtu
    }

    // MARK: Bumble central ↔ Bluetide peripheral

    @Test("Peripheral: central.py (extended reports, MTU 517) runs its whole script against our server")
    func bumbleCentralAgainstOurPeripheral() async throws {
        let summary = try await runPeripheral(legacyReports: false, centralMTU: 517, longLength: 400)
        #expect(summary.mtu == 517)
    }

    @Test("Peripheral: central.py at MTU 23 (Read Blob, Prepare/Execute Write) with legacy reports")
    func bumbleCentralAtMTU23AgainstOurPeripheral() async throws {
        let summary = try await runPeripheral(legacyReports: true, centralMTU: 23, longLength: 512)
        #expect(summary.mtu == 23)
    }

    /// Serves ``BumbleShapedDatabase`` from a HostStack on controller 1 while `central.py`
    /// runs ``BumbleCentralOptions/fullScript(target:peripheral:)`` on controller 0.
    func runPeripheral(
        legacyReports: Bool, centralMTU: Int, longLength: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> BumbleCentralSummary {
        try await withBumble { bumble in
            let (_, ports) = try await bumble.startControllers(legacyReports: legacyReports)
            var options = BumblePeripheralOptions()
            options.name = legacyReports ? "Bluetide Legacy" : "Bluetide Server"
            options.address = "C6:C5:C4:C3:C2:C1"
            options.notifyCount = legacyReports ? 6 : 5
            options.indicateCount = legacyReports ? 2 : 3
            let address = try BluetoothAddress(options.address, type: .random)
            let stack = try await startStack(
                port: ports[1],
                configuration: .init(
                    randomAddress: address, deviceName: options.name,
                    services: BumbleShapedDatabase.services(batteryLevel: 87)))
            let pusher = Task { try await BumbleShapedDatabase.serve(stack, options: options) }
            do {
                try await stack.startAdvertising(
                    AdvertisingData([.flags([.leGeneralDiscoverable, .brEdrNotSupported]), .completeLocalName(options.name)]),
                    intervalMilliseconds: 20)
                var script = BumbleCentralOptions.fullScript(target: .name(options.name), peripheral: options)
                script.mtu = centralMTU
                script.longLength = longLength
                script.stepTimeoutSeconds = 8
                script.connectTimeoutSeconds = 8
                script.totalTimeoutSeconds = 30
                let central = try await bumble.startCentral(port: ports[0], options: script)
                var incoming = stack.incomingConnections.makeAsyncIterator()
                let connection = try #require(await incoming.next())
                #expect(connection.role == .peripheral, sourceLocation: sourceLocation)
                #expect(connection.peer == (try BluetoothAddress(script.ownAddress, type: .random)), sourceLocation: sourceLocation)

                let summary = try await bumble.centralSummary(central, timeout: .seconds(30))
                expectFullBumbleScript(summary, peripheral: options, longLength: longLength, sourceLocation: sourceLocation)
                #expect(summary.descriptorCount >= 4, sourceLocation: sourceLocation)
                #expect(await central.waitForExit(timeout: .seconds(10)) == 0, sourceLocation: sourceLocation)
                let reason = try await within(20, "our side of the disconnection") { await connection.waitForDisconnection() }
                #expect(reason == .remoteUserTerminated, sourceLocation: sourceLocation)

                // The server saw both writes to the echo value, and the subscriptions in order.
                await stack.close()
                let served = try await pusher.value
                #expect(
                    served.echoWrites == [BumbleTestService.centralShortValue, BumbleTestService.centralLongValue(length: longLength)],
                    sourceLocation: sourceLocation)
                #expect(
                    served.subscribed == [
                        BumbleTestService.notify, BumbleTestService.indicate, BumbleTestService.heartRateMeasurement,
                        BumbleTestService.batteryLevel,
                    ].map { try! BluetoothUUID($0) },
                    sourceLocation: sourceLocation)
                return summary
            } catch {
                pusher.cancel()
                await stack.close()
                throw error
            }
        }
    }

    // MARK: Helpers

    /// A started ``HostStack`` on Bumble controller `port` (127.0.0.1).
    func startStack(port: UInt16, configuration: HostStack.Configuration) async throws -> HostStack {
        let transport = try await Transport.open("tcp-client:127.0.0.1:\(port)")
        let stack = HostStack(transport: transport, configuration: configuration)
        do {
            try await within(30, "HostStack start on port \(port)") { try await stack.start() }
        } catch {
            await stack.close()
            throw error
        }
        return stack
    }
}

/// The GATT database of `Interop/bumble/peripheral.py`, served by Bluetide, and the pushes the
/// script makes on each subscription (see `Interop/bumble/README.md`).
enum BumbleShapedDatabase {
    static func uuid(_ text: String) -> BluetoothUUID { try! BluetoothUUID(text) }

    /// Heart Rate, Battery and the Bluetide test service, with the same UUIDs, properties and values.
    static func services(batteryLevel: UInt8) -> [GATTServiceDefinition] {
        [
            GATTServiceDefinition(uuid: .heartRate, characteristics: [
                GATTCharacteristicDefinition(uuid: .heartRateMeasurement, properties: .notify, value: []),
                GATTCharacteristicDefinition(uuid: .bodySensorLocation, properties: .read, value: [0x01]),
            ]),
            GATTServiceDefinition(uuid: .battery, characteristics: [
                GATTCharacteristicDefinition(uuid: .batteryLevel, properties: [.read, .notify], value: [batteryLevel])
            ]),
            GATTServiceDefinition(uuid: uuid(BumbleTestService.service), characteristics: [
                GATTCharacteristicDefinition(
                    uuid: uuid(BumbleTestService.longRead), properties: .read, value: BumbleTestService.longReadValue),
                GATTCharacteristicDefinition(uuid: uuid(BumbleTestService.echo), properties: [.read, .write], value: []),
                GATTCharacteristicDefinition(uuid: uuid(BumbleTestService.indicate), properties: .indicate, value: []),
                GATTCharacteristicDefinition(uuid: uuid(BumbleTestService.notify), properties: .notify, value: []),
                GATTCharacteristicDefinition(uuid: uuid(BumbleTestService.writeOnly), properties: .write, value: []),
                GATTCharacteristicDefinition(
                    uuid: uuid(BumbleTestService.readOnly), properties: .read, value: Array("read-only".utf8)),
            ]),
        ]
    }

    /// What the server saw while serving.
    struct Served: Sendable {
        var echoWrites: [[UInt8]] = []
        var subscribed: [BluetoothUUID] = []
    }

    /// Watches `stack.serverEvents` and, like `peripheral.py`, pushes the numbered values (index
    /// u16, total u16) on a subscription to notify/indicate, `00 <60+i>` heart rates and one
    /// battery level. Returns what it saw when the stream ends (the stack closed).
    static func serve(_ stack: HostStack, options: BumblePeripheralOptions) async throws -> Served {
        func handle(_ text: String) async throws -> UInt16 {
            try #require(await stack.valueHandle(of: uuid(text)), "no local \(text)")
        }
        let notify = try await handle(BumbleTestService.notify)
        let indicate = try await handle(BumbleTestService.indicate)
        let heartRate = try await handle(BumbleTestService.heartRateMeasurement)
        let battery = try await handle(BumbleTestService.batteryLevel)
        let echo = try await handle(BumbleTestService.echo)
        func numbered(_ index: Int, _ total: Int) -> [UInt8] {
            [UInt8(index & 0xFF), UInt8(index >> 8), UInt8(total & 0xFF), UInt8(total >> 8)]
        }
        var served = Served()
        for await event in stack.serverEvents {
            switch event.event {
            case let .valueWritten(_, handle, _, value) where handle == echo:
                served.echoWrites.append(value)
            case let .subscriptionChanged(_, valueHandle, configuration) where !configuration.isEmpty:
                if let uuid = await stack.characteristicUUID(ofValueHandle: valueHandle) { served.subscribed.append(uuid) }
                switch valueHandle {
                case notify:
                    for i in 0..<options.notifyCount { await stack.updateValue(numbered(i, options.notifyCount), at: notify) }
                case indicate:
                    for i in 0..<options.indicateCount {
                        await stack.updateValue(numbered(i, options.indicateCount), at: indicate)
                    }
                case heartRate:
                    for i in 0..<options.heartRateCount { await stack.updateValue([0x00, UInt8(60 + i)], at: heartRate) }
                case battery:
                    await stack.updateValue([87], at: battery)
                default:
                    break
                }
            default:
                break
            }
        }
        return served
    }
}

extension HostStack {
    /// The characteristic UUID whose value attribute is `handle` in the local server (tests).
    func characteristicUUID(ofValueHandle handle: UInt16) -> BluetoothUUID? {
        for uuid in [
            BumbleTestService.notify, BumbleTestService.indicate, BumbleTestService.heartRateMeasurement,
            BumbleTestService.batteryLevel,
        ] {
            let candidate = BumbleShapedDatabase.uuid(uuid)
            if valueHandle(of: candidate) == handle { return candidate }
        }
        return nil
    }
}
