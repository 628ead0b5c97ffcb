import Bluetide
@testable import BluetideBlueZ
import BluetideDBus
import BluetideTransport
import BluetideTestSupport
import Foundation
import Synchronization
import Testing

/// A service as an app declares it, for the BlueZ peripheral's object tree.
final class BlueZTreeService: GATTService {
    static let uuid = try! BluetoothUUID("B1DE0400-0000-4000-8000-00000000B1DE")
    static let levelUUID = try! BluetoothUUID("B1DE0401-0000-4000-8000-00000000B1DE")
    static let targetUUID = try! BluetoothUUID("B1DE0402-0000-4000-8000-00000000B1DE")

    @Characteristic(BlueZTreeService.levelUUID, [.read, .notify], description: "level")
    var level: UInt8 = 7

    /// Two bytes; 0xFFFF refused by the app's check with application error 0x80.
    @Characteristic(BlueZTreeService.targetUUID, [.read, .write], security: .encrypted, validate: { $0 == 0xFFFF ? ATTErrorCode(0x80) : nil })
    var target: UInt16 = 0
}

/// A stand-in bluetoothd on a private bus: `org.bluez` with adapter hci0, whose GattManager1
/// and LEAdvertisingManager1 read what is registered the way bluetoothd does (GetManagedObjects
/// on the application, GetAll on the advertisement) and keep it.
final class BlueZManagerStandIn: Sendable {
    struct Seen: Sendable {
        var application: (owner: String, root: String, objects: [String: [String: [String: DBusValue]]])?
        var advertisement: (owner: String, path: String, properties: [String: DBusValue])?
        var calls: [String] = []
    }

    let bus: PrivateBus
    let daemon: DBusConnection
    let seen = Mutex(Seen())

    private init(bus: PrivateBus, daemon: DBusConnection) {
        self.bus = bus
        self.daemon = daemon
    }

    static func start() async throws -> BlueZManagerStandIn {
        let bus = try await PrivateBus.start(type: "system")
        let daemon = try await DBusConnection.open(.address(bus.address))
        let standIn = BlueZManagerStandIn(bus: bus, daemon: daemon)
        _ = try await daemon.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", arguments: [.string("org.bluez"), .uint32(4)])
        try daemon.export(path: "/") { [weak standIn] call in
            guard let standIn else { throw DBusError("gone") }
            if call.path == "/org/bluez/hci0" { return try await standIn.manager(call) }
            guard call.member == "GetManagedObjects" else { throw DBusError("unknown", name: "org.freedesktop.DBus.Error.UnknownMethod") }
            let adapter: DBusValue = .dictionary(["Address": .string("00:00:00:00:00:01"), "AddressType": .string("public"), "Powered": .boolean(true)])
            return [.dictionary(key: "o", value: "a{sa{sv}}", [
                DBusDictionaryEntry(key: .objectPath("/org/bluez/hci0"), value: .dictionary(key: "s", value: "a{sv}", [
                    DBusDictionaryEntry(key: .string("org.bluez.Adapter1"), value: adapter),
                ])),
            ])]
        }
        return standIn
    }

