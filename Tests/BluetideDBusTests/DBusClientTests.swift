import BluetideBlueZ
import BluetideDBus
import BluetideTestSupport
import Foundation
import Testing

extension Trait where Self == ConditionTrait {
    /// libdbus-1 loads and dbus-daemon is installed (or CI, where their absence fails the test).
    static var needsLibdbus: Self {
        .enabled(
            if: OptionalTool.isCI || (DBusConnection.libraryProblem == nil && OptionalTool.executable("dbus-daemon") != nil),
            "\(DBusConnection.libraryProblem ?? "dbus-daemon is not installed (apt-get install dbus-daemon)"): skipped outside CI")
    }
}

@Suite struct DBusValueTests {
    @Test func signaturesOfNestedValues() {
        #expect(DBusValue.bytes([1, 2]).signature == "ay")
        #expect(DBusValue.dictionary(["a": .string("x")]).signature == "a{sv}")
        #expect(DBusValue.structure([.objectPath("/a"), .uint16(1)]).signature == "(oq)")
        #expect(DBusValue.array(element: "a{sv}", []).signature == "aa{sv}")
    }

    @Test func accessorsLookThroughVariants() {
        let value = DBusValue.variant(.variant(.int16(-60)))
        #expect(value.integer == -60)
        #expect(DBusValue.variant(.bytes([0xAB])).bytes == [0xAB])
        let dictionary = DBusValue.dictionary(["Name": .string("HRM"), "RSSI": .int16(-50)]).dictionary
        #expect(dictionary?["Name"]?.string == "HRM")
        #expect(dictionary?["RSSI"]?.integer == -50)
        #expect(DBusValue.string("x").integer == nil)
    }
}

@Suite(.needsLibdbus, .timeLimit(.minutes(1)))
struct DBusClientTests {
    static let complex: [DBusValue] = [
        .byte(0xFE), .boolean(true), .int16(-2), .uint16(65535), .int32(-100_000), .uint32(4_000_000_000),
        .int64(-1 << 40), .uint64(1 << 63), .double(2.5), .string("héllo"), .objectPath("/org/bluez/hci0"), .signature("a{sv}"),
        .bytes([0, 1, 255]), .strings([]),
        .dictionary(["Transport": .string("le"), "UUIDs": .strings(["180d"]), "RSSI": .int16(-80), "Nested": .dictionary(["k": .bytes([7])])]),
        .dictionary(key: "q", value: "v", [DBusDictionaryEntry(key: .uint16(0x004C), value: .variant(.bytes([1, 2])))]),
        .structure([.string("a"), .array(element: "(ii)", [.structure([.int32(1), .int32(2)])])]),
        .variant(.variant(.uint32(3))),
    ]

    @Test func valuesSurviveARoundTripThroughTheBus() async throws {
        let bus = try await PrivateBus.start()
        let server = try await DBusConnection.open(.address(bus.address))
        let client = try await DBusConnection.open(.address(bus.address))
        try server.export(path: "/test/echo") { call in
            #expect(call.member == "Echo" && call.interface == "org.bluetide.Test")
            return call.body
        }
        let reply = try await client.call(
            destination: server.uniqueName, path: "/test/echo/child", interface: "org.bluetide.Test", member: "Echo",
            arguments: Self.complex, timeout: .seconds(10))
        #expect(reply == Self.complex)
        await client.close()
        await server.close()
        await bus.stop()
    }

