import BluetideBase
import BluetideHCI
import BluetideHost
import BluetideRecording
import BluetideTransport
import Testing
@testable import BluetideCapture

@Suite struct CaptureReaderTests {
    static func analyze(_ bytes: [UInt8]) throws -> CaptureAnalysis {
        CaptureAnalysis.analyze(try CaptureFile.read(bytes: bytes), captureName: "vector.btsnoop")
    }

    /// What both datalinks must rebuild from the hand-written strap session.
    static func checkStrap(_ analysis: CaptureAnalysis) throws {
        let document = analysis.document
        #expect(document.connections.count == 1)
        let link = try #require(document.connections.first)
        #expect(link.localRole == "central")
        #expect(link.peer == "C6:C5:C4:C3:C2:C1")
        #expect(link.peerAddressType == "random")
        #expect(link.end == 4.0)
        #expect(document.devices.count == 1)
        let device = try #require(document.devices.first)
        #expect(device.address == "C6:C5:C4:C3:C2:C1")
        #expect(device.role == "peripheral")
        #expect(device.name == "Strap")
        #expect(device.mtu == 185)
        #expect(device.advertising?.serviceUUIDs == [.heartRate])
        #expect(device.services.map(\.uuid) == [.heartRate])
        #expect(device.services.first?.inferred == false)
        let characteristics = device.characteristics
        #expect(characteristics.map(\.uuid) == [.heartRateMeasurement, .bodySensorLocation, .heartRateControlPoint])
        #expect(characteristics.map(\.valueHandle) == [0x12, 0x15, 0x17])
        #expect(characteristics[0].properties == ["notify"])
        #expect(characteristics[0].descriptors.map(\.uuid) == [.clientCharacteristicConfiguration])
        #expect(characteristics[0].descriptors.first?.value == "0100")
        #expect(characteristics[0].counts.notifications == 3)
        #expect(characteristics[1].value == "01")
        #expect(characteristics[1].counts.reads == 1)
        #expect(characteristics[2].properties == ["write", "indicate"])
        #expect(device.notifications.map(\.value) == ["0048", "0049", "004a"])
        #expect(device.notifications.map(\.t) == [1.0, 2.0, 3.0])
        #expect(device.playbackOrigin == 0.014)
        #expect(device.exchanges.count == 1)
        #expect(device.exchanges.first?.value == "01")
        #expect(device.exchanges.first?.replies.map(\.value) == ["800101"])
        #expect(device.exchanges.first?.replies.first?.indication == true)
        let records = try #require(analysis.valueRecords[1])
        #expect(records.map(\.operation) == [.read, .notify, .notify, .notify, .write, .indicate])
        #expect(records.first?.characteristic == .bodySensorLocation)
        #expect(records.first?.service == .heartRate)
        #expect(abs(records[1].timestamp - 0.999) < 1e-9)
    }

    @Test func anH4CaptureRebuildsTheStrap() throws {
        try Self.checkStrap(Self.analyze(CaptureVectors.h4File(CaptureVectors.session)))
    }

    @Test func anUnencapsulatedHCICaptureGivesTheSameModel() throws {
        let h4 = try Self.analyze(CaptureVectors.h4File(CaptureVectors.session))
        let hci = try Self.analyze(CaptureVectors.hciFile(CaptureVectors.session))
        let file = try CaptureFile.read(bytes: CaptureVectors.hciFile(CaptureVectors.session))
        #expect(file.format == .btsnoop(datalink: 1001))
        try Self.checkStrap(hci)
        #expect(h4.document.devices == hci.document.devices)
    }

