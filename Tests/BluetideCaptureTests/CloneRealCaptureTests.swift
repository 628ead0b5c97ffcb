import Bluetide
import BluetideCapture
import BluetideBase
import BluetideEmulation
import BluetideSupport
import Foundation
import Testing

/// A real phone's capture (Fixtures/horizon-7.4at: an Android snoop log of a treadmill's app,
/// MIT-licensed, see its README): cloned, the summary names what was on the wire; served, a
/// client discovers the captured handles and gets the captured answers to the app's commands.
@Suite(.timeLimit(.minutes(2))) struct CloneRealCaptureTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/horizon-7.4at/btsnoop_hci.log").path
    static let fff3 = BluetoothUUID(0xFFF3)
    static let fff4 = BluetoothUUID(0xFFF4)

    static func analysis() throws -> CaptureAnalysis {
        CaptureAnalysis.analyze(try CaptureFile.read(path: fixture), captureName: "btsnoop_hci.log")
    }

    @Test func theSummaryNamesTheTreadmillsServicesAndTraffic() throws {
        let document = try Self.analysis().document
        #expect(document.source.format == "btsnoop (datalink 1002 H4)")
        #expect(document.connections.count == 1)
        #expect(document.connections.first?.localRole == "central")
        let device = try #require(document.devices.first)
        #expect(device.name == "HORIZON 7.4AT 55FD")
        #expect(device.address == "FA:E4:E3:24:20:09")
        #expect(device.services.map(\.uuid) == [.genericAttribute, .genericAccess, BluetoothUUID(0xFFF0), .fitnessMachine, BluetoothUUID(0xFEE7)])
        #expect(device.exchanges.count == 260)
        #expect(device.exchanges.filter { !$0.replies.isEmpty }.count == 257)
        let summary = CloneReport.summary(document)
        for line in [
            "Device: \"HORIZON 7.4AT 55FD\" FA:E4:E3:24:20:09 (remote, peripheral)",
            "service 1826 Fitness Machine [0x001A–0x0050]",
            "0x002F 2AD9 Fitness Machine Control Point [write,indicate]",
            "service FFF0 [0x0009–0x0019]",
            "0x0011 FFF3 [write]: written 260×",
            "address: FA:E4:E3:24:20:09 random static",
        ] {
            #expect(summary.contains(line), "no \(line) in\n\(summary)")
        }
    }

    @Test func theServedCloneAnswersTheAppsCommandsAtTheCapturedHandles() async throws {
        try await inVirtualTime(90, "treadmill clone") { clock in
            let device = try #require(try Self.analysis().document.devices.first)
            let world = VirtualWorld(clock: clock)
            let clone = try await world.serveClone(device, pace: .asFastAsPossible)
            #expect(clone.placements != nil, "\(clone.limitations)")
            #expect(clone.limitations.contains { $0.hasPrefix("0x12 FFF3: the device notified on it") }, "\(clone.limitations)")
            let client = try await world.openHost()
            let address = try BluetoothAddress("FA:E4:E3:24:20:09", type: .random)
            let connection = try await client.central.connect(to: address, timeout: .seconds(30))
            // Discovery: every captured characteristic value at its captured handle, once.
            let discovered = try await connection.services().flatMap(\.characteristics).map(\.characteristic)
            let expected = device.characteristics.filter { $0.declarationHandle != nil }
            #expect(discovered.map(\.valueHandle) == expected.map { UInt16($0.valueHandle) })
            #expect(discovered.map(\.uuid) == expected.map(\.uuid))

            // The app's first three distinct commands answered on FFF4: the captured replies, in order.
            var seen = Set<String>()
            let commands = device.exchanges.filter { seen.insert($0.value).inserted && $0.replies.contains { $0.handle == 0x14 } }.prefix(3)
            #expect(commands.count == 3)
            var values = try await connection.notifications(of: Self.fff4).makeAsyncIterator()
            for exchange in commands {
                try await connection.write(try Hex.parse(exchange.value), to: Self.fff3, withResponse: exchange.withResponse)
                var answers: [String] = []
                for _ in exchange.replies.filter({ $0.handle == 0x14 }) {
                    guard let value = try await values.next() else { break }
                    answers.append(value.hexString)
                }
                #expect(answers == exchange.replies.filter { $0.handle == 0x14 }.map(\.value), "answers to \(exchange.value)")
            }
            await connection.disconnect()
            await world.close()
        }
    }

    @Test func theCentralScriptDrivesTheServedClone() async throws {
        try await inVirtualTime(90, "treadmill central script") { clock in
            let out = CloneRoundTripTests.temporaryPath("treadmill-out")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let (document, _) = try CloneDirectory.write(try Self.analysis(), to: out)
            let script = try String(contentsOfFile: out + "/central.shell", encoding: .utf8)
            // Waits count what the script subscribed to: FFF4's 46 answers, not 0x0012's one.
            #expect(script.contains("write handle:0x0011 0x55aa0100010200000000\nwait 46 "), "\(script.prefix(2000))")
            let link = "treadmill-\(UUID().uuidString)"
            let world = VirtualWorld(linkName: link, clock: clock)
            _ = try await world.serveClone(document.devices[0], pace: .asFastAsPossible)
            // The captured pauses are left out: the clone answers at once.
            let unpaused = script.split(separator: "\n").filter { !$0.hasPrefix("sleep ") }.joined(separator: "\n") + "\n"
            let printed = try await CloneHandleTests.shell(unpaused, address: "FA:E4:E3:24:20:09/R", link: link, clock: clock)
            await world.close()
            let types = printed.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["type"] as? String }
            #expect(types.filter { $0 == "written" }.count == 260)
            #expect(!types.contains("error"))
        }
    }
}

