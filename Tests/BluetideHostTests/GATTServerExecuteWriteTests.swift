import BluetideBase
import Synchronization
import Testing
@testable import BluetideHost

/// An Execute Write validates every prepared part before applying any, and runs the validation
/// hook once per characteristic: hooks that act on the value (the @Characteristic wrapper
/// updates its property there) must not see a long write twice.
@Suite struct GATTServerExecuteWriteTests {
    @Test func executeWriteRunsTheValidationHookOncePerCharacteristic() {
        let uuid = BluetoothUUID(0xFFF1)
        let calls = Mutex<[[UInt8]]>([])
        var server = GATTServer(deviceName: "t", services: [
            GATTServiceDefinition(uuid: BluetoothUUID(0xFFF0), characteristics: [
                GATTCharacteristicDefinition(
                    uuid: uuid, properties: [.read, .write], value: [],
                    validateWrite: { context in
                        calls.withLock { $0.append(context.value) }
                        return nil
                    })
            ])
        ])
        server.connect(1)
        let handle = server.database.valueHandle(of: uuid)!
        _ = server.handle(.prepareWriteRequest(handle: handle, offset: 0, value: [1, 2, 3]), from: 1, mtu: 23)
        _ = server.handle(.prepareWriteRequest(handle: handle, offset: 3, value: [4, 5]), from: 1, mtu: 23)
        let (response, events) = server.handle(.executeWriteRequest(flags: 1), from: 1, mtu: 23)
        #expect(response == .executeWriteResponse)
        #expect(calls.withLock { $0 } == [[1, 2, 3, 4, 5]])
        #expect(events == [.valueWritten(connection: 1, handle: handle, uuid: uuid, value: [1, 2, 3, 4, 5])])
    }
}
