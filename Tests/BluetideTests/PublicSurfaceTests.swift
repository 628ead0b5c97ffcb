// Compiled with `import Bluetide` alone: every type a user of the public API needs reaches them
// through it (Bluetide's own types and the curated list in Sources/Bluetide/Shared/HostTypes.swift).
import Bluetide
import Testing

@Suite struct PublicSurfaceTests {
    @Test func disconnectReasonsCarryTheCodeAndASentence() {
        #expect(DisconnectReason.connectionTimeout.code == 0x08)
        #expect(DisconnectReason.remoteUserTerminated.code == 0x13)
        #expect(DisconnectReason.localHostTerminated.code == 0x16)
        #expect(DisconnectReason(code: 0x08) == .connectionTimeout)
        #expect(DisconnectReason.connectionTimeout.description == "0x08 (connection timeout)")
        #expect(DisconnectReason.connectionTimeout.explanation == "the peer went silent (link supervision timeout)")
        #expect(DisconnectReason.remoteUserTerminated.explanation == "the peer closed the link")
        // A code without a name of its own is kept as it came and still explained.
        let other = DisconnectReason(code: 0x3A)
        #expect(other.code == 0x3A)
        #expect(other.explanation.hasPrefix("the controller closed the link ("), "\(other.explanation)")
        #expect(DisconnectReason(code: 0xEE).description.hasPrefix("0xEE"))
        // Users match on the named reasons.
        let matched = switch DisconnectReason(code: 0x13) {
        case .connectionTimeout: "timeout"
        case .remoteUserTerminated: "closed by the peer"
        default: "other"
        }
        #expect(matched == "closed by the peer")
        #expect(ConnectionEvent.disconnected(reason: .connectionTimeout).description == "disconnected (0x08 (connection timeout))")
    }

    @Test func theHostValueTypesUsersNeedAreReachable() throws {
        let properties: GATTCharacteristicProperties = [.read, .notify]
        #expect(properties.contains(.notify))
        #expect(GATTPermissions.implied(by: properties).contains(.readable))
        #expect(ATTErrorCode(0x80).rawValue == 0x80)
        let definition = GATTServiceDefinition(uuid: BluetoothUUID(0x180F), characteristics: [
            GATTCharacteristicDefinition(uuid: BluetoothUUID(0x2A19), properties: [.read], value: [0x64]),
        ])
        #expect(definition.characteristics.count == 1)
        let data = AdvertisingData([.flags([.leGeneralDiscoverable]), .completeLocalName("Strap")])
        #expect(data.localName == "Strap")
        let parameters: ConnectionParameters? = nil
        #expect(parameters == nil)
        let change: PeripheralSubscriptionChange? = nil
        #expect(change == nil)
        #expect(ServedValue(valueHandle: 0x0C).description == "0x000C")
    }
}