    private func manager(_ call: DBusMessage) async throws -> [DBusValue] {
        let member = call.member ?? ""
        if member != "StopDiscovery" { seen.withLock { $0.calls.append(member) } }
        let sender = try #require(call.sender)
        switch member {
        case "RegisterApplication":
            let root = try #require(call.body.first?.string)
            let reply = try await daemon.call(
                destination: sender, path: root, interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
            let objects = BlueZObjects(reply.first ?? .dictionary([:])).objects
            seen.withLock { $0.application = (sender, root, objects) }
        case "RegisterAdvertisement":
            let path = try #require(call.body.first?.string)
            let reply = try await daemon.call(
                destination: sender, path: path, interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                arguments: [.string("org.bluez.LEAdvertisement1")])
            seen.withLock { $0.advertisement = (sender, path, (reply.first?.dictionary ?? [:]).mapValues(\.unwrapped)) }
        default:
            break
        }
        return []
    }

    /// The application's object with `interface` whose UUID is `uuid`.
    func object(_ interface: String, uuid: BluetoothUUID) -> (path: String, properties: [String: DBusValue])? {
        let objects = seen.withLock { $0.application?.objects } ?? [:]
        return objects.compactMap { path, interfaces -> (String, [String: DBusValue])? in
            guard let properties = interfaces[interface], properties["UUID"]?.string == uuid.uuidString.lowercased() else { return nil }
            return (path, properties)
        }.first
    }

    func stop() async {
        await daemon.close()
        await bus.stop()
    }
}

/// The bluez scheme under another name, on a private bus (the registry is process-wide).
struct PrivateBlueZScheme: BackendScheme {
    let name: String
    let syntax = "bluez-test"
    let inner: BlueZBackendScheme
    func validate(argument: String?) throws { try inner.validate(argument: argument) }
    func openCentral(argument: String?, configuration: Bluetooth.Configuration) async throws -> any CentralBackend {
        try await inner.openCentral(argument: argument, configuration: configuration)
    }
}

@Suite(.needsLibdbus, .timeLimit(.minutes(1)))
struct BlueZPeripheralUnitTests {
    @Test func flagsCarryPropertiesAndSecurity() {
        typealias App = BlueZGattApplication
        #expect(App.flags(properties: [.read, .notify], permissions: .readable) == ["read", "notify"])
        #expect(App.flags(properties: [.read, .write], permissions: [.readable, .writable, .readEncrypted, .writeEncrypted])
            == ["encrypt-read", "encrypt-write"])
        #expect(App.flags(properties: [.read, .write, .indicate], permissions: [.readable, .writable, .readAuthenticated, .writeAuthenticated])
            == ["encrypt-authenticated-read", "encrypt-authenticated-write", "encrypt-authenticated-indicate"])
        #expect(App.flags(properties: [.writeWithoutResponse], permissions: [.writable, .writeAuthorized]) == ["write-without-response", "authorize"])
        #expect(App.descriptorFlags([.readable, .readEncrypted]) == ["encrypt-read"])
        #expect(App.error(for: .invalidAttributeValueLength).name == "org.bluez.Error.InvalidValueLength")
        #expect(App.error(for: ATTErrorCode(0x08)).name == "org.bluez.Error.NotAuthorized")
        #expect(App.error(for: .writeNotPermitted).name == "org.bluez.Error.NotPermitted")
        #expect(App.error(for: ATTErrorCode(0x80)).name == "org.bluez.Error.Failed")
    }

    @Test func advertisingDataBecomesAnLEAdvertisement() throws {
        let data = AdvertisingData([
            .flags([.leGeneralDiscoverable, .brEdrNotSupported]), .serviceUUIDs([BluetoothUUID(0x180D)], size: .bits16, complete: true),
            .manufacturerSpecificData(companyID: 0x0059, data: [1, 2]),
        ])
        let response = AdvertisingData([.completeLocalName("BZ-HRM"), .serviceData(BluetoothUUID(0x180F), size: .bits16, data: [0x64])])
        let advertisement = BlueZAdvertisement(data, scanResponse: response, intervalMilliseconds: 5)
        let properties = advertisement.properties
        #expect(properties["Type"]?.string == "peripheral")
        #expect(properties["LocalName"]?.string == "BZ-HRM")
        #expect(properties["ServiceUUIDs"]?.strings == ["0000180d-0000-1000-8000-00805f9b34fb"])
        #expect(properties["ManufacturerData"]?.integerKeyedDictionary?[0x0059]?.bytes == [1, 2])
        #expect(properties["ServiceData"]?.dictionary?["0000180f-0000-1000-8000-00805f9b34fb"]?.bytes == [0x64])
        #expect(properties["MinInterval"]?.integer == 20, "clamped to 20 ms")
    }

    @Test func theDSLIsServedAsAGattApplicationThatAnswersLikeTheOwnHost() async throws {
        let standIn = try await BlueZManagerStandIn.start()
        let name = "bluez-test-\(UUID().uuidString.prefix(8).lowercased())"
        try TransportRegistry.register(PrivateBlueZScheme(name: name, inner: BlueZBackendScheme(bus: .address(standIn.bus.address))))
        let bluetooth: Bluetooth
        do { bluetooth = try await Bluetooth.open(transport: name) } catch {
            await standIn.stop()
            throw error
        }
        let daemon = standIn.daemon
        do {
            let service = BlueZTreeService()
            let connections = bluetooth.peripheral.connections
            let writes = service.$target.writes
            let subscriptions = service.$level.subscriptions
            try await bluetooth.peripheral.add(service)
            try await bluetooth.peripheral.startAdvertising(name: "BZ-Test", serviceUUIDs: [BlueZTreeService.uuid], manufacturerData: [0x0059: [9]])

            // The object tree as bluetoothd reads it.
            let app = try #require(standIn.seen.withLock { $0.application })
            let serviceObject = try #require(standIn.object(BlueZ.serviceInterface, uuid: BlueZTreeService.uuid), "\(app.objects)")
            #expect(serviceObject.properties["Primary"]?.bool == true)
            let level = try #require(standIn.object(BlueZ.characteristicInterface, uuid: BlueZTreeService.levelUUID))
            #expect(level.properties["Flags"]?.strings == ["read", "notify"])
            #expect(level.properties["Service"]?.string == serviceObject.path)
            let target = try #require(standIn.object(BlueZ.characteristicInterface, uuid: BlueZTreeService.targetUUID))
            #expect(target.properties["Flags"]?.strings == ["encrypt-read", "encrypt-write"])
            let description = try #require(standIn.object(BlueZ.descriptorInterface, uuid: BluetoothUUID(0x2901)))
            #expect(description.properties["Characteristic"]?.string == level.path)
            #expect(standIn.object(BlueZ.descriptorInterface, uuid: BluetoothUUID(0x2902)) == nil, "BlueZ adds the CCCD itself")
            let advertisement = try #require(standIn.seen.withLock { $0.advertisement })
            #expect(advertisement.properties["LocalName"]?.string == "BZ-Test")
            #expect(advertisement.properties["ServiceUUIDs"]?.strings == [BlueZTreeService.uuid.uuidString.lowercased()])
            #expect(advertisement.properties["ManufacturerData"]?.integerKeyedDictionary?[0x0059]?.bytes == [9])

            // A central connects (bluetoothd's Device1), reads, writes, subscribes.
            let device = "/org/bluez/hci0/dev_C1_B1_7E_00_04_00"
            try daemon.emit(path: device, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", arguments: [
                .string(BlueZ.deviceInterface),
                .dictionary(["Connected": .boolean(true), "Address": .string("C1:B1:7E:00:04:00"), "AddressType": .string("random")]),
                .strings([]),
            ])
            let central = try #require(await connections.first { _ in true })
            #expect(central.address == (try BluetoothAddress("C1:B1:7E:00:04:00/R")))
            let options: DBusValue = .dictionary(["device": .objectPath(device), "mtu": .uint16(185)])
            func call(_ path: String, _ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
                try await daemon.call(
                    destination: app.owner, path: path, interface: BlueZ.characteristicInterface, member: member, arguments: arguments)
            }
            #expect(try await call(level.path, "ReadValue", [options]).first?.bytes == [7])
            #expect(await central.mtu() == 185)
            let described = try await daemon.call(
                destination: app.owner, path: description.path, interface: BlueZ.descriptorInterface, member: "ReadValue", arguments: [options])
            #expect(described.first?.bytes == Array("level".utf8))

            // Validation errors of the DSL as BlueZ errors: a short value, the app's refusal.
            await #expect { _ = try await call(target.path, "WriteValue", [.bytes([1]), options]) } throws: {
                ($0 as? DBusError)?.name == "org.bluez.Error.InvalidValueLength"
            }
            await #expect { _ = try await call(target.path, "WriteValue", [.bytes([0xFF, 0xFF]), options]) } throws: {
                ($0 as? DBusError)?.name == "org.bluez.Error.Failed"
            }
            _ = try await call(target.path, "WriteValue", [.bytes([0x34, 0x12]), options])
            let written = try #require(await writes.first { _ in true })
            #expect(written.value == 0x1234 && written.central == central)
            #expect(service.target == 0x1234)
            #expect(try await call(target.path, "ReadValue", [options]).first?.bytes == [0x34, 0x12])

            // Notify-on-set: StartNotify, then an assignment is a PropertiesChanged of Value.
            let values = try await daemon.signals(.propertiesChanged(interface: BlueZ.characteristicInterface, pathNamespace: level.path))
            _ = try await call(level.path, "StartNotify", [])
            let subscribed = try #require(await subscriptions.first { _ in true })
            #expect(subscribed.isSubscribed && subscribed.central == central)
            service.level = 42
            var sent: [UInt8]?
            for await signal in values {
                if let value = signal.body.dropFirst().first?.dictionary?["Value"]?.bytes { sent = value; break }
            }
            #expect(sent == [42])
            _ = try await call(level.path, "StopNotify", [])
        } catch {
            await bluetooth.close()
            await standIn.stop()
            throw error
        }
        await bluetooth.close()
        let calls = standIn.seen.withLock { $0.calls }
        await standIn.stop()
        #expect(calls == ["RegisterApplication", "RegisterAdvertisement", "UnregisterAdvertisement", "UnregisterApplication"], "\(calls)")
    }
}
