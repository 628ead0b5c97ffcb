import BluetideBase
import BluetideHCI
import BluetideHost
import BluetideTransport

/// Byte vectors for the capture reader: a heart-rate strap's session written by hand, packet by packet.
enum CaptureVectors {
    static let peer = BluetoothAddress(value: 0xC6C5_C4C3_C2C1, type: .random)
    static let handle: UInt16 = 0x0040
    static let start: Int64 = 1_780_000_000_000_000  // Unix µs

    /// One packet and its direction.
    struct Entry {
        let direction: SnoopDirection
        let packet: HCIPacket
        let micros: Int64
    }

    static func att(_ pdu: ATTPDU, _ direction: SnoopDirection, at ms: Int64) -> Entry {
        let l2cap = L2CAPFrame(channelID: .att, payload: pdu.bytes).bytes
        return Entry(direction: direction, packet: .acl(handle: handle, boundary: .firstFlushable, broadcast: 0, data: l2cap), micros: start + ms * 1000)
    }

    /// A central (us) connects to a strap, discovers it, reads the body sensor location,
    /// subscribes, gets three measurements, writes the control point and gets an indication back.
    static var session: [Entry] {
        var entries: [Entry] = []
        let report = LEAdvertisingReport(reports: [.init(
            eventType: .advInd, address: peer,
            data: [0x02, 0x01, 0x06, 0x03, 0x03, 0x0D, 0x18, 0x06, 0x09] + Array("Strap".utf8), rssi: -50)])
        entries.append(Entry(direction: .received, packet: report.packet, micros: start))
        let complete = LEConnectionComplete(handle: handle, role: .central, peerAddress: peer, interval: 24, latency: 0, supervisionTimeout: 72)
        entries.append(Entry(direction: .received, packet: complete.packet, micros: start + 1000))
        entries.append(att(.exchangeMTURequest(clientMTU: 247), .sent, at: 2))
        entries.append(att(.exchangeMTUResponse(serverMTU: 185), .received, at: 3))
        entries.append(att(.readByGroupTypeRequest(start: 1, end: 0xFFFF, type: .primaryService), .sent, at: 4))
        entries.append(att(.readByGroupTypeResponse([ATTGroupValue(handle: 0x10, endGroupHandle: 0x17, value: [0x0D, 0x18])]), .received, at: 5))
        entries.append(att(.readByGroupTypeRequest(start: 0x18, end: 0xFFFF, type: .primaryService), .sent, at: 6))
        entries.append(att(.errorResponse(requestOpcode: .readByGroupTypeRequest, handle: 0x18, error: .attributeNotFound), .received, at: 7))
        entries.append(att(.readByTypeRequest(start: 0x10, end: 0x17, type: .characteristicDeclaration), .sent, at: 8))
        entries.append(att(.readByTypeResponse([
            ATTHandleValue(handle: 0x11, value: [0x10, 0x12, 0x00, 0x37, 0x2A]),
            ATTHandleValue(handle: 0x14, value: [0x02, 0x15, 0x00, 0x38, 0x2A]),
            ATTHandleValue(handle: 0x16, value: [0x28, 0x17, 0x00, 0x39, 0x2A]),
        ]), .received, at: 9))
        entries.append(att(.findInformationRequest(start: 0x13, end: 0x13), .sent, at: 10))
        entries.append(att(.findInformationResponse([ATTHandleUUID(handle: 0x13, uuid: .clientCharacteristicConfiguration)]), .received, at: 11))
        entries.append(att(.readRequest(handle: 0x15), .sent, at: 12))
        entries.append(att(.readResponse(value: [0x01]), .received, at: 13))
        entries.append(att(.writeRequest(handle: 0x13, value: [0x01, 0x00]), .sent, at: 14))
        entries.append(att(.writeResponse, .received, at: 15))
        for (index, bpm) in [72, 73, 74].enumerated() {
            entries.append(att(.handleValueNotification(handle: 0x12, value: [0x00, UInt8(bpm)]), .received, at: 1000 + Int64(index) * 1000))
        }
        // Control point (0x17, no discovered CCCD) answered by an indication on it.
        entries.append(att(.writeRequest(handle: 0x17, value: [0x01]), .sent, at: 3500))
        entries.append(att(.writeResponse, .received, at: 3501))
        entries.append(att(.handleValueIndication(handle: 0x17, value: [0x80, 0x01, 0x01]), .received, at: 3520))
        entries.append(att(.handleValueConfirmation, .sent, at: 3521))
        let disconnect = HCIDisconnectionComplete(handle: handle, reason: HCIStatus(0x13))
        entries.append(Entry(direction: .received, packet: disconnect.packet, micros: start + 4_000_000))
        return entries
    }

    /// An H4 (1002) btsnoop file of `entries`.
    static func h4File(_ entries: [Entry]) -> [UInt8] {
        var bytes = BTSnoop.fileHeader
        for e in entries {
            bytes += BTSnoop.record(e.packet, direction: e.direction, timestamp: BTSnoop.timestamp(unixMicroseconds: e.micros))
        }
        return bytes
    }

    /// An un-encapsulated HCI (1001) btsnoop file of `entries`: no type byte, the flags say it.
    static func hciFile(_ entries: [Entry]) -> [UInt8] {
        var bytes = Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xE9]
        for e in entries {
            let body = Array(e.packet.h4Bytes.dropFirst())
            var flags: UInt32 = e.direction == .received ? 1 : 0
            if case .acl = e.packet {} else { flags |= 2 }
            bytes += be32(UInt32(body.count)) + be32(UInt32(body.count)) + be32(flags) + be32(0)
            bytes += be64(UInt64(BTSnoop.timestamp(unixMicroseconds: e.micros)))
            bytes += body
        }
        return bytes
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func be64(_ v: UInt64) -> [UInt8] { be32(UInt32(v >> 32)) + be32(UInt32(v & 0xFFFF_FFFF)) }
}
