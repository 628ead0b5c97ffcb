import BluetideBase
import Testing
@testable import BluetideHost

/// A database laid out at handles chosen by the caller (a clone of a captured device): gaps,
/// the GATT service after the others, no service added; discovery answers at those handles,
/// and a layout that breaks GATT's ordering is refused saying where.
@Suite struct GATTPlacementTests {
    static let vendor = BluetoothUUID(high: 0x6E40_0001_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    static let command = BluetoothUUID(high: 0x6E40_0002_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    static let reply = BluetoothUUID(high: 0x6E40_0003_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)

    /// GAP 0x0001–0x0005, a gap, the vendor service 0x0010–0x001A (command value 0x0012,
    /// reply value 0x0015 with a user description at 0x0016 and its CCCD at 0x0018), Battery
    /// 0x0020–0x0023, the GATT service last at 0x0030–0x0033.
    static func placements() -> [GATTServicePlacement] {
        [
            GATTServicePlacement(
                definition: GATTServiceDefinition(uuid: .genericAccess, characteristics: [
                    GATTCharacteristicDefinition(uuid: .deviceName, properties: .read, value: Array("Ring".utf8)),
                    GATTCharacteristicDefinition(uuid: .appearance, properties: .read, value: [0, 0]),
                ]),
                handle: 0x0001, endHandle: 0x0005, characteristics: [
                    GATTCharacteristicPlacement(declarationHandle: 0x0002, valueHandle: 0x0003),
                    GATTCharacteristicPlacement(declarationHandle: 0x0004, valueHandle: 0x0005),
                ]),
            GATTServicePlacement(
                definition: GATTServiceDefinition(uuid: vendor, characteristics: [
                    GATTCharacteristicDefinition(uuid: command, properties: [.write, .writeWithoutResponse]),
                    GATTCharacteristicDefinition(uuid: reply, properties: .notify, descriptors: [
                        GATTDescriptorDefinition(uuid: .characteristicUserDescription, value: Array("reply".utf8)),
                    ]),
                ]),
                handle: 0x0010, endHandle: 0x001A, characteristics: [
                    GATTCharacteristicPlacement(declarationHandle: 0x0011, valueHandle: 0x0012),
                    GATTCharacteristicPlacement(declarationHandle: 0x0014, valueHandle: 0x0015, configurationHandle: 0x0018, descriptorHandles: [0x0016]),
                ]),
            GATTServicePlacement(
                definition: GATTServiceDefinition(uuid: .battery, characteristics: [
                    GATTCharacteristicDefinition(uuid: .batteryLevel, properties: [.read, .notify], value: [77]),
                ]),
                handle: 0x0020, endHandle: 0x0023, characteristics: [
                    GATTCharacteristicPlacement(declarationHandle: 0x0021, valueHandle: 0x0022, configurationHandle: 0x0023),
                ]),
            GATTServicePlacement(
                definition: GATTServiceDefinition(uuid: .genericAttribute, characteristics: [
                    GATTCharacteristicDefinition(uuid: .serviceChanged, properties: .indicate, permissions: []),
                ]),
                handle: 0x0030, endHandle: 0x0033, characteristics: [
                    GATTCharacteristicPlacement(declarationHandle: 0x0031, valueHandle: 0x0032, configurationHandle: 0x0033),
                ]),
        ]
    }

    @Test func theDatabaseHoldsExactlyTheHandlesGiven() throws {
        let database = try GATTDatabase(placing: Self.placements())
        #expect(database.attributes.map(\.handle) == [
            0x01, 0x02, 0x03, 0x04, 0x05, 0x10, 0x11, 0x12, 0x14, 0x15, 0x16, 0x18, 0x20, 0x21, 0x22, 0x23, 0x30, 0x31, 0x32, 0x33,
        ])
        #expect(database[0x0012]?.type == Self.command)
        #expect(database[0x0013] == nil, "a gap holds nothing")
        #expect(database[0x0018]?.type == .clientCharacteristicConfiguration)
        #expect(database[0x0016]?.value == Array("reply".utf8))
        #expect(database.attributes(in: 0x0006, 0x000F).isEmpty)
        #expect(database.attributes(in: 0x0013, 0x0016).map(\.handle) == [0x14, 0x15, 0x16])
        #expect(database.attributes(in: 0x0031, 0xFFFF).map(\.handle) == [0x31, 0x32, 0x33])
        #expect(database.valueHandle(of: .serviceChanged, in: .genericAttribute) == 0x0032)
        // The characteristic declaration points at its value and names the CCCD's owner.
        #expect(database[0x0014]?.value == [0x10, 0x15, 0x00] + Self.reply.littleEndianBytes)
        guard case .characteristicValue(_, let cccd) = database[0x0015]?.role else {
            Issue.record("0x0015 is not a value")
            return
        }
        #expect(cccd == 0x0018)
        var copy = database
        copy.setValue([1, 2], at: 0x0012)
        copy.setValue([9], at: 0x0013)
        #expect(copy[0x0012]?.value == [1, 2])
        #expect(copy.attributes.count == database.attributes.count)
    }

