import BluetideBase
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideHost

/// Our GATT client (over our ATT bearer) against Bumble's GATT server
/// (`bumble.gatt_server.Server`) over a pipe: raw ATT PDUs as hex lines, no HCI. Skipped when
/// `python3` with `bumble` is not installed.
@Suite struct GATTBumbleServerInteropTests {
    /// The Bumble side: a server whose L2CAP sends print `ATT <hex>`; `ATT` lines from stdin go
    /// to `Server.on_gatt_pdu`; `PUSH notify|indicate <name> <hex>` makes it push a value
    /// (`CONFIRMED` follows a confirmed indication); writes print `WRITTEN <hex>`.
    static let driver = #"""
    import asyncio, sys, threading, types
    from bumble import att, gatt, gatt_server

    def emit(*parts):
        print(*parts, flush=True)

    class PipeConnection:
        handle = 0x0040
        encryption = 0
        authenticated = False
        EVENT_DISCONNECTION = 'disconnection'
        def __init__(self):
            self.att_mtu = att.ATT_DEFAULT_MTU
        def on(self, *args, **kwargs):
            pass
        def on_att_mtu_update(self, mtu):
            self.att_mtu = mtu

    class PipeDevice:
        def __init__(self):
            self.l2cap_channel_manager = types.SimpleNamespace(le_coc_channels={})
        def send_l2cap_pdu(self, handle, cid, pdu):
            emit('ATT', bytes(pdu).hex())

    NUS = '6E4000{:02X}-B5A3-F393-E0A9-E50E24DCCA9E'
    P = gatt.Characteristic.Properties
    R = att.Attribute.Permissions.READABLE
    W = att.Attribute.Permissions.WRITEABLE

    async def main():
        loop = asyncio.get_running_loop()
        server = gatt_server.Server(PipeDevice())
        server.max_mtu = 100
        conn = PipeConnection()
        hrm = gatt.Characteristic('2A37', P.NOTIFY, att.Attribute.Permissions(0), b'')
        bsl = gatt.Characteristic('2A38', P.READ, R, bytes([1]))
        long = gatt.Characteristic(NUS.format(2), P.READ | P.WRITE, R | W, bytes((i * 7) % 256 for i in range(300)))
        tx = gatt.Characteristic(NUS.format(3), P.WRITE | P.WRITE_WITHOUT_RESPONSE, W,
                                 att.AttributeValue(write=lambda c, v: emit('WRITTEN', bytes(v).hex())))
        punch = gatt.Characteristic(NUS.format(4), P.NOTIFY | P.INDICATE, R, bytes([0]),
                                    descriptors=[gatt.Descriptor('2901', R, b'Punch')])
        server.add_services([gatt.Service('180D', [hrm, bsl]), gatt.Service(NUS.format(1), [long, tx, punch])])
        chars = {'hrm': hrm, 'punch': punch}
        done = asyncio.Event()
        async def push(kind, name, value):
            if kind == 'notify':
                await server.notify_subscriber(conn, chars[name], value)
            else:
                await server.indicate_subscriber(conn, chars[name], value)
                emit('CONFIRMED', value.hex())
        def handle(line):
            parts = line.split()
            if len(parts) == 2 and parts[0] == 'ATT':
                server.on_gatt_pdu(conn, att.ATT_PDU.from_bytes(bytes.fromhex(parts[1])))
            elif len(parts) == 4 and parts[0] == 'PUSH':
                asyncio.ensure_future(push(parts[1], parts[2], bytes.fromhex(parts[3])))
            elif parts and parts[0] == 'QUIT':
                done.set()
        def reader():
            for line in sys.stdin:
                loop.call_soon_threadsafe(handle, line)
            loop.call_soon_threadsafe(done.set)
        threading.Thread(target=reader, daemon=True).start()
        emit('READY')
        try:
            await asyncio.wait_for(done.wait(), 120)
        except BaseException as e:
            emit('FAIL', repr(e).replace('\n', ' '))

