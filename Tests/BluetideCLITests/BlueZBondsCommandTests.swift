import BluetideDBus
import BluetideTestSupport
import Foundation
import Synchronization
import Testing

/// `bluetide bonds list|remove --transport bluez` against a stand-in bluetoothd on a private
/// system bus: one adapter with a bonded device, a paired-only one and one never paired;
/// `Adapter1.RemoveDevice` forgets a device.
@Suite(.timeLimit(.minutes(2)),
       .enabled(if: OptionalTool.isCI || (DBusConnection.libraryProblem == nil && OptionalTool.executable("dbus-daemon") != nil),
                "libdbus-1 or dbus-daemon is missing (apt-get install libdbus-1-3 dbus-daemon): skipped outside CI"))
struct BlueZBondsCommandTests {
    static let bonded = "/org/bluez/hci0/dev_C1_B1_7E_00_09_01"
    static let pairedOnly = "/org/bluez/hci0/dev_00_11_22_33_44_55"
    static let stranger = "/org/bluez/hci0/dev_C1_B1_7E_00_09_03"

    /// The stand-in: its devices, and the RemoveDevice calls it got.
    final class Bluetoothd: Sendable {
        let bus: PrivateBus
        let connection: DBusConnection
        let devices: Mutex<[String: [String: DBusValue]]>
        let removed = Mutex<[String]>([])

        init(bus: PrivateBus, connection: DBusConnection) {
            self.bus = bus
            self.connection = connection
            devices = Mutex([
                BlueZBondsCommandTests.bonded: [
                    "Address": .string("C1:B1:7E:00:09:01"), "AddressType": .string("random"), "Alias": .string("Strap"),
                    "Paired": .boolean(true), "Bonded": .boolean(true), "Trusted": .boolean(false), "Connected": .boolean(false),
                ],
                BlueZBondsCommandTests.pairedOnly: [
                    "Address": .string("00:11:22:33:44:55"), "AddressType": .string("public"),
                    "Paired": .boolean(true), "Bonded": .boolean(false), "Connected": .boolean(true),
                ],
                BlueZBondsCommandTests.stranger: [
                    "Address": .string("C1:B1:7E:00:09:03"), "AddressType": .string("random"), "Paired": .boolean(false),
                ],
            ])
        }

        static func start() async throws -> Bluetoothd {
            let bus = try await PrivateBus.start(type: "system")
            let connection = try await DBusConnection.open(.address(bus.address))
            let stand = Bluetoothd(bus: bus, connection: connection)
            _ = try await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "RequestName", arguments: [.string("org.bluez"), .uint32(4)])
            try connection.export(path: "/") { call in try stand.answer(call) }
            return stand
        }

        func answer(_ call: DBusMessage) throws -> [DBusValue] {
            switch (call.path, call.member) {
            case ("/", "GetManagedObjects"):
                var entries = [DBusDictionaryEntry(key: .objectPath("/org/bluez/hci0"), value: .dictionary(key: "s", value: "a{sv}", [
                    DBusDictionaryEntry(key: .string("org.bluez.Adapter1"), value: .dictionary([
                        "Address": .string("00:00:00:00:00:01"), "AddressType": .string("public"), "Powered": .boolean(true),
                    ])),
                ]))]
                for (path, properties) in devices.withLock({ $0 }) {
                    entries.append(DBusDictionaryEntry(key: .objectPath(path), value: .dictionary(key: "s", value: "a{sv}", [
                        DBusDictionaryEntry(key: .string("org.bluez.Device1"), value: .dictionary(properties)),
                    ])))
                }
                return [.dictionary(key: "o", value: "a{sa{sv}}", entries)]
            case ("/org/bluez/hci0", "RemoveDevice"):
                let path = call.body.first?.string ?? ""
                removed.withLock { $0.append(path) }
                guard devices.withLock({ $0.removeValue(forKey: path) }) != nil else {
                    throw DBusError("Does Not Exist", name: "org.bluez.Error.DoesNotExist")
                }
                return []
            default:
                throw DBusError("unknown method", name: "org.freedesktop.DBus.Error.UnknownMethod")
            }
        }

