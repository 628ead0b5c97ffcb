import Bluetide
import BluetideBase
import BluetideProfiles
import Foundation
import Synchronization
import Testing
@testable import BluetideRide

/// DIRCON (Wahoo Direct Connect): the framing byte by byte, the GATT-like table and the control
/// point's FTMS rules per connection, and a DIRCON app riding an emulated trainer in ERG.
@Suite struct DirconTests {
    static let ftms: [UInt8] = [0x00, 0x00, 0x18, 0x26, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]
    static let controlPoint: [UInt8] = [0x00, 0x00, 0x2A, 0xD9, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]
    static let status: [UInt8] = [0x00, 0x00, 0x2A, 0xDA, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]

    @Test func messagesAreAHeaderAndAPayloadCutAnywhere() {
        let message = DirconMessage(.enableNotifications, sequence: 7, payload: Self.controlPoint + [1])
        #expect(Array(message.bytes.prefix(6)) == [0x01, 0x05, 0x07, 0x00, 0x00, 0x11])
        #expect(message.uuid() == .fitnessMachineControlPoint)
        var framer = DirconFramer()
        let stream = DirconMessage(.discoverServices, sequence: 1).bytes + message.bytes
        #expect(framer.append(Array(stream.prefix(3))).isEmpty)
        #expect(framer.append(Array(stream[3..<10])) == [DirconMessage(.discoverServices, sequence: 1)])
        #expect(framer.pending == 4)
        #expect(framer.append(Array(stream[10...])) == [message])
        #expect(framer.pending == 0)
    }

