import Bluetide
@testable import BluetideBlueZ
import BluetideDBus
import Foundation
import Testing

/// The BlueZ backend's readings of bluetoothd's objects, without a bus.
@Suite struct BlueZBackendUnitTests {
    static let device = "/org/bluez/hci0/dev_C1_B1_7E_00_03_00"

    static func objects(_ entries: [(String, String, [String: DBusValue])]) -> BlueZObjects {
        var objects: [String: [String: [String: DBusValue]]] = [:]
        for (path, interface, properties) in entries { objects[path, default: [:]][interface] = properties }
        return BlueZObjects(objects: objects)
    }

    @Test func theDatabaseComesFromTheObjectPathsAndFlags() throws {
        let found = BlueZLink.database(Self.objects([
            (Self.device, BlueZ.deviceInterface, ["Connected": .boolean(true)]),
            (Self.device + "/service000a", BlueZ.serviceInterface, ["UUID": .string("0000180d-0000-1000-8000-00805f9b34fb"), "Primary": .boolean(true)]),
            (Self.device + "/service000a/char000b", BlueZ.characteristicInterface, [
                "UUID": .string("00002a37-0000-1000-8000-00805f9b34fb"), "Flags": .strings(["notify"]), "MTU": .uint16(247),
            ]),
            (Self.device + "/service000a/char000b/desc000d", BlueZ.descriptorInterface, ["UUID": .string("00002902-0000-1000-8000-00805f9b34fb")]),
            (Self.device + "/service000a/char000e", BlueZ.characteristicInterface, [
                "UUID": .string("00002a38-0000-1000-8000-00805f9b34fb"), "Flags": .strings(["read", "encrypt-read"]), "Handle": .uint16(0x0F),
            ]),
            (Self.device + "/service0010", BlueZ.serviceInterface, ["UUID": .string("0000180f-0000-1000-8000-00805f9b34fb")]),
            (Self.device + "/service0010/char0011", BlueZ.characteristicInterface, [
                "UUID": .string("00002a19-0000-1000-8000-00805f9b34fb"), "Flags": .strings(["read", "write", "write-without-response"]),
            ]),
            // Another device's objects stay out.
            ("/org/bluez/hci0/dev_C1_B1_7E_00_03_01/service000a", BlueZ.serviceInterface, ["UUID": .string("180a")]),
        ]), device: Self.device)
        #expect(found.services.map(\.service.uuid) == [BluetoothUUID(0x180D), BluetoothUUID(0x180F)])
        let heartRate = found.services[0]
        #expect(heartRate.service.startHandle == 0x0A && heartRate.service.endHandle == 0x0F)
        let measurement = heartRate.characteristics[0]
        #expect(measurement.characteristic.uuid == BluetoothUUID(0x2A37))
        #expect(measurement.characteristic.declarationHandle == 0x0B && measurement.characteristic.valueHandle == 0x0C)
        #expect(measurement.characteristic.properties == .notify)
        #expect(measurement.descriptors == [GATTDescriptor(uuid: BluetoothUUID(0x2902), handle: 0x0D)])
        #expect(heartRate.characteristics[1].characteristic.valueHandle == 0x0F)
        #expect(found.services[1].characteristics[0].characteristic.properties == [.read, .write, .writeWithoutResponse])
        #expect(found.characteristics[0x0C] == Self.device + "/service000a/char000b")
        #expect(found.descriptors[0x0D] == Self.device + "/service000a/char000b/desc000d")
        #expect(found.mtu == 247)
    }

    @Test func advertisementsComeFromDeviceProperties() throws {
        let properties: [String: DBusValue] = [
            "Address": .string("C1:B1:7E:00:03:00"), "AddressType": .string("random"), "Name": .string("BZ-HRM"), "RSSI": .int16(-52),
            "UUIDs": .strings(["0000180d-0000-1000-8000-00805f9b34fb"]), "TxPower": .int16(4),
            "ManufacturerData": .dictionary(key: "q", value: "v", [DBusDictionaryEntry(key: .uint16(0x0059), value: .variant(.bytes([1, 2])))]),
            "ServiceData": .dictionary(["0000180f-0000-1000-8000-00805f9b34fb": .bytes([0x64])]),
        ]
        let advertisement = try #require(BlueZCentral.advertisement(properties.mapValues(\.unwrapped), firstSeen: Date()))
        #expect(advertisement.address == (try BluetoothAddress("C1:B1:7E:00:03:00/R")))
        #expect(advertisement.name == "BZ-HRM" && advertisement.rssi == -52 && advertisement.txPower == 4)
        #expect(advertisement.serviceUUIDs == [BluetoothUUID(0x180D)])
        #expect(advertisement.manufacturerData == [0x0059: [1, 2]])
        #expect(advertisement.serviceData == [BluetoothUUID(0x180F): [0x64]])
        #expect(devicePath(adapter: "/org/bluez/hci0", address: advertisement.address) == Self.device)
    }

    @Test func theDiscoveryFilterCarriesTransportUUIDsRSSIAndDuplicates() {
        var filter = ScanFilter(serviceUUIDs: [BluetoothUUID(0x180D)])
        filter.minimumRSSI = -70
        let entries = BlueZCentral.discoveryFilter(filter).dictionary ?? [:]
        #expect(entries["Transport"]?.string == "le")
        #expect(entries["DuplicateData"]?.bool == true)
        #expect(entries["UUIDs"]?.strings == ["0000180d-0000-1000-8000-00805f9b34fb"])
        #expect(entries["RSSI"]?.unwrapped == .int16(-70))
        #expect(BlueZCentral.discoveryFilter(ScanFilter()).dictionary?["UUIDs"] == nil)
    }

    @Test func attErrorsAreReadFromBlueZErrors() {
        #expect(BlueZLink.attCode(DBusError("Operation failed with ATT error: 0x80", name: "org.bluez.Error.Failed")) == 0x80)
        #expect(BlueZLink.attCode(DBusError("Read not permitted", name: "org.bluez.Error.NotPermitted")) == 0x02)
        #expect(BlueZLink.attCode(DBusError("Write not permitted", name: "org.bluez.Error.NotPermitted")) == 0x03)
        #expect(BlueZLink.attCode(DBusError("Not connected", name: "org.bluez.Error.Failed")) == nil)
    }

    @Test func theSpecNamesAnAdapter() throws {
        let scheme = BlueZBackendScheme()
        try scheme.validate(argument: nil)
        try scheme.validate(argument: "hci1")
        #expect(throws: BlueZBackendError.self) { try scheme.validate(argument: "usb0") }
    }
}
