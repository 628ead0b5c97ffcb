import Bluetide
import BluetideCapture
import BluetideCore
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
        try await withRunTimeLimit(90, onTimeout: { CloneTestTimeout(what: "treadmill clone") }) {
            let device = try #require(try Self.analysis().document.devices.first)
            let world = VirtualWorld()
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
}
