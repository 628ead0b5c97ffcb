import BluetideBase
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideHost

/// Our GATT server (behind our ATT bearer) driven by Bumble's own GATT client
/// (`bumble.gatt_client.Client`) over a pipe: raw ATT PDUs as hex lines, no HCI. Skipped when
/// `python3` with `bumble` is not installed (`.ci/run` installs it).
/// Serialized: each test starts Python; one at a time keeps a 2-core machine responsive.
@Suite(.serialized) struct GATTBumbleInteropTests {
    /// Runs unless `BLUETIDE_SKIP_BUMBLE=1`; a missing Bumble then fails with the install
    /// command (see ``BumbleEnvironment``) instead of silently skipping.
    static var bumbleAvailable: Bool { !BumbleEnvironment.isSkipRequested }

    /// The Bumble side: a fake connection whose L2CAP sends print `ATT <hex>`; lines read from
    /// stdin feed `Client.on_gatt_pdu`. `PUSH` lines ask our server to notify/indicate,
    /// `RESULT` lines report what Bumble saw.
    static let driver = #"""
    import asyncio, sys, threading
    from bumble import att, gatt_client
    from bumble.core import UUID

    def emit(*parts):
        print(*parts, flush=True)

    class PipeBearer:
        handle = 0x0040
        EVENT_DISCONNECTION = 'disconnection'
        def __init__(self):
            self.att_mtu = att.ATT_DEFAULT_MTU
        def on(self, *args, **kwargs):
            pass
        def send_l2cap_pdu(self, cid, pdu):
            emit('ATT', bytes(pdu).hex())
        def on_att_mtu_update(self, mtu):
            self.att_mtu = mtu

    async def scenario(client):
        services = await client.discover_services()
        emit('RESULT', 'services', ','.join(s.uuid.to_hex_str() for s in services))
        for s in services:
            await s.discover_characteristics()
        chars = {c.uuid.to_hex_str(): c for s in services for c in s.characteristics}
        emit('RESULT', 'characteristics', ','.join(f'{c.uuid.to_hex_str()}@{c.handle}' for s in services for c in s.characteristics))
        emit('RESULT', 'name', (await chars['2A00'].read_value()).hex())
        long_char = chars['6E400002B5A3F393E0A9E50E24DCCA9E']
        emit('RESULT', 'long_read_23', (await long_char.read_value()).hex())
        await long_char.write_value(bytes((255 - i) % 256 for i in range(300)), with_response=True)
        emit('RESULT', 'long_write_readback', (await long_char.read_value()).hex())
        write_only = chars['6E400003B5A3F393E0A9E50E24DCCA9E']
        try:
            await write_only.read_value()
            emit('RESULT', 'read_write_only', 'ok')
        except att.ATT_Error as e:
            emit('RESULT', 'read_write_only', f'{e.error_code:02x}')
        try:
            await chars['2A39'].write_value(bytes([2]), with_response=True)
            emit('RESULT', 'validation', 'ok')
        except att.ATT_Error as e:
            emit('RESULT', 'validation', f'{e.error_code:02x}')
        await chars['2A39'].write_value(bytes([1]), with_response=True)
        await write_only.write_value(bytes([0xAB]))
        got = asyncio.Queue()
        await chars['2A37'].subscribe(lambda v: got.put_nowait(bytes(v)))
        emit('PUSH', 'notify', '12', '0048')
        emit('RESULT', 'notification', (await asyncio.wait_for(got.get(), 60)).hex())
        punch = chars['6E400004B5A3F393E0A9E50E24DCCA9E']
        await punch.subscribe(lambda v: got.put_nowait(bytes(v)), prefer_notify=False)
        emit('PUSH', 'indicate', '25', '01')
        emit('PUSH', 'indicate', '25', '02')
        first = await asyncio.wait_for(got.get(), 60)
        second = await asyncio.wait_for(got.get(), 60)
        emit('RESULT', 'indications', first.hex() + ',' + second.hex())
        emit('RESULT', 'descriptors', ','.join(d.type.to_hex_str() for d in punch.descriptors))
        included = await client.discover_included_services(services[3])
        emit('RESULT', 'included', ','.join(f'{s.uuid.to_hex_str()}@{s.handle}-{s.end_group_handle}' for s in included))
        by_uuid = await client.discover_service(UUID.from_16_bits(0x180D))
        emit('RESULT', 'by_uuid', ','.join(f'{s.handle}-{s.end_group_handle}' for s in by_uuid))
        emit('RESULT', 'mtu', str(await client.request_mtu(100)))
        emit('RESULT', 'long_read_100', (await long_char.read_value()).hex())
        emit('DONE')