    @Test func discoveryReadsAndSubscriptionsFollowTheTable() throws {
        var core = DirconBridgeCore()
        let services = core.receive(DirconMessage(.discoverServices, sequence: 1), from: 1)
        guard case let .send(answer, to: 1)? = services.first else { Issue.record("\(services)"); return }
        #expect(answer.bytes.prefix(6) == [0x01, 0x01, 0x01, 0x00, 0x00, 48])
        #expect(Array(answer.payload.prefix(16)) == Self.ftms)
        #expect(answer.uuid(at: 16) == .cyclingPower)
        #expect(answer.uuid(at: 32) == .heartRate)

        let characteristics = core.receive(DirconMessage(.discoverCharacteristics, sequence: 2, payload: Self.ftms), from: 1)
        guard case let .send(table, _)? = characteristics.first else { Issue.record("\(characteristics)"); return }
        #expect(table.payload.count == 16 + 8 * 17)
        // The control point: write and notify (FTMS indicates its answers).
        #expect(Array(table.payload[(16 + 6 * 17)..<(16 + 7 * 17)]) == Self.controlPoint + [0x06])

        let read = core.receive(DirconMessage(.readCharacteristic, sequence: 3, payload: BluetoothUUID.supportedPowerRange.bigEndianBytes), from: 1)
        #expect(read == [.send(DirconMessage(.readCharacteristic, sequence: 3, payload: BluetoothUUID.supportedPowerRange.bigEndianBytes
            + FTMSBridgeCore.powerRange.bytes), to: 1)])
        let missing = core.receive(DirconMessage(.readCharacteristic, sequence: 4, payload: BluetoothUUID.batteryLevel.bigEndianBytes), from: 1)
        #expect(missing.first == .send(DirconMessage(
            .readCharacteristic, sequence: 4, response: .characteristicNotFound, payload: BluetoothUUID.batteryLevel.bigEndianBytes), to: 1))
        let notReadable = core.receive(DirconMessage(.readCharacteristic, sequence: 5, payload: Self.controlPoint), from: 1)
        #expect(notReadable.first == .send(DirconMessage(.readCharacteristic, sequence: 5, response: .operationNotSupported, payload: Self.controlPoint), to: 1))
        #expect(core.receive(DirconMessage(identifier: 0x42, sequence: 6), from: 1)
            == [.send(DirconMessage(identifier: 0x42, sequence: 6, response: DirconMessage.Response.unknownMessageType.rawValue), to: 1)])

        // Indoor Bike Data goes to the subscribed connection only.
        #expect(core.publish(RideSample(time: 1, trigger: .tick, powerWatts: 150)).isEmpty)
        _ = core.receive(DirconMessage(.enableNotifications, sequence: 7, payload: BluetoothUUID.indoorBikeData.bigEndianBytes + [1]), from: 2)
        let sent = core.publish(RideSample(time: 2, trigger: .tick, powerWatts: 150))
        #expect(sent.count == 1)
        guard case let .send(notification, to: 2)? = sent.first else { Issue.record("\(sent)"); return }
        #expect(notification.identifier == 0x06 && notification.sequence == 0)
        #expect(try IndoorBikeData(bytes: Array(notification.payload.dropFirst(16))).instantaneousPowerWatts == 150)
    }

    @Test func theControlPointFollowsFTMSPerConnection() {
        var core = DirconBridgeCore()
        func write(_ bytes: [UInt8], _ sequence: UInt8, from connection: Int) -> [DirconBridgeCore.Output] {
            core.receive(DirconMessage(.writeCharacteristic, sequence: sequence, payload: Self.controlPoint + bytes), from: connection)
        }
        func response(_ opcode: UInt8, _ result: UInt8, to connection: Int) -> DirconBridgeCore.Output {
            .send(DirconMessage(.notification, sequence: 0, payload: Self.controlPoint + [0x80, opcode, result]), to: connection)
        }
        let taken = { (sequence: UInt8, connection: Int) in
            DirconBridgeCore.Output.send(DirconMessage(.writeCharacteristic, sequence: sequence, payload: Self.controlPoint), to: connection)
        }
        // Before Request Control: not permitted.
        #expect(write([0x05, 0xB4, 0x00], 1, from: 1) == [taken(1, 1), response(0x05, 0x05, to: 1)])
        #expect(write([0x00], 2, from: 1) == [taken(2, 1), response(0x00, 0x01, to: 1)])
        #expect(core.controller == 1)
        // Another connection cannot take control meanwhile.
        #expect(write([0x00], 1, from: 2) == [taken(1, 2), response(0x00, 0x05, to: 2)])
        // Set Target Power 180 W goes to the trainer; its confirmation answers success with a status.
        let request = FitnessMachineControlPointRequest.setTargetPower(watts: 180)
        #expect(write([0x05, 0xB4, 0x00], 3, from: 1) == [taken(3, 1), .forward(.targetPower(watts: 180), request: request, connection: 1)])
        _ = core.receive(DirconMessage(.enableNotifications, sequence: 4, payload: Self.status + [1]), from: 2)
        let done = core.completed(request, failure: nil, connection: 1)
        #expect(done.first == response(0x05, 0x01, to: 1))
        #expect(done.contains(.send(DirconMessage(.notification, sequence: 0, payload: Self.status + FitnessMachineStatus.targetPowerChanged(watts: 180).bytes), to: 2)))
        #expect(core.completed(request, failure: "no answer", connection: 1) == [response(0x05, 0x04, to: 1)])
        #expect(write([0x05, 0xFF, 0x7F], 5, from: 1) == [taken(5, 1), response(0x05, 0x03, to: 1)], "out of range")
        // The controller leaving releases control.
        core.disconnected(1)
        #expect(core.controller == nil)
        #expect(write([0x00], 2, from: 2) == [taken(2, 2), response(0x00, 0x01, to: 2)])
    }

    /// A DIRCON app (its messages, as a client sends them) requests control and sets 180 W on
    /// an emulated FTMS bike through a ride session: the trainer confirms, the app gets success
    /// and the ride's target is 180 W.
    @Test(.timeLimit(.minutes(2))) func anAppSetsERGOnAnEmulatedTrainer() async throws {
        try await EmulatedRig.with(["ftms-bike"], "a DIRCON app on an emulated trainer") { rig in
            let source = LiveRideSource(central: rig.bluetooth.central, requests: [.init(.trainer, device: EmulatedRig.address(0).description)], configuration: .onRig())
            let session = RideSession(source: source)
            try await riding(session, rig) {
                let stream = try await session.start()
                let bridge = DirconBridge(session: session)
                let received = Mutex<[UInt8]>([])
                let app = await bridge.open(name: "127.0.0.1:50000") { bytes in received.withLock { $0 += bytes } }
                await bridge.receive(DirconMessage(.enableNotifications, sequence: 1, payload: Self.controlPoint + [1]).bytes, from: app)
                await bridge.receive(DirconMessage(.writeCharacteristic, sequence: 2, payload: Self.controlPoint + [0x00]).bytes, from: app)
                await bridge.receive(DirconMessage(.writeCharacteristic, sequence: 3, payload: Self.controlPoint + [0x05, 0xB4, 0x00]).bytes, from: app)
                var framer = DirconFramer()
                let messages = framer.append(received.withLock { $0 })
                let answers = messages.filter { $0.identifier == 0x06 && $0.uuid() == .fitnessMachineControlPoint }.map { Array($0.payload.dropFirst(16)) }
                #expect(answers == [[0x80, 0x00, 0x01], [0x80, 0x05, 0x01]], "\(messages)")
                #expect(await session.currentTarget == .power(watts: 180))
                _ = try await guarded("the trainer at 180 W") { try await samples(stream) { settled($0, at: 180, tolerance: 5, count: 2) } }
                await bridge.close(app)
                await bridge.finish()
                var events: [String] = []
                for await event in bridge.events { events.append(event.text) }
                #expect(events.contains("app 127.0.0.1:50000: set target power 180 W → trainer confirmed → success"), "\(events)")
                #expect(events.last == "app 127.0.0.1:50000 disconnected; control released")
            }
        }
    }
}