    @Test func fragmentedACLIsReassembledEvenInsideTheL2CAPHeader() throws {
        var entries = CaptureVectors.session
        // Replace the first notification by three fragments: 3 bytes (inside the header), 2, the rest.
        let index = try #require(entries.firstIndex { if case let .acl(_, _, _, data) = $0.packet { data.count == 9 && data[4] == 0x1B } else { false } })
        guard case let .acl(handle, _, _, data) = entries[index].packet else { Issue.record("not ACL"); return }
        let micros = entries[index].micros
        entries.replaceSubrange(index...index, with: [
            .init(direction: .received, packet: .acl(handle: handle, boundary: .firstFlushable, broadcast: 0, data: Array(data[0..<3])), micros: micros),
            .init(direction: .received, packet: .acl(handle: handle, boundary: .continuing, broadcast: 0, data: Array(data[3..<5])), micros: micros),
            .init(direction: .received, packet: .acl(handle: handle, boundary: .continuing, broadcast: 0, data: Array(data[5...])), micros: micros),
        ])
        let analysis = try Self.analyze(CaptureVectors.h4File(entries))
        try Self.checkStrap(analysis)
        #expect(analysis.document.warnings.isEmpty, "\(analysis.document.warnings)")
    }

    @Test func aTruncatedCaptureKeepsWhatCameBeforeTheCutWithAWarning() throws {
        let whole = CaptureVectors.h4File(CaptureVectors.session)
        let cut = Array(whole.dropLast(5))  // into the last record (the Disconnection Complete)
        let file = try CaptureFile.read(bytes: cut)
        #expect(file.packets.count == CaptureVectors.session.count - 1)
        #expect(file.warnings.count == 1)
        #expect(file.warnings.first?.message.contains("cut off") == true, "\(file.warnings)")
        let analysis = CaptureAnalysis.analyze(file, captureName: "cut")
        #expect(analysis.document.devices.first?.characteristics.count == 3)
        #expect(analysis.document.connections.first?.end == nil)
        #expect(analysis.document.warnings.contains { $0.contains("cut off") })
    }

    @Test func wrongDatalinksAndGarbageAreClearErrors() throws {
        var header = BTSnoop.fileHeader
        header[15] = 0xEB  // 1003
        #expect(throws: CaptureError.self) { try CaptureFile.read(bytes: header) }
        do { _ = try CaptureFile.read(bytes: header) } catch {
            #expect(error.description.contains("datalink 1003"), "\(error)")
            #expect(error.description.contains("expected 1002"), "\(error)")
        }
        do { _ = try CaptureFile.read(bytes: Array("hello, world".utf8)) } catch {
            #expect(error.description.contains("not a btsnoop or pcap capture"), "\(error)")
        }
        do { _ = try CaptureFile.read(bytes: []) } catch {
            #expect(error.description.contains("empty"), "\(error)")
        }
        do { _ = try CaptureFile.read(bytes: [0x0A, 0x0D, 0x0D, 0x0A, 0, 0, 0, 0]) } catch {
            #expect(error.description.contains("pcapng"), "\(error)")
        }
    }

    @Test func aRecordThatIsNotOnePacketIsSkippedAndTheRestRead() throws {
        var bytes = BTSnoop.fileHeader
        // A record claiming an event of 10 parameter bytes with only 2 present.
        bytes += CaptureVectors.be32(5) + CaptureVectors.be32(5) + CaptureVectors.be32(3) + CaptureVectors.be32(0) + CaptureVectors.be64(0)
        bytes += [0x04, 0x0E, 0x0A, 0x01, 0x02]
        bytes += CaptureVectors.h4File(CaptureVectors.session).dropFirst(16)
        let file = try CaptureFile.read(bytes: bytes)
        #expect(file.warnings.count == 1)
        #expect(file.warnings.first?.record == 0)
        #expect(file.packets.count == CaptureVectors.session.count)
        try Self.checkStrap(CaptureAnalysis.analyze(file, captureName: "x"))
    }

    @Test func aFilteredSnoopLogsCutPayloadsAreReportedUnreadable() throws {
        // Android's filtered log keeps only the start of ACL packets: included < original length.
        var bytes = CaptureVectors.h4File(Array(CaptureVectors.session[0...1]))
        let notification = CaptureVectors.att(.handleValueNotification(handle: 0x12, value: [0x00, 0x48]), .received, at: 5).packet.h4Bytes
        bytes += CaptureVectors.be32(UInt32(notification.count)) + CaptureVectors.be32(5) + CaptureVectors.be32(1) + CaptureVectors.be32(0)
        bytes += CaptureVectors.be64(UInt64(BTSnoop.timestamp(unixMicroseconds: CaptureVectors.start + 5000))) + Array(notification.prefix(5))
        let file = try CaptureFile.read(bytes: bytes)
        #expect(file.cutACLRecords == 1)
        let analysis = CaptureAnalysis.analyze(file, captureName: "filtered")
        #expect(analysis.document.warnings.first?.contains("cut short") == true, "\(analysis.document.warnings)")
        #expect(analysis.document.devices.isEmpty)
    }

