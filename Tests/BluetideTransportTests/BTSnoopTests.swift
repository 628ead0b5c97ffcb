import BluetideHCI
import Foundation
import Testing
@testable import BluetideTransport

@Suite struct BTSnoopTests {
    static let reset = HCIPacket.command(opcode: HCIOpcode(rawValue: 0x0C03), parameters: [])
    static let resetComplete = HCIPacket.event(code: 0x0E, parameters: [0x01, 0x03, 0x0C, 0x00])
    static let aclOut = HCIPacket.acl(handle: 1, boundary: .firstNonFlushable, broadcast: 0, data: [0x01, 0x00, 0x04, 0x00, 0x0A])
    static let aclIn = HCIPacket.acl(handle: 1, boundary: .firstFlushable, broadcast: 0, data: [0x01, 0x00, 0x04, 0x00, 0x0B])

    static func temporaryPath() -> String {
        NSTemporaryDirectory() + "bluetide-snoop-\(UInt64.random(in: 0...UInt64.max)).btsnoop"
    }

    @Test func fileHeaderBytes() {
        #expect(BTSnoop.fileHeader == [0x62, 0x74, 0x73, 0x6E, 0x6F, 0x6F, 0x70, 0x00, 0, 0, 0, 1, 0, 0, 0x03, 0xEA])
    }

