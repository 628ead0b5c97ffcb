@testable import Bluetide
import BluetideProfiles
import Testing

/// A base service class and a subclass adding a characteristic: reflection walks both.
class PeripheralTestBaseService: GATTService {
    class var uuid: BluetoothUUID { BluetoothUUID(0x180F) }
    @Characteristic(BluetoothUUID(0x2A19), [.read, .notify]) var level: UInt8 = 100
    var unrelated = "not a characteristic"
}

final class PeripheralTestDerivedService: PeripheralTestBaseService {
    override class var uuid: BluetoothUUID { BluetoothUUID(0x1810) }
    @Characteristic(BluetoothUUID(0x2A35), [.indicate], permissions: [.readable, .readEncrypted], description: "BP")
    var pressure: [UInt8] = [1, 2]
}

/// The wrapper on its own: decoding of writes, reflection, definitions.
@Suite struct PeripheralCharacteristicTests {
    typealias Response = Characteristic<PunchResponse>

    @Test func writtenBytesDecodeOrAreRefusedWithTheDocumentedCodes() throws {
        #expect(try Response.decode([0x9C, 0x01, 0x00, 0x00, 0x03, 0x01, 0x07, 0x00]).get()
            == PunchResponse(reactionTimeMilliseconds: 412, target: 3, hit: true, step: 7))
        // Too short for a field: Invalid Attribute Value Length.
        #expect(Response.decode([0x9C, 0x01, 0x00]) == .failure(.invalidAttributeValueLength))
        // Bytes left over: also a length problem.
        #expect(Response.decode([0x9C, 0x01, 0x00, 0x00, 0x03, 0x01, 0x07, 0x00, 0xFF]) == .failure(.invalidAttributeValueLength))
        // Bytes there but target 9 is no value: application error 0x80.
        #expect(Response.decode([0x9C, 0x01, 0x00, 0x00, 0x09]) == .failure(ATTErrorCode(0x80)))
        #expect(Characteristic<PunchSequence>.decode([]) == .failure(ATTErrorCode(0x80)))
        #expect(Characteristic<UInt16>.decode([0x01]) == .failure(.invalidAttributeValueLength))
    }

    @Test func randomWritesNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        var outcomes = Set<UInt8>()
        for _ in 0..<5000 {
            let bytes = (0..<Int.random(in: 0...12, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            switch Response.decode(bytes) {
            case let .success(value): #expect(Response.decode(value.bytes) == .success(value))  // reserved flag bits are dropped
            case let .failure(code): outcomes.insert(code.rawValue)
            }
            if case let .failure(code) = Characteristic<PunchTimeSequence>.decode(bytes) { outcomes.insert(code.rawValue) }
        }
        #expect(outcomes.isSubset(of: [0x0D, 0x80]))
    }

    @Test func reflectionFindsCharacteristicsInDeclarationOrderWithSuperclassFirst() {
        let service = PeripheralTestDerivedService()
        let found = service.characteristicBindings
        #expect(found.map(\.uuid) == [BluetoothUUID(0x2A19), BluetoothUUID(0x2A35)])
        #expect(service.uuid == BluetoothUUID(0x1810))
        #expect(service.isPrimary)
        #expect(found.first === service.$level)
    }

    @Test func definitionsCarryPropertiesPermissionsDescriptionAndTheCurrentValue() throws {
        let service = PeripheralTestDerivedService()
        service.pressure = [7, 8, 9]
        let definition = try #require(service.characteristicBindings.last).definition()
        #expect(definition.uuid == BluetoothUUID(0x2A35))
        #expect(definition.properties == [.indicate])
        #expect(definition.permissions == [.readable, .readEncrypted])
        #expect(definition.value == [7, 8, 9])
        #expect(definition.descriptors.map(\.uuid) == [.characteristicUserDescription])
        #expect(definition.descriptors.first?.value == Array("BP".utf8))
        // Reads and writes go through the wrapper (exercised over the link in PeripheralTests).
        #expect(definition.onRead != nil)
        #expect(definition.validateWrite != nil)
        // Permissions default to what the properties imply.
        #expect(service.$level.permissions == [.readable])
    }

    @Test func assigningWithoutAPeripheralJustStoresTheValue() {
        let service = PeripheralTestDerivedService()
        service.level = 42
        #expect(service.level == 42)
        #expect(service.$level.subscriberCount == 0)
    }
}