    @Test func twoConnectionsAndAPhoneServingGATTGiveADeviceEach() throws {
        // Connection 1: the strap session (we are central). Connection 2 (handle 0x41): we
        // advertise and are connected to as peripheral; the central reads our value at 0x0003.
        var entries = CaptureVectors.session
        let later = CaptureVectors.start + 5_000_000
        var advertising = [UInt8(11), 0x0A, 0x09] + Array("My Phone!".utf8)
        advertising += [UInt8](repeating: 0, count: 32 - advertising.count)
        entries.append(.init(direction: .sent, packet: .command(opcode: HCIOpcode(rawValue: 0x2008), parameters: advertising), micros: later))
        let central = BluetoothAddress(value: 0x1122_3344_5566, type: .public)
        let complete = LEConnectionComplete(handle: 0x41, role: .peripheral, peerAddress: central, interval: 24, latency: 0, supervisionTimeout: 72)
        entries.append(.init(direction: .received, packet: complete.packet, micros: later + 1000))
        func att(_ pdu: ATTPDU, _ direction: SnoopDirection, _ ms: Int64) -> CaptureVectors.Entry {
            let l2cap = L2CAPFrame(channelID: .att, payload: pdu.bytes).bytes
            return .init(direction: direction, packet: .acl(handle: 0x41, boundary: .firstFlushable, broadcast: 0, data: l2cap), micros: later + ms * 1000)
        }
        entries.append(att(.readRequest(handle: 0x03), .received, 2))
        entries.append(att(.readResponse(value: Array("Phone".utf8)), .sent, 3))
        let analysis = try Self.analyze(CaptureVectors.h4File(entries))
        let document = analysis.document
        #expect(document.connections.map(\.localRole) == ["central", "peripheral"])
        #expect(document.connections.map(\.peer) == ["C6:C5:C4:C3:C2:C1", "11:22:33:44:55:66"])
        #expect(document.devices.count == 2)
        let phone = try #require(document.devices.first { $0.side == "local" })
        #expect(phone.role == "peripheral")
        #expect(phone.name == "My Phone!")
        #expect(phone.connections == [2])
        #expect(phone.characteristics.map(\.valueHandle) == [3])
        #expect(phone.characteristics.first?.value == "50686f6e65")
        #expect(document.devices.first?.side == "remote", "the strap, with more content, comes first")
        #expect(analysis.valueRecords[1]?.count == 6)
        #expect(analysis.valueRecords[2]?.count == 1)
    }

    @Test func handlesUsedWithoutDiscoveryAreInferred() throws {
        let session = CaptureVectors.session
        // Drop discovery (MTU exchange to the Find Information response): keep the rest.
        let kept = Array(session[0...1]) + Array(session[12...])
        let analysis = try Self.analyze(CaptureVectors.h4File(kept))
        let device = try #require(analysis.document.devices.first)
        #expect(device.services.count == 1)
        #expect(device.services.first?.inferred == true)
        let characteristics = device.characteristics
        #expect(characteristics.map(\.valueHandle) == [0x12, 0x15, 0x17])
        #expect(characteristics.allSatisfy { $0.inferred })
        #expect(characteristics[0].properties == ["notify"])
        #expect(characteristics[0].descriptors.map(\.handle) == [0x13])
        #expect(characteristics[1].properties == ["read"])
        #expect(characteristics[2].properties == ["write", "indicate"])
        #expect(characteristics[0].uuid == ServerBuilder.placeholder(handle: 0x12))
        #expect(analysis.document.warnings.contains { $0.contains("inferred") })
        // Values of inferred characteristics still go to the value log, under their placeholder UUID.
        #expect(analysis.valueRecords[1]?.count == 6)
    }