    @Test func recordBytesForResetAtTheUnixEpoch() {
        let record = BTSnoop.record(Self.reset, direction: .sent, timestamp: BTSnoop.timestamp(unixMicroseconds: 0))
        #expect(record == [
            0, 0, 0, 4,  // original length
            0, 0, 0, 4,  // included length
            0, 0, 0, 2,  // flags: sent, command
            0, 0, 0, 0,  // drops
            0x00, 0xDC, 0xDD, 0xB3, 0x0F, 0x2F, 0x80, 0x00,  // µs from year 0 to 1970
            0x01, 0x03, 0x0C, 0x00,
        ])
        // Bumble's formula: µs since 2000 plus 0x00E03AB44A676000.
        #expect(BTSnoop.timestamp(unixMicroseconds: 946_684_800_000_000) == 0x00E0_3AB4_4A67_6000)
    }

    @Test func flagsForEachKindAndDirection() {
        #expect(BTSnoop.flags(for: Self.reset, direction: .sent) == 2)
        #expect(BTSnoop.flags(for: Self.resetComplete, direction: .received) == 3)
        #expect(BTSnoop.flags(for: Self.aclOut, direction: .sent) == 0)
        #expect(BTSnoop.flags(for: Self.aclIn, direction: .received) == 1)
    }

    @Test func writeThenReadRoundTrip() async throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopFileWriter(path: path)
        let records = [
            BTSnoopRecord(direction: .sent, timestamp: BTSnoop.timestamp(unixMicroseconds: 1_700_000_000_000_000), packet: Self.reset),
            BTSnoopRecord(direction: .received, timestamp: BTSnoop.timestamp(unixMicroseconds: 1_700_000_000_000_250), packet: Self.resetComplete),
            BTSnoopRecord(direction: .sent, timestamp: BTSnoop.timestamp(unixMicroseconds: 1_700_000_000_001_000), packet: Self.aclOut),
            BTSnoopRecord(direction: .received, timestamp: BTSnoop.timestamp(unixMicroseconds: 1_700_000_000_002_000), packet: Self.aclIn),
        ]
        for record in records {
            try await writer.write(record.packet, direction: record.direction, unixMicroseconds: record.unixMicroseconds)
        }
        await writer.close()
        let bytes = try #require(FileManager.default.contents(atPath: path)).map { $0 }
        #expect(Array(bytes.prefix(16)) == BTSnoop.fileHeader)
        // Flags of each record, read from the raw bytes.
        var offset = 16
        var flags: [UInt8] = []
        for record in records {
            flags.append(bytes[offset + 11])
            offset += 24 + record.packet.h4Bytes.count
        }
        #expect(flags == [2, 3, 0, 1])
        #expect(offset == bytes.count)
        #expect(try BTSnoopReader.records(in: bytes) == records)
        #expect(try BTSnoopReader.records(atPath: path) == records)
        #expect(records[1].unixMicroseconds == 1_700_000_000_000_250)
    }

    @Test func badHeadersAreNamed() {
        #expect(throws: BTSnoopError.badHeader("not a btsnoop file: 3 bytes, shorter than the 16-byte header")) {
            try BTSnoopReader(bytes: [0x62, 0x74, 0x73])
        }
        var pcap = [UInt8](repeating: 0, count: 16)
        pcap[0...3] = [0xD4, 0xC3, 0xB2, 0xA1]
        #expect(throws: BTSnoopError.badHeader("not a btsnoop file: starts with D4 C3 B2 A1 00 00 00 00, expected 62 74 73 6E 6F 6F 70 00 (\"btsnoop\\0\")")) {
            try BTSnoopReader(bytes: pcap)
        }
        var version2 = BTSnoop.fileHeader
        version2[11] = 2
        #expect(throws: BTSnoopError.unsupported("btsnoop version 2 is not supported (expected 1)")) {
            try BTSnoopReader(bytes: version2)
        }
        var datalink = BTSnoop.fileHeader
        datalink[15] = 0xE9
        #expect((try? BTSnoopReader(bytes: datalink))?.datalink == 1001)
        datalink[15] = 0xEB
        #expect(throws: BTSnoopError.unsupported("btsnoop datalink 1003 is not supported (expected 1002 H4 or 1001 HCI)")) {
            try BTSnoopReader(bytes: datalink)
        }
    }

    @Test func truncatedRecordsAreReportedAtEveryCut() throws {
        let first = BTSnoop.record(Self.reset, direction: .sent, timestamp: 1)
        let second = BTSnoop.record(Self.resetComplete, direction: .received, timestamp: 2)
        let file = BTSnoop.fileHeader + first + second
        for cut in (16 + first.count + 1)..<file.count {
            var reader = try BTSnoopReader(bytes: Array(file[..<cut]))
            #expect(try reader.next()?.packet == Self.reset)
            let present = cut - 16 - first.count
            let needed = present < 24 ? 24 : second.count
            #expect(throws: BTSnoopError.truncatedRecord(index: 1, offset: 16 + first.count, needed: needed, present: present)) {
                _ = try reader.next()
            }
        }
        let message = BTSnoopError.truncatedRecord(index: 1, offset: 44, needed: 30, present: 10).description
        #expect(message.hasPrefix("btsnoop record 1 at byte 44 is truncated: needs 30 bytes, 10 present"))
    }

    @Test func recordThatIsNotOnePacketIsRejected() throws {
        var record = BTSnoop.record(Self.reset, direction: .sent, timestamp: 1)
        record[27] = 0x05  // parameter length 5, but no parameters follow
        #expect(throws: BTSnoopError.badPacket(index: 0, offset: 16, reason: "4 bytes are shorter than the packet's header says")) {
            try BTSnoopReader.records(in: BTSnoop.fileHeader + record)
        }
        var garbage = BTSnoop.record(Self.reset, direction: .sent, timestamp: 1)
        garbage[24] = 0x09
        #expect(throws: BTSnoopError.self) { try BTSnoopReader.records(in: BTSnoop.fileHeader + garbage) }
    }

    @Test func unencapsulatedDatalinkTakesTheTypeFromTheFlags() throws {
        var header = BTSnoop.fileHeader
        header[15] = 0xE9
        var record = BTSnoop.record(Self.resetComplete, direction: .received, timestamp: 5)
        record.remove(at: 24)  // no type byte on datalink 1001
        record[3] = 6  // 0E 04 01 03 0C 00
        record[7] = 6
        let records = try BTSnoopReader.records(in: header + record)
        #expect(records == [BTSnoopRecord(direction: .received, timestamp: 5, packet: Self.resetComplete)])
    }

    @Test func randomBytesNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        let valid = BTSnoop.fileHeader + BTSnoop.record(Self.aclIn, direction: .received, timestamp: 9)
        for _ in 0..<3000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            _ = try? BTSnoopReader.records(in: bytes)
        }
    }

    @Test func snoopingTransportRecordsBothDirections() async throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (host, controller) = PipeTransport.makePair()
        let snooped = SnoopingTransport(wrapping: host, writer: try BTSnoopFileWriter(path: path))
        try await snooped.send(Self.reset)
        var atController = controller.packets.makeAsyncIterator()
        #expect(try await atController.next() == Self.reset)
        try await controller.send(Self.resetComplete)
        var atHost = snooped.packets.makeAsyncIterator()
        #expect(try await atHost.next() == Self.resetComplete)
        try await snooped.send(Self.aclOut)
        await snooped.close()
        let records = try BTSnoopReader.records(atPath: path)
        #expect(records.map(\.packet) == [Self.reset, Self.resetComplete, Self.aclOut])
        #expect(records.map(\.direction) == [.sent, .received, .sent])
        #expect(records[0].timestamp > BTSnoop.timestamp(unixMicroseconds: 1_600_000_000_000_000))
    }

    @Test func openWithSnoopRecordsATCPSession() async throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let controller = try await TCPServerTransport.listen(host: "127.0.0.1", port: 0)
        let host = try await Transport.open("tcp-client:127.0.0.1:\(controller.localPort)+snoop:\(path)")
        #expect(host is SnoopingTransport)
        try await controller.waitForClient()
        try await host.send(Self.reset)
        var atController = controller.packets.makeAsyncIterator()
        #expect(try await atController.next() == Self.reset)
        try await controller.send(Self.resetComplete)
        try await controller.send(Self.aclIn)
        var atHost = host.packets.makeAsyncIterator()
        #expect(try await atHost.next() == Self.resetComplete)
        #expect(try await atHost.next() == Self.aclIn)
        await host.close()
        await controller.close()
        let records = try BTSnoopReader.records(atPath: path)
        #expect(records.map(\.packet) == [Self.reset, Self.resetComplete, Self.aclIn])
        #expect(records.map { BTSnoop.flags(for: $0.packet, direction: $0.direction) } == [2, 3, 1])
        #expect(records.map(\.timestamp) == records.map(\.timestamp).sorted())
    }

    @Test func unwritableSnoopPathFailsBeforeOpening() async {
        do {
            _ = try await Transport.open("virtual+snoop:/nonexistent-dir/x.btsnoop")
            Issue.record("opened")
        } catch let error as TransportError {
            #expect(error.description.hasPrefix("snoop file /nonexistent-dir/x.btsnoop: cannot create it"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