    @Test func errorRepliesKeepTheirNameAndUnansweredCallsTimeOut() async throws {
        let bus = try await PrivateBus.start()
        let server = try await DBusConnection.open(.address(bus.address))
        let client = try await DBusConnection.open(.address(bus.address))
        try server.export(path: "/refuse") { _ in throw DBusError("not now", name: "org.bluez.Error.NotReady") }
        try server.export(path: "/silent") { _ in
            // Never answers within the caller's limit (ends when the server closes).
            try await Task.sleep(for: .seconds(600))
            return []
        }
        do {
            _ = try await client.call(destination: server.uniqueName, path: "/refuse", interface: "org.bluetide.Test", member: "Go")
            Issue.record("an error reply was taken for an answer")
        } catch let error as DBusError {
            #expect(error.name == "org.bluez.Error.NotReady")
            #expect(error.message.contains("not now"))
        }
        let started = ContinuousClock.now
        do {
            _ = try await client.call(
                destination: server.uniqueName, path: "/silent", interface: "org.bluetide.Test", member: "Go", timeout: .milliseconds(300))
            Issue.record("a call without an answer returned")
        } catch let error as DBusError {
            #expect(error.isTimeout, "\(error)")
        }
        #expect(ContinuousClock.now - started < .seconds(20))
        // Unknown objects get the bus's own error, not a hang.
        await #expect(throws: DBusError.self) {
            _ = try await client.call(destination: "org.bluetide.Nobody", path: "/x", interface: "org.bluetide.Test", member: "Go")
        }
        await client.close()
        await server.close()
        await bus.stop()
    }

    @Test func badNamesAndValuesAreThrownNotFatal() async throws {
        let bus = try await PrivateBus.start()
        let client = try await DBusConnection.open(.address(bus.address))
        for (path, value) in [("/a/", DBusValue.byte(1)), ("/a", .array(element: "y", [.string("no")])), ("/a", .objectPath("bad")),
                              ("/a", .string("nul\0inside")), ("/a", .signature("a{vs}"))] {
            await #expect(throws: DBusError.self) {
                _ = try await client.call(destination: "org.freedesktop.DBus", path: path, interface: "org.freedesktop.DBus", member: "Ping", arguments: [value])
            }
        }
        await #expect(throws: DBusError.self) { _ = try await client.signals(DBusMatchRule(member: "no-dash")) }
        await client.close()
        await bus.stop()
    }

    @Test func signalsArriveForTheMatchingRuleOnly() async throws {
        let bus = try await PrivateBus.start()
        let sender = try await DBusConnection.open(.address(bus.address))
        let receiver = try await DBusConnection.open(.address(bus.address))
        let changes = try await receiver.signals(.propertiesChanged(interface: "org.bluez.Device1", pathNamespace: "/org/bluez/hci0"))
        let properties = "org.freedesktop.DBus.Properties"
        // Another interface, another path, then the one that matches.
        try sender.emit(path: "/org/bluez/hci0/dev_1", interface: properties, member: "PropertiesChanged",
                        arguments: [.string("org.bluez.Adapter1"), .dictionary(["Powered": .boolean(true)]), .strings([])])
        try sender.emit(path: "/org/bluez/hci1/dev_1", interface: properties, member: "PropertiesChanged",
                        arguments: [.string("org.bluez.Device1"), .dictionary(["RSSI": .int16(-1)]), .strings([])])
        try sender.emit(path: "/org/bluez/hci0/dev_2", interface: properties, member: "PropertiesChanged",
                        arguments: [.string("org.bluez.Device1"), .dictionary(["RSSI": .int16(-42)]), .strings([])])
        var iterator = changes.makeAsyncIterator()
        let first = try #require(await iterator.next())
        #expect(first.path == "/org/bluez/hci0/dev_2")
        #expect(first.sender == sender.uniqueName)
        #expect(first.body[1].dictionary?["RSSI"]?.integer == -42)
        await sender.close()
        await receiver.close()
        // The stream ends with the connection.
        #expect(await iterator.next() == nil)
        await bus.stop()
    }

    @Test func theBusGoingAwayEndsStreamsAndCalls() async throws {
        let bus = try await PrivateBus.start()
        let connection = try await DBusConnection.open(.address(bus.address))
        let signals = try await connection.signals(DBusMatchRule(interface: "org.bluetide.Test"))
        await bus.stop()
        for await _ in signals {}
        await connection.waitUntilClosed()
        #expect(connection.closeReason == "the D-Bus bus closed the connection")
        await #expect(throws: DBusError.self) {
            _ = try await connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId")
        }
        await connection.close()
    }

    @Test func cancellingACallAbandonsIt() async throws {
        let bus = try await PrivateBus.start()
        let server = try await DBusConnection.open(.address(bus.address))
        let client = try await DBusConnection.open(.address(bus.address))
        let (entered, enter) = AsyncStream.makeStream(of: Void.self)
        try server.export(path: "/slow") { _ in
            enter.yield()
            try await Task.sleep(for: .seconds(600))
            return []
        }
        let call = Task {
            try await client.call(destination: server.uniqueName, path: "/slow", interface: "org.bluetide.Test", member: "Go", timeout: .seconds(600))
        }
        for await _ in entered { break }
        call.cancel()
        await #expect(throws: CancellationError.self) { _ = try await call.value }
        // The connection still works.
        let id = try await client.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId")
        #expect(id.first?.string?.count == 32)
        await client.close()
        await server.close()
        await bus.stop()
    }
}

@Suite struct BlueZObjectTests {
    @Test func adaptersComeFromManagedObjectsInIndexOrder() {
        let adapter = { (address: String, powered: Bool) -> DBusValue in
            .dictionary([
                "Address": .string(address), "AddressType": .string("public"), "Powered": .boolean(powered),
                "Modalias": .string("usb:v1D6Bp0246d0542"),
            ])
        }
        let objects: DBusValue = .dictionary(key: "o", value: "a{sa{sv}}", [
            DBusDictionaryEntry(key: .objectPath("/org/bluez/hci1"), value: .dictionary(key: "s", value: "a{sv}", [
                DBusDictionaryEntry(key: .string("org.bluez.Adapter1"), value: adapter("00:00:00:00:00:02", false)),
            ])),
            DBusDictionaryEntry(key: .objectPath("/org/bluez/hci0"), value: .dictionary(key: "s", value: "a{sv}", [
                DBusDictionaryEntry(key: .string("org.bluez.Adapter1"), value: adapter("00:00:00:00:00:01", true)),
            ])),
            DBusDictionaryEntry(key: .objectPath("/org/bluez/hci0/dev_C0_00_00_00_00_01"), value: .dictionary(key: "s", value: "a{sv}", [
                DBusDictionaryEntry(key: .string("org.bluez.Device1"), value: .dictionary(["Name": .string("HRM")])),
            ])),
        ])
        let adapters = BlueZObjects(objects).adapters
        #expect(adapters.map(\.name) == ["hci0", "hci1"])
        #expect(adapters.map(\.index) == [0, 1])
        #expect(adapters[0].powered && !adapters[1].powered)
        #expect(adapters[0].address == "00:00:00:00:00:01")
        #expect(adapters[0].bluezVersion == "5.66")
        #expect(BlueZAdapter(path: "/org/bluez/hci2", properties: ["Modalias": .string("usb:v05ACp8290d0100")]).bluezVersion == nil)
    }
}
