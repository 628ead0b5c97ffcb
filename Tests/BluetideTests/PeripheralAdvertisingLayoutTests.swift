@testable import Bluetide
import BluetideProfiles
import Testing

/// How advertising pieces are placed into 31 + 31 bytes of legacy advertising.
@Suite struct PeripheralAdvertisingLayoutTests {
    private func layout(
        name: String? = nil, uuids: [BluetoothUUID] = [], manufacturer: [UInt16: [UInt8]] = [:],
        serviceData: [BluetoothUUID: [UInt8]] = [:]
    ) throws(PeripheralError) -> (advertising: AdvertisingData, scanResponse: AdvertisingData?) {
        try AdvertisingLayout(name: name, serviceUUIDs: uuids, manufacturerData: manufacturer, serviceData: serviceData).layout()
    }

    @Test func everythingInTheAdvertisementWhenItFits() throws {
        let (advertising, response) = try layout(name: "HR", uuids: [BluetoothUUID(0x180D), BluetoothUUID(0x180F)])
        #expect(response == nil)
        #expect(advertising.bytes == [0x02, 0x01, 0x06, 0x05, 0x03, 0x0D, 0x18, 0x0F, 0x18, 0x03, 0x09, 0x48, 0x52])
    }

    @Test func theNameMovesToTheScanResponseFirst() throws {
        // 3 (flags) + 18 (128-bit UUID) + 13 (11-character name) = 34 > 31.
        let (advertising, response) = try layout(name: "Reflex-1A2B", uuids: [PunchUUID.service])
        #expect(advertising.elements == [.flags([.leGeneralDiscoverable, .brEdrNotSupported]),
                                         .serviceUUIDs([PunchUUID.service], size: .bits128, complete: true)])
        #expect(response?.elements == [.completeLocalName("Reflex-1A2B")])
        #expect(advertising.bytes.count <= 31 && (response?.bytes.count ?? 0) <= 31)
    }

    @Test func the128BitUUIDsMoveWhenMovingTheNameIsNotEnough() throws {
        // flags 3 + name 14 + UUID 18 + manufacturer 14 = 49: moving the name leaves 35 bytes,
        // moving the UUIDs leaves 31.
        let name = "Reflex-Coach"
        let manufacturer: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
        let (advertising, response) = try layout(name: name, uuids: [PunchUUID.service], manufacturer: [0x0059: manufacturer])
        #expect(advertising.elements == [.flags([.leGeneralDiscoverable, .brEdrNotSupported]),
                                         .manufacturerSpecificData(companyID: 0x0059, data: manufacturer),
                                         .completeLocalName(name)])
        #expect(advertising.bytes.count == 31)
        #expect(response?.elements == [.serviceUUIDs([PunchUUID.service], size: .bits128, complete: true)])
    }

    @Test func serviceAndManufacturerDataAreEncoded() throws {
        let (advertising, response) = try layout(manufacturer: [0x0059: [0xAA]], serviceData: [BluetoothUUID(0x180F): [0x64]])
        #expect(response == nil)
        #expect(advertising.serviceData[BluetoothUUID(0x180F)] == [0x64])
        #expect(advertising.manufacturerData.first?.companyID == 0x0059)
        #expect(advertising.manufacturerData.first?.data == [0xAA])
    }

    @Test func tooLongForBothPacketsSaysWhatNeedsHowMuch() {
        #expect(throws: PeripheralError.self) { try layout(name: String(repeating: "x", count: 30)) }
        do {
            _ = try layout(uuids: [PunchUUID.service, PunchUUID.response], manufacturer: [0x0059: Array(repeating: 0, count: 20)])
            Issue.record("two 128-bit UUIDs and 22 bytes of manufacturer data were accepted")
        } catch {
            guard case let .advertisingDataTooLong(text) = error else { Issue.record("\(error)"); return }
            #expect(text.contains("128-bit service UUIDs: 34 bytes"))
            #expect(text.contains("more than one packet carries (31)"))
        }
        do {
            _ = try layout(name: "twenty-five characters!!!", uuids: [PunchUUID.service], manufacturer: [0x0059: Array(repeating: 0, count: 20)])
            Issue.record("74 bytes were accepted")
        } catch {
            guard case let .advertisingDataTooLong(text) = error else { Issue.record("\(error)"); return }
            #expect(text.contains("cannot be split into two packets of 31 bytes"))
        }
    }

    @Test func valueHandlesFollowTheServerLayout() {
        // GAP: 1 declaration + 2 × 2 = handles 1...5; GATT: 1 + 2 + CCCD = 6...9.
        let definitions = [
            GATTServiceDefinition(uuid: BluetoothUUID(0x180F), characteristics: [
                GATTCharacteristicDefinition(uuid: BluetoothUUID(0x2A19), properties: [.read, .notify]),
            ]),
            GATTServiceDefinition(uuid: BluetoothUUID(0x180D), characteristics: [
                GATTCharacteristicDefinition(uuid: BluetoothUUID(0x2A37), properties: [.notify]),
                GATTCharacteristicDefinition(uuid: BluetoothUUID(0x2A38), properties: [.read]),
            ]),
        ]
        #expect(Peripheral.valueHandles(of: definitions) == [[12], [16, 19]])
    }
}