        var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": bus.address] }

        func stop() async {
            await connection.close()
            await bus.stop()
        }
    }

    @Test func bluetoothdsBondsAreListedAndRemoved() async throws {
        let bluetoothd = try await Bluetoothd.start()
        let list = try await BluetideExecutable.run(["bonds", "list", "--transport", "bluez", "--json"], environment: bluetoothd.environment)
        let text = try await BluetideExecutable.run(["bonds", "list", "--transport", "bluez:hci0"], environment: bluetoothd.environment)
        let remove = try await BluetideExecutable.run(
            ["bonds", "remove", "C1:B1:7E:00:09:01/R", "--transport", "bluez"], environment: bluetoothd.environment)
        let again = try await BluetideExecutable.run(
            ["bonds", "remove", "C1:B1:7E:00:09:01/R", "--transport", "bluez"], environment: bluetoothd.environment)
        let stranger = try await BluetideExecutable.run(
            ["bonds", "remove", "C1:B1:7E:00:09:03/R", "--transport", "bluez"], environment: bluetoothd.environment)
        let after = try await BluetideExecutable.run(["bonds", "list", "--transport", "bluez", "--json"], environment: bluetoothd.environment)
        let removed = bluetoothd.removed.withLock { $0 }
        await bluetoothd.stop()

        #expect(list.status == 0, "\(list.stderr)")
        let records = list.stdout.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        #expect(records.count == 2, "\(list.stdout)")
        let strap = records.first { ($0["device"] as? [String: Any])?["address"] as? String == "C1:B1:7E:00:09:01/R" }
        #expect(strap?["type"] as? String == "bond" && strap?["bonded"] as? Bool == true && strap?["paired"] as? Bool == true, "\(records)")
        #expect((strap?["device"] as? [String: Any])?["name"] as? String == "Strap")
        // No key store to read here (not bluetoothd's machine): no level is claimed.
        #expect(strap?["securityLevel"] == nil)
        let publicDevice = records.first { ($0["device"] as? [String: Any])?["address"] as? String == "00:11:22:33:44:55" }
        #expect(publicDevice?["bonded"] as? Bool == false && publicDevice?["connected"] as? Bool == true, "\(records)")
        #expect(text.stdout.contains { $0.hasPrefix("C1:B1:7E:00:09:01/R (Strap): bonded") }, "\(text.stdout)")

        #expect(remove.status == 0 && remove.stdout.contains { $0.contains("removed C1:B1:7E:00:09:01/R from bluetoothd on hci0") }, "\(remove.stdout) \(remove.stderr)")
        #expect(removed == [Self.bonded])
        #expect(again.status == 1 && again.stderr.count == 1 && again.stderr[0].contains("has no bond with C1:B1:7E:00:09:01/R"), "\(again.stderr)")
        // Known to bluetoothd but never paired: not a bond, nothing removed.
        #expect(stranger.status == 1, "\(stranger.stderr)")
        #expect(after.stdout.count == 1, "\(after.stdout)")
    }

    @Test func otherTransportsAndABondFileAreRefusedAsUsage() async throws {
        let own = try await BluetideExecutable.run(["bonds", "list", "--transport", "hci-socket:0"])
        let both = try await BluetideExecutable.run(["bonds", "list", "--transport", "bluez", "--bonds-file", "/tmp/x.json"])
        let badAdapter = try await BluetideExecutable.run(["bonds", "remove", "C1:B1:7E:00:09:01/R", "--transport", "bluez:usb0"])
        #expect(own.status == 2 && own.stderr.count == 1 && own.stderr[0].contains("are in the bond file; drop --transport"), "\(own.stderr)")
        #expect(both.status == 2 && both.stderr.count == 1 && both.stderr[0].contains("bluetoothd keeps its own bonds"), "\(both.stderr)")
        #expect(badAdapter.status == 2 && badAdapter.stderr[0].contains("expected bluez or bluez:hciN"), "\(badAdapter.stderr)")
    }
}
