import Bluetide
import BluetideCapture
import BluetideBase
import BluetideEmulation
import BluetideDeviceModels
import BluetideRing
import BluetideSupport
import Foundation
import Testing

struct CloneTestTimeout: Error, CustomStringConvertible {
    let what: String
    var description: String { "\(what) did not finish in time" }
}

/// Runs `body` in virtual time on a fresh manual clock (the worlds it opens run on the clock it
/// is given), under a wall-clock hang guard of `seconds`: the emulated devices' ticks, the
/// clones' pacing and every time limit pass the same way however busy the machine is.
func inVirtualTime<T: Sendable>(_ seconds: Double, _ what: String, _ body: @escaping @Sendable (BluetideClock) async throws -> T) async throws -> T {
    let manual = ManualClock()
    return try await withRunTimeLimit(seconds, onTimeout: { CloneTestTimeout(what: what) }) {
        try await manual.advancing { try await body(BluetideClock(manual)) }
    }
}

/// Snoop a session against an emulated device, clone the capture, serve the clone, run the same
/// client against it: the discovery, the values and the command→reply answers must be the same.
@Suite(.timeLimit(.minutes(3))) struct CloneRoundTripTests {
    /// The reply window these analyses use, seconds. The sessions here write only after the
    /// previous answer came, so every notification of a reply channel between two writes answers
    /// the first: the window can be as long as a starved machine may take to answer (the default
    /// 2 s is for captures of unknown clients; a full run under load saw an answer come later).
    static let patientReplyWindow = 60.0

    static func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("clone-\(name)-\(UUID().uuidString)").path
    }

    static func find(_ name: String, on bluetooth: Bluetooth) async throws -> Advertisement {
        for await advertisement in try await bluetooth.central.scan(filter: ScanFilter(name: .exact(name)), timeout: .seconds(20)) {
            return advertisement
        }
        throw BluetideError.timedOut(operation: "scan for \(name)", seconds: 20)
    }

    /// What a client sees of a database: service, characteristic and descriptor UUIDs with
    /// handles and properties, in order.
    static func outline(_ services: [GATTRemoteService]) -> [String] {
        services.flatMap { service in
            ["service \(service.service.uuid) \(service.service.startHandle)-\(service.service.endHandle)"]
                + service.characteristics.flatMap { c in
                    ["  \(c.characteristic.uuid) value \(c.characteristic.valueHandle) properties \(c.characteristic.properties.rawValue)"]
                        + c.descriptors.map { "    \($0.uuid) \($0.handle)" }
                }
        }
    }

    /// A heart-rate strap session as the client saw it.
    struct StrapSession: Equatable {
        var outline: [String]
        var location: [UInt8]
        var measurements: [[UInt8]]
    }

    static func strapSession(_ bluetooth: Bluetooth, name: String) async throws -> StrapSession {
        let found = try await find(name, on: bluetooth)
        let connection = try await bluetooth.central.connect(to: found)
        let outline = Self.outline(try await connection.services())
        let location = try await connection.read(.bodySensorLocation)
        var values = try await connection.notifications(of: .heartRateMeasurement).makeAsyncIterator()
        var measurements: [[UInt8]] = []
        for _ in 0..<3 { if let value = try await values.next() { measurements.append(value) } }
        await connection.disconnect()
        return StrapSession(outline: outline, location: location, measurements: measurements)
    }

    @Test func aHeartRateStrapCapturedClonedAndServedAnswersTheSame() async throws {
        try await inVirtualTime(150, "strap round trip") { clock in
            let capture = Self.temporaryPath("strap.btsnoop")
            let out = Self.temporaryPath("strap-out")
            defer {
                try? FileManager.default.removeItem(atPath: capture)
                try? FileManager.default.removeItem(atPath: out)
            }
            let address = BluetoothAddress.randomStatic(0x00C0_0000_C10E)
            let world = VirtualWorld(clock: clock)
            _ = try await world.emulate([HeartRateModel(seed: 7)], name: "Clone HRM", address: address)
            let host = try await world.openHost(snoop: capture)
            let original = try await Self.strapSession(host, name: "Clone HRM")
            await world.close()
            #expect(original.measurements.count == 3)

            let analysis = CaptureAnalysis.analyze(try CaptureFile.read(path: capture), captureName: "strap.btsnoop")
            let (document, written) = try CloneDirectory.write(analysis, to: out)
            #expect(written.valueLogs.count == 1)
            #expect(FileManager.default.fileExists(atPath: out + "/device.json"))
            let device = try #require(document.devices.first)
            #expect(device.address == address.string)
            #expect(device.name == "Clone HRM")
            #expect(device.services.contains { $0.uuid == .heartRate && !$0.inferred })
            #expect(device.notifications.count >= 3)
            // The device file reads back as written.
            let reread = try CloneDirectory.readDocument(path: out + "/device.json")
            #expect(reread == document)

            let second = VirtualWorld(clock: clock)
            let clone = try await second.serveClone(reread.devices[0], pace: .asFastAsPossible)
            #expect(clone.bluetooth.address == address, "the clone advertises from the captured random static address")
            let client = try await second.openHost()
            let replayed = try await Self.strapSession(client, name: "Clone HRM")
            await second.close()
            #expect(replayed.outline == original.outline)
            #expect(replayed.location == original.location)
            #expect(replayed.measurements == original.measurements)
        }
    }

    /// A COLMI ring session: the answers the ring session decoded, as text.
    static func ringSession(_ bluetooth: Bluetooth, address: BluetoothAddress) async throws -> [String] {
        let connection = try await bluetooth.central.connect(to: address, timeout: .seconds(30))
        var options = Ring.Options()
        options.calendar = .utc
        options.retries = 0
        options.replyTimeout = .seconds(10)
        let ring = try await Ring.open(connection, options: options)
        var answers: [String] = []
        answers.append("\(try await ring.battery())")
        answers.append("\(try await ring.deviceInformation())")
        answers.append("\(try await ring.setHeartRateLog(enabled: true, intervalMinutes: 10))")
        answers.append("\(String(describing: try await ring.steps(daysAgo: 1)))")
        answers.append("\(try await ring.sleep())")
        await ring.close()
        await connection.disconnect()
        return answers
    }

    @Test func aCOLMIRingClonedAnswersItsCommandsWithTheCapturedReplies() async throws {
        try await inVirtualTime(150, "ring round trip") { clock in
            let capture = Self.temporaryPath("ring.btsnoop")
            defer { try? FileManager.default.removeItem(atPath: capture) }
            let address = BluetoothAddress.randomStatic(0x00C0_11C1_0E00)
            let world = VirtualWorld(clock: clock)
            _ = try await world.emulate([COLMIRingModel(seed: 3)], address: address)
            let host = try await world.openHost(snoop: capture)
            let original = try await Self.ringSession(host, address: address)
            await world.close()
            #expect(original.count == 5)
            #expect(original[1].contains("R02"), "\(original[1])")

            let analysis = CaptureAnalysis.analyze(try CaptureFile.read(path: capture), captureName: "ring.btsnoop", replyWindow: Self.patientReplyWindow)
            let device = try #require(analysis.document.devices.first)
            #expect(device.exchanges.filter { !$0.replies.isEmpty }.count >= 5, "\(device.exchanges.count) writes")

            let second = VirtualWorld(clock: clock)
            let clone = try await second.serveClone(device, pace: .asFastAsPossible)
            let client = try await second.openHost()
            let replayed = try await Self.ringSession(client, address: clone.bluetooth.address)
            await second.close()
            #expect(replayed == original)
        }
    }

    /// An ERG session on an FTMS bike: control point requests and their indications, and the
    /// indoor bike data stream around them.
    struct ERGSession: Equatable {
        var outline: [String]
        var answers: [[UInt8]]
    }

    static func ergSession(_ bluetooth: Bluetooth, name: String) async throws -> (ERGSession, bikeData: [[UInt8]]) {
        let found = try await find(name, on: bluetooth)
        let connection = try await bluetooth.central.connect(to: found)
        let outline = Self.outline(try await connection.services())
        var bike = try await connection.notifications(of: .indoorBikeData).makeAsyncIterator()
        var control = try await connection.notifications(of: .fitnessMachineControlPoint).makeAsyncIterator()
        var bikeData: [[UInt8]] = []
        for _ in 0..<2 { if let value = try await bike.next() { bikeData.append(value) } }
        var answers: [[UInt8]] = []
        for request: [UInt8] in [[0x00], [0x05, 0xC8, 0x00], [0x05, 0x2C, 0x01]] {
            try await connection.write(request, to: .fitnessMachineControlPoint)
            if let answer = try await control.next() { answers.append(answer) }
        }
        for _ in 0..<2 { if let value = try await bike.next() { bikeData.append(value) } }
        await connection.disconnect()
        return (ERGSession(outline: outline, answers: answers), bikeData)
    }

    @Test func anFTMSBikesERGSessionClonedAnswersTheControlPointAndKeepsBikeDataTimed() async throws {
        try await inVirtualTime(150, "ERG round trip") { clock in
            let capture = Self.temporaryPath("erg.btsnoop")
            defer { try? FileManager.default.removeItem(atPath: capture) }
            let world = VirtualWorld(clock: clock)
            _ = try await world.emulate([FTMSBikeModel(seed: 5)], name: "Clone Bike", address: .randomStatic(0x00C0_0000_E260))
            let host = try await world.openHost(snoop: capture)
            let (original, originalBikeData) = try await Self.ergSession(host, name: "Clone Bike")
            await world.close()
            #expect(original.answers == [[0x80, 0x00, 0x01], [0x80, 0x05, 0x01], [0x80, 0x05, 0x01]])
            #expect(originalBikeData.count == 4)

            let analysis = CaptureAnalysis.analyze(try CaptureFile.read(path: capture), captureName: "erg.btsnoop", replyWindow: Self.patientReplyWindow)
            let device = try #require(analysis.document.devices.first)
            let bikeHandle = try #require(device.characteristics.first { $0.uuid == .indoorBikeData }?.valueHandle)
            let controlHandle = try #require(device.characteristics.first { $0.uuid == .fitnessMachineControlPoint }?.valueHandle)
            // The bike data stream stays timed; only the control point answers writes.
            #expect(device.notifications.contains { $0.handle == bikeHandle })
            #expect(device.exchanges.allSatisfy { $0.replies.allSatisfy { $0.handle == controlHandle } }, "\(device.exchanges)")
            #expect(device.exchanges.map(\.replies.count) == [1, 1, 1])

            let capturedBikeData = try device.notifications.filter { $0.handle == bikeHandle }.map { try Hex.parse($0.value) }
            #expect(Array(capturedBikeData.prefix(4)) == originalBikeData)

            let second = VirtualWorld(clock: clock)
            // The clone is deliberately not kept: it serves (timed stream included) for as long
            // as its host does, whoever holds it.
            _ = try await second.serveClone(device, pace: .asFastAsPossible)
            let client = try await second.openHost()
            let (replayed, replayedBikeData) = try await Self.ergSession(client, name: "Clone Bike")
            await second.close()
            #expect(replayed == original)
            // The timed stream is played from the subscription in captured order, beside the
            // control point's answers: the client gets the captured bike data values.
            #expect(replayedBikeData == originalBikeData, "\(replayedBikeData)")
        }
    }
}