    @Test func aMonitorCaptureFromBtmonIsRead() throws {
        // datalink 2001: flags = controller index << 16 | opcode (2 command, 3 event, 4 ACL out, 5 ACL in).
        var bytes = Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x07, 0xD1]
        for e in CaptureVectors.session {
            let body = Array(e.packet.h4Bytes.dropFirst())
            let opcode: UInt32 = switch e.packet {
            case .command: 2
            case .event: 3
            default: e.direction == .sent ? 4 : 5
            }
            bytes += CaptureVectors.be32(UInt32(body.count)) + CaptureVectors.be32(UInt32(body.count))
            bytes += CaptureVectors.be32(1 << 16 | opcode) + CaptureVectors.be32(0)
            bytes += CaptureVectors.be64(UInt64(BTSnoop.timestamp(unixMicroseconds: e.micros))) + body
        }
        // A "system note" record (opcode 12) is skipped silently.
        bytes += CaptureVectors.be32(2) + CaptureVectors.be32(2) + CaptureVectors.be32(12) + CaptureVectors.be32(0) + CaptureVectors.be64(0) + [0x68, 0x69]
        let file = try CaptureFile.read(bytes: bytes)
        #expect(file.packets.allSatisfy { $0.controller == 1 })
        #expect(file.warnings.isEmpty)
        try Self.checkStrap(CaptureAnalysis.analyze(file, captureName: "btmon"))
    }

    @Test func aPcapWithDirectionsIsRead() throws {
        var bytes: [UInt8] = [0xA1, 0xB2, 0xC3, 0xD4, 0, 2, 0, 4] + [UInt8](repeating: 0, count: 8) + CaptureVectors.be32(0xFFFF) + CaptureVectors.be32(201)
        for e in CaptureVectors.session {
            let body = CaptureVectors.be32(e.direction == .received ? 1 : 0) + e.packet.h4Bytes
            bytes += CaptureVectors.be32(UInt32(e.micros / 1_000_000)) + CaptureVectors.be32(UInt32(e.micros % 1_000_000))
            bytes += CaptureVectors.be32(UInt32(body.count)) + CaptureVectors.be32(UInt32(body.count)) + body
        }
        let file = try CaptureFile.read(bytes: bytes)
        #expect(file.format == .pcap(linkType: 201))
        try Self.checkStrap(CaptureAnalysis.analyze(file, captureName: "pcap"))
    }

    @Test func randomBytesAndTruncationsNeverCrash() throws {
        let whole = CaptureVectors.h4File(CaptureVectors.session)
        var generator = SplitMixForTests(seed: 0xC10E)
        // Every truncation of a real capture.
        for length in 0...whole.count {
            if let file = try? CaptureFile.read(bytes: Array(whole.prefix(length))) {
                _ = CaptureAnalysis.analyze(file, captureName: "cut")
            }
        }
        // Mutations after the header (flip bytes), and random tails.
        for round in 0..<400 {
            var bytes = whole
            for _ in 0..<(1 + round % 8) {
                let index = 16 + Int(generator.next() % UInt64(bytes.count - 16))
                bytes[index] = UInt8(truncatingIfNeeded: generator.next())
            }
            if round % 4 == 0 { bytes += (0..<Int(generator.next() % 64)).map { _ in UInt8(truncatingIfNeeded: generator.next()) } }
            if let file = try? CaptureFile.read(bytes: bytes) {
                let analysis = CaptureAnalysis.analyze(file, captureName: "fuzz")
                _ = CloneReport.summary(analysis.document)
                for device in analysis.document.devices { _ = CloneReport.centralScript(analysis.document, device: device) }
            }
        }
        // Pure noise, with and without a valid header.
        for _ in 0..<200 {
            let noise = (0..<Int(generator.next() % 512)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            _ = try? CaptureFile.read(bytes: noise)
            if let file = try? CaptureFile.read(bytes: BTSnoop.fileHeader + noise) {
                _ = CaptureAnalysis.analyze(file, captureName: "noise")
            }
        }
    }
}

/// SplitMix64, local to the tests (BluetideSupport is not a dependency here).
struct SplitMixForTests {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