    @Test func discoveryAnswersAtThePlacedHandles() throws {
        var server = GATTServer(database: try GATTDatabase(placing: Self.placements()))
        server.connect(0x40)
        let groups = server.handle(.readByGroupTypeRequest(start: 0x0001, end: 0xFFFF, type: .primaryService), from: 0x40, mtu: 23).response
        guard case let .readByGroupTypeResponse(first)? = groups else {
            Issue.record("no services: \(String(describing: groups))")
            return
        }
        // 16-bit services first (the 128-bit vendor one differs in length, so it comes next).
        #expect(first.map(\.handle) == [0x0001])
        let rest = server.handle(.readByGroupTypeRequest(start: 0x0006, end: 0xFFFF, type: .primaryService), from: 0x40, mtu: 23).response
        guard case let .readByGroupTypeResponse(vendor)? = rest else {
            Issue.record("no services after 0x0006: \(String(describing: rest))")
            return
        }
        #expect(vendor.map(\.handle) == [0x0010])
        #expect(vendor.map(\.endGroupHandle) == [0x001A])
        let information = server.handle(.findInformationRequest(start: 0x0016, end: 0x001A), from: 0x40, mtu: 23).response
        #expect(information == .findInformationResponse([
            ATTHandleUUID(handle: 0x0016, uuid: .characteristicUserDescription),
            ATTHandleUUID(handle: 0x0018, uuid: .clientCharacteristicConfiguration),
        ]))
        #expect(server.handle(.readRequest(handle: 0x0013), from: 0x40, mtu: 23).response
            == .errorResponse(requestOpcode: .readRequest, handle: 0x0013, error: .invalidHandle))
        // Subscribing through the placed CCCD makes the value notify.
        _ = server.handle(.writeRequest(handle: 0x0018, value: [0x01, 0x00]), from: 0x40, mtu: 23)
        #expect(server.notify(valueHandle: 0x0015, value: [7]).map(\.handle) == [0x0015])
    }

    @Test func aLayoutBreakingGATTOrderIsRefusedSayingWhere() {
        var overlapping = Self.placements()
        overlapping[2].handle = 0x0019
        #expect(throws: GATTPlacementError.self) { try GATTDatabase(placing: overlapping) }
        do {
            _ = try GATTDatabase(placing: overlapping)
        } catch {
            #expect(error.description.contains("service 180F at 0x0019"), "\(error)")
            #expect(error.description.contains("0x001A"), "\(error)")
        }
        var valueFirst = Self.placements()
        valueFirst[1].characteristics[0].valueHandle = 0x0011
        valueFirst[1].characteristics[0].declarationHandle = 0x0012
        do {
            _ = try GATTDatabase(placing: valueFirst)
            Issue.record("a value before its declaration was accepted")
        } catch {
            #expect(error.description.contains("the value of"), "\(error)")
        }
        var shortEnd = Self.placements()
        shortEnd[1].endHandle = 0x0017
        #expect(throws: GATTPlacementError.self) { try GATTDatabase(placing: shortEnd) }
        var zero = Self.placements()
        zero[0].handle = 0
        #expect(throws: GATTPlacementError.self) { try GATTDatabase(placing: zero) }
        var missing = Self.placements()
        missing[1].characteristics.removeLast()
        #expect(throws: GATTPlacementError.self) { try GATTDatabase(placing: missing) }
    }

    @Test func theDefaultLayoutIsUnchanged() {
        let database = GATTFixture.server().database
        #expect(database.attributes.enumerated().allSatisfy { $0.element.handle == UInt16($0.offset + 1) })
        #expect(database.attributes(in: 10, 13).map(\.handle) == [10, 11, 12, 13])
        #expect(database[12]?.type == .heartRateMeasurement)
    }
}