    async def main():
        client = gatt_client.Client(PipeBearer())
        loop = asyncio.get_running_loop()
        def reader():
            for line in sys.stdin:
                parts = line.split()
                if len(parts) == 2 and parts[0] == 'ATT':
                    loop.call_soon_threadsafe(client.on_gatt_pdu, att.ATT_PDU.from_bytes(bytes.fromhex(parts[1])))
        threading.Thread(target=reader, daemon=True).start()
        try:
            await asyncio.wait_for(scenario(client), 120)
        except BaseException as e:
            emit('FAIL', repr(e).replace('\n', ' '))

    asyncio.run(main())
    """#

    /// How long to wait for each line from a driver (its own scenario times out after 120 s: a
    /// Python process that imports Bumble can take a minute to start on a busy machine).
    static let lineTimeout: Duration = .seconds(150)

    @Test(.enabled(if: bumbleAvailable)) func bumbleClientAgainstOurServer() async throws {
        _ = try await BumbleEnvironment.requireAvailable()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluetide-gatt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("driver.py")
        try Self.driver.write(to: script, atomically: true, encoding: .utf8)

        let process = try await BumbleProcess.launchPython(.script(script), name: "gatt-client-driver")
        do {
            try await exchange(with: process)
        } catch {
            await process.stop()
            throw error
        }
        await process.stop()
    }

    /// Serves the driver's ATT requests until it prints `DONE` (or its stdout ends), then checks
    /// what both sides saw.
    private func exchange(with process: BumbleProcess) async throws {
        var server = GATTFixture.server()
        server.connect(0x40)
        var bearer = ATTBearer(localMTU: 517)
        var results: [String: String] = [:]
        var serverEvents: [GATTServerEvent] = []
        var confirmations = 0
        var done = false

        func transmit(_ events: [ATTBearerEvent]) async throws {
            for case let .send(bytes) in events {
                try await process.writeToStdin("ATT \(bytes.hexString)\n")
            }
        }

        while let line = try await process.nextLine(timeout: Self.lineTimeout) {
            let parts = line.split(separator: " ").map(String.init)
            guard let kind = parts.first else { continue }
            switch kind {
            case "ATT":
                let served = bearer.receive(gattHex(parts.count > 1 ? parts[1] : ""), now: 0, server: &server, connection: 0x40)
                serverEvents += served.server
                confirmations += served.bearer.filter { if case .indicationConfirmed = $0 { true } else { false } }.count
                try await transmit(served.bearer)
            case "PUSH" where parts.count == 4:
                let handle = UInt16(parts[2]) ?? 0
                let pushes = parts[1] == "indicate"
                    ? server.indicate(valueHandle: handle, value: gattHex(parts[3]))
                    : server.notify(valueHandle: handle, value: gattHex(parts[3]))
                for p in pushes { try await transmit(bearer.send(p, now: 0)) }
            case "RESULT":
                results[parts.count > 1 ? parts[1] : ""] = parts.count > 2 ? parts[2] : ""
            case "DONE":
                done = true
            case "FAIL":
                Issue.record("Bumble driver failed: \(line)")
            default:
                break
            }
            if done { break }
        }
        await process.closeStdin()
        _ = await process.waitForExit(timeout: Self.lineTimeout)
        let stderr = await process.stderrTail(maxBytes: 2000)
        #expect(done, "driver did not finish; stderr: \(stderr)")

        #expect(results["services"] == "1800,1801,180D,6E400001B5A3F393E0A9E50E24DCCA9E,180F")
        #expect(results["characteristics"]?.hasPrefix("2A00@3,2A01@5,2A05@8,2A37@12,2A38@15,2A39@17,6E400002B5A3F393E0A9E50E24DCCA9E@21") == true)
        #expect(results["name"] == Array("Bluetide".utf8).hexString)
        #expect(results["long_read_23"] == GATTFixture.longValue.hexString)
        #expect(results["long_write_readback"] == (0..<300).map { UInt8(255 - $0 % 256) }.hexString)
        #expect(results["read_write_only"] == "02")
        #expect(results["validation"] == "80")
        #expect(results["notification"] == "0048")
        #expect(results["indications"] == "01,02")
        #expect(confirmations == 2)
        #expect(results["descriptors"] == "2902,2901")
        #expect(results["included"] == "180F@36-39")
        #expect(results["by_uuid"] == "10-17")
        #expect(results["mtu"] == "100")
        #expect(bearer.mtu == 100)
        #expect(results["long_read_100"] == (0..<300).map { UInt8(255 - $0 % 256) }.hexString)
        #expect(serverEvents.contains(.valueWritten(connection: 0x40, handle: 23, uuid: GATTFixture.uuid(3), value: [0xAB])))
        #expect(serverEvents.contains(.subscriptionChanged(connection: 0x40, valueHandle: 25, configuration: .indication)))
    }

    /// Bumble's own PDU classes encode the same fields to the same bytes as ours.
    @Test(.enabled(if: bumbleAvailable)) func pduEncodingsMatchBumble() async throws {
        _ = try await BumbleEnvironment.requireAvailable()
        let script = #"""
        from bumble import att
        from bumble.core import UUID
        nus = UUID('6E400001-B5A3-F393-E0A9-E50E24DCCA9E')
        pdus = [
         att.ATT_Error_Response(request_opcode_in_error=0x0A, attribute_handle_in_error=3, error_code=2),
         att.ATT_Exchange_MTU_Request(client_rx_mtu=247),
         att.ATT_Exchange_MTU_Response(server_rx_mtu=517),
         att.ATT_Find_Information_Request(starting_handle=1, ending_handle=0xFFFF),
         att.ATT_Find_By_Type_Value_Request(starting_handle=1, ending_handle=0xFFFF, attribute_type=UUID.from_16_bits(0x2800), attribute_value=bytes([0x0D,0x18])),
         att.ATT_Read_By_Type_Request(starting_handle=1, ending_handle=0xFFFF, attribute_type=UUID.from_16_bits(0x2803)),
         att.ATT_Read_By_Type_Request(starting_handle=10, ending_handle=20, attribute_type=nus),
         att.ATT_Read_Request(attribute_handle=3),
         att.ATT_Read_Blob_Request(attribute_handle=3, value_offset=22),
         att.ATT_Read_Multiple_Request(set_of_handles=[3,5]),
         att.ATT_Read_By_Group_Type_Request(starting_handle=1, ending_handle=0xFFFF, attribute_group_type=UUID.from_16_bits(0x2800)),
         att.ATT_Write_Request(attribute_handle=3, attribute_value=bytes([1,0])),
         att.ATT_Write_Response(),
         att.ATT_Write_Command(attribute_handle=3, attribute_value=bytes([0xAB])),
         att.ATT_Prepare_Write_Request(attribute_handle=3, value_offset=18, part_attribute_value=bytes([1,2,3])),
         att.ATT_Prepare_Write_Response(attribute_handle=3, value_offset=18, part_attribute_value=bytes([1,2,3])),
         att.ATT_Execute_Write_Request(flags=1),
         att.ATT_Execute_Write_Response(),
         att.ATT_Handle_Value_Notification(attribute_handle=3, attribute_value=bytes([0x48,0x65])),
         att.ATT_Handle_Value_Indication(attribute_handle=3, attribute_value=bytes([1])),
         att.ATT_Handle_Value_Confirmation(),
         att.ATT_Read_Multiple_Variable_Request(set_of_handles=[3,5]),
        ]
        for p in pdus:
            print(bytes(p).hex())
        """#
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluetide-att-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("vectors.py")
        try script.write(to: path, atomically: true, encoding: .utf8)
        let process = try await BumbleProcess.launchPython(.script(path), name: "att-vectors")
        let status = await process.waitForCompletion(timeout: Self.lineTimeout)
        await process.stop()
        if status == nil { Issue.record(await process.failure("did not finish within \(Self.lineTimeout)")) }
        let lines = await process.output(.stdout).filter { !$0.isEmpty }
        let nus = GATTFixture.service
        let ours: [ATTPDU] = [
            .errorResponse(requestOpcode: .readRequest, handle: 3, error: .readNotPermitted),
            .exchangeMTURequest(clientMTU: 247),
            .exchangeMTUResponse(serverMTU: 517),
            .findInformationRequest(start: 1, end: 0xFFFF),
            .findByTypeValueRequest(start: 1, end: 0xFFFF, type: 0x2800, value: [0x0D, 0x18]),
            .readByTypeRequest(start: 1, end: 0xFFFF, type: .characteristicDeclaration),
            .readByTypeRequest(start: 10, end: 20, type: nus),
            .readRequest(handle: 3),
            .readBlobRequest(handle: 3, offset: 22),
            .readMultipleRequest(handles: [3, 5]),
            .readByGroupTypeRequest(start: 1, end: 0xFFFF, type: .primaryService),
            .writeRequest(handle: 3, value: [1, 0]),
            .writeResponse,
            .writeCommand(handle: 3, value: [0xAB]),
            .prepareWriteRequest(handle: 3, offset: 18, value: [1, 2, 3]),
            .prepareWriteResponse(handle: 3, offset: 18, value: [1, 2, 3]),
            .executeWriteRequest(flags: 1),
            .executeWriteResponse,
            .handleValueNotification(handle: 3, value: [0x48, 0x65]),
            .handleValueIndication(handle: 3, value: [1]),
            .handleValueConfirmation,
            .readMultipleVariableRequest(handles: [3, 5]),
        ]
        #expect(lines == ours.map(\.bytes.hexString))
    }
}