    asyncio.run(main())
    """#

    @Test(.enabled(if: GATTBumbleInteropTests.bumbleAvailable)) func ourClientAgainstBumbleServer() async throws {
        _ = try await BumbleEnvironment.requireAvailable()
        let peer = try await BumbleServerPeer(script: Self.driver)
        do {
            try await exercise(peer)
        } catch {
            await peer.finish()
            throw error
        }
    }

    /// Our client's whole conversation with the Bumble server; ends with `peer.finish()`.
    private func exercise(_ peer: BumbleServerPeer) async throws {
        let client = GATTClient(channel: peer)
        await peer.attach(client)
        #expect(await peer.waitFor("READY") != nil)

        let services = try await client.discoverPrimaryServices()
        #expect(services.map(\.uuid) == [.heartRate, GATTFixture.service])
        let hr = try await client.discoverCharacteristics(in: services[0])
        #expect(hr.map(\.uuid) == [.heartRateMeasurement, .bodySensorLocation])
        let nus = try await client.discoverCharacteristics(in: services[1])
        #expect(nus.map(\.uuid) == [GATTFixture.uuid(2), GATTFixture.uuid(3), GATTFixture.uuid(4)])
        let punchDescriptors = try await client.discoverDescriptors(of: nus[2])
        #expect(Set(punchDescriptors.map(\.uuid)) == [.clientCharacteristicConfiguration, .characteristicUserDescription])
        #expect(try await client.discoverPrimaryServices(uuid: .heartRate).map(\.startHandle) == [services[0].startHandle])

        // Long read at MTU 23 (Read + Read Blob), long write (Prepare/Execute), read back.
        #expect(try await client.read(handle: hr[1].valueHandle) == [1])
        #expect(try await client.read(handle: nus[0].valueHandle) == GATTFixture.longValue)
        let long = (0..<300).map { UInt8(truncatingIfNeeded: 255 - $0) }
        try await client.write(handle: nus[0].valueHandle, value: long)
        #expect(try await client.read(handle: nus[0].valueHandle) == long)
        await #expect(throws: GATTClientError.att(.invalidHandle, handle: 0x0999, request: .readRequest)) {
            try await client.read(handle: 0x0999)
        }
        try await client.writeWithoutResponse(handle: nus[1].valueHandle, value: [0xAB, 0xCD])
        #expect(await peer.waitFor("WRITTEN") == "WRITTEN abcd")

        // Notifications and a confirmed indication.
        let heartRate = try await client.subscribe(to: hr[0])
        await peer.control("PUSH notify hrm 0048")
        var hrIterator = heartRate.makeAsyncIterator()
        await peer.pumpUntilDelivered()
        #expect(await hrIterator.next() == [0x00, 0x48])
        let punches = try await client.subscribe(to: nus[2], preferIndications: true)
        await peer.control("PUSH indicate punch 07")
        #expect(await peer.waitFor("CONFIRMED") == "CONFIRMED 07", "Bumble saw our confirmation")
        var punchIterator = punches.makeAsyncIterator()
        #expect(await punchIterator.next() == [0x07])

        // MTU exchange: Bumble's max is 100.
        #expect(try await client.exchangeMTU() == 100)
        #expect(await peer.mtu() == 100)
        #expect(try await client.read(handle: nus[0].valueHandle) == long)
        await peer.finish()
    }
}

/// Runs the Bumble server driver (through the shared `BumbleProcess` harness: its output is read
/// on dedicated threads, every wait has a timeout) and bridges it to an ``ATTBearer`` on our side.
actor BumbleServerPeer: ATTRequestChannel {
    /// How long to wait for each line from the driver (it gives up by itself after 30 s).
    static let lineTimeout: Duration = .seconds(60)

    private let process: BumbleProcess
    private var bearer = ATTBearer(localMTU: 517)
    private var results: [ATTTransactionID: Result<ATTPDU, any Error>] = [:]
    private var lines: [String] = []
    private var deliveries = 0
    private var client: GATTClient?
    private let directory: URL

    init(script: String) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluetide-gatt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("server.py")
        try script.write(to: path, atomically: true, encoding: .utf8)
        process = try await BumbleProcess.launchPython(.script(path), name: "gatt-server-driver")
    }

    func attach(_ client: GATTClient) { self.client = client }
    func mtu() -> Int { bearer.mtu }

    func request(_ pdu: ATTPDU) async throws -> ATTPDU {
        let (id, events) = bearer.enqueue(request: pdu, now: 0)
        try await handle(events)
        while true {
            if let result = results.removeValue(forKey: id) { return try result.get() }
            guard try await readOne() else { throw ATTBearerError.bearerClosed }
        }
    }

    func send(command: ATTPDU) async throws {
        try await handle(try bearer.send(command: command))
    }

    func currentMTU() async -> Int { bearer.mtu }

    func control(_ line: String) async {
        // A driver that has gone shows up as a missing line (`waitFor` returns nil).
        try? await process.writeToStdin(line + "\n")
    }

    /// Reads lines until one starts with `prefix`; returns it (nil at end of output).
    func waitFor(_ prefix: String) async -> String? {
        while true {
            if let i = lines.firstIndex(where: { $0.hasPrefix(prefix) }) { return lines.remove(at: i) }
            guard (try? await readOne()) == true else { return nil }
        }
    }

    /// Reads until one notification or indication has been handed to the client.
    func pumpUntilDelivered() async {
        let target = deliveries + 1
        while deliveries < target { guard (try? await readOne()) == true else { return } }
    }

    func finish() async {
        await control("QUIT")
        await process.closeStdin()
        _ = await process.waitForExit(timeout: Self.lineTimeout)
        await process.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private func readOne() async throws -> Bool {
        guard let line = try await process.nextLine(timeout: Self.lineTimeout) else { return false }
        let parts = line.split(separator: " ").map(String.init)
        if parts.count == 2, parts[0] == "ATT" {
            try await handle(bearer.receive(gattHex(parts[1]), now: 0))
        } else {
            lines.append(line)
        }
        return true
    }

    private func handle(_ events: [ATTBearerEvent]) async throws {
        for event in events {
            switch event {
            case let .send(bytes): try await process.writeToStdin("ATT \(bytes.hexString)\n")
            case let .response(id, pdu): results[id] = .success(pdu)
            case let .failed(id, error): results[id] = .failure(error)
            case let .notification(h, v):
                deliveries += 1
                await client?.receiveNotification(handle: h, value: v)
            case let .indication(h, v):
                deliveries += 1
                await client?.receiveIndication(handle: h, value: v)
            default: break
            }
        }
    }
}