/// Fuzzing below the records: the real capture's records kept whole, bytes of their L2CAP and
/// ATT payloads changed (discovery responses, handles, lengths), so damage reaches the analysis
/// and the placement of the served database rather than stopping at the file reader.
@Suite(.timeLimit(.minutes(2))) struct CloneDeepFuzzTests {
    @Test func damagedATTPayloadsNeverCrashTheAnalysisOrTheServedLayout() async throws {
        let whole = try Array(Data(contentsOf: URL(fileURLWithPath: CloneRealCaptureTests.fixture)))
        func included(_ record: Int, in bytes: [UInt8]) -> Int {
            bytes[(record + 4)..<(record + 8)].reduce(0) { total, byte in total << 8 | Int(byte) }
        }
        // Up to the 300th ACL record: the connection, the app's discovery and its first commands.
        var offsets: [Int] = []
        var offset = 16
        var aclRecords = 0
        while offset + 24 <= whole.count, aclRecords < 300, offset + 24 + included(offset, in: whole) <= whole.count {
            offsets.append(offset)
            if whole[offset + 24] == 0x02 { aclRecords += 1 }
            offset += 24 + included(offset, in: whole)
        }
        let prefix = Array(whole[0..<offset])
        let acl = offsets.filter { record in prefix[record + 24] == 0x02 && included(record, in: prefix) > 9 }
        #expect(acl.count > 100, "\(offsets.count) records, \(acl.count) ACL")
        guard !acl.isEmpty else { return }
        let world = VirtualWorld()
        let host = try await world.openHost()
        var generator = SplitMixForTests(seed: 0x0DD1)
        var served = 0
        for round in 0..<60 {
            var bytes = prefix
            for _ in 0..<(1 + round % 6) {
                let record = acl[Int(generator.next() % UInt64(acl.count))]
                let length = included(record, in: bytes)
                // Past the H4 byte and the ACL header: the L2CAP header and the ATT PDU.
                let index = record + 24 + 5 + Int(generator.next() % UInt64(length - 5))
                bytes[index] = UInt8(truncatingIfNeeded: generator.next())
            }
            let analysis = CaptureAnalysis.analyze(try CaptureFile.read(bytes: bytes), captureName: "deep-fuzz")
            _ = CloneReport.summary(analysis.document)
            for device in analysis.document.devices {
                _ = CloneReport.centralScript(analysis.document, device: device)
                let clone = ClonePeripheral(bluetooth: host, device: device)
                if clone.placements != nil { served += 1 }
            }
        }
        await world.close()
        #expect(served > 0, "some damaged captures still serve at their handles")
    }
}
