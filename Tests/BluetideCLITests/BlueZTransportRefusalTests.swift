import BluetideDBus
import BluetideTestSupport
import Foundation
import Testing

/// A stand-in bluetoothd: `org.bluez` on a private system bus serving one adapter through
/// ObjectManager (enough for the bluez transport to open, or to refuse).
struct StandInBluetoothd {
    let bus: PrivateBus
    let connection: DBusConnection?

    /// `owned`: whether something owns org.bluez (false: bluetoothd "not running").
    static func start(powered: Bool, owned: Bool = true) async throws -> StandInBluetoothd {
        let bus = try await PrivateBus.start(type: "system")
        guard owned else { return StandInBluetoothd(bus: bus, connection: nil) }
        let connection = try await DBusConnection.open(.address(bus.address))
        do {
            _ = try await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "RequestName", arguments: [.string("org.bluez"), .uint32(4)])
            try connection.export(path: "/") { call in
                guard call.member == "GetManagedObjects" else { throw DBusError("unknown method", name: "org.freedesktop.DBus.Error.UnknownMethod") }
                let adapter: DBusValue = .dictionary([
                    "Address": .string("00:00:00:00:00:01"), "AddressType": .string("public"), "Powered": .boolean(powered),
                ])
                return [.dictionary(key: "o", value: "a{sa{sv}}", [
                    DBusDictionaryEntry(key: .objectPath("/org/bluez/hci0"), value: .dictionary(key: "s", value: "a{sv}", [
                        DBusDictionaryEntry(key: .string("org.bluez.Adapter1"), value: adapter),
                    ])),
                ])]
            }
        } catch {
            await connection.close()
            await bus.stop()
            throw error
        }
        return StandInBluetoothd(bus: bus, connection: connection)
    }

    var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": bus.address] }

    func stop() async {
        await connection?.close()
        await bus.stop()
    }
}

/// What the bluez transport refuses, each in one line that says what to do instead.
@Suite(.timeLimit(.minutes(2)),
       .enabled(if: OptionalTool.isCI || (DBusConnection.libraryProblem == nil && OptionalTool.executable("dbus-daemon") != nil),
                "libdbus-1 or dbus-daemon is missing (apt-get install libdbus-1-3 dbus-daemon): skipped outside CI"))
struct BlueZTransportRefusalTests {
    @Test func anUnpoweredOrUnknownAdapterIsRefusedSayingWhatToDo() async throws {
        let bluetoothd = try await StandInBluetoothd.start(powered: false)
        let unpowered = try await BluetideExecutable.run(["scan", "--transport", "bluez", "--scan-time", "1"], environment: bluetoothd.environment)
        let unknown = try await BluetideExecutable.run(["scan", "--transport", "bluez:hci7", "--scan-time", "1"], environment: bluetoothd.environment)
        let badSpec = try await BluetideExecutable.run(["scan", "--transport", "bluez:usb0", "--scan-time", "1"], environment: bluetoothd.environment)
        let capture = try await BluetideExecutable.run(
            ["read", "Nobody", "2A19", "--transport", "bluez+snoop:/tmp/bluetide-never.btsnoop"], environment: bluetoothd.environment)
        await bluetoothd.stop()
        #expect(unpowered.status == 1)
        #expect(unpowered.stderr.count == 1 && unpowered.stderr[0].contains("hci0 is not powered: bluetoothctl power on"), "\(unpowered.stderr)")
        #expect(unknown.status == 1)
        #expect(unknown.stderr.count == 1 && unknown.stderr[0].contains("bluetoothd has no adapter hci7 (it has hci0)"), "\(unknown.stderr)")
        #expect(badSpec.status == 2)
        #expect(badSpec.stderr.count == 1 && badSpec.stderr[0].contains("expected an adapter name such as hci0"), "\(badSpec.stderr)")
        #expect(capture.status == 1)
        #expect(capture.stderr.count == 1 && capture.stderr[0].contains("btmon"), "\(capture.stderr)")
    }

    @Test func aBluetoothdThatRefusesTheGATTServicesIsReportedInOneLine() async throws {
        // The stand-in has no GattManager1: RegisterApplication fails as on a bluetoothd without it.
        let bluetoothd = try await StandInBluetoothd.start(powered: true)
        let emulate = try await BluetideExecutable.run(
            ["emulate", "heart-rate", "--transport", "bluez", "--duration", "1"], environment: bluetoothd.environment)
        await bluetoothd.stop()
        #expect(emulate.status == 1)
        #expect(emulate.stderr.contains { $0.contains("bluetoothd refused the GATT services (GattManager1.RegisterApplication on hci0)") },
                "\(emulate.stderr)")
    }

    @Test func anEmulatedDeviceCannotChooseItsAddressOnBlueZ() async throws {
        let bluetoothd = try await StandInBluetoothd.start(powered: true)
        let emulate = try await BluetideExecutable.run(
            ["emulate", "heart-rate", "--transport", "bluez", "--address", "C6:C5:C4:C3:C2:C1", "--duration", "1"],
            environment: bluetoothd.environment)
        await bluetoothd.stop()
        #expect(emulate.status == 2)
        #expect(emulate.stderr.count == 1 && emulate.stderr[0].contains("--address: on bluez the system's stack advertises from its adapter's own address"),
                "\(emulate.stderr)")
    }

    @Test func withoutBluetoothdTheTransportSaysHowToStartIt() async throws {
        let bus = try await StandInBluetoothd.start(powered: true, owned: false)
        let run = try await BluetideExecutable.run(["scan", "--transport", "bluez", "--scan-time", "1"], environment: bus.environment)
        await bus.stop()
        #expect(run.status == 1)
        #expect(run.stderr.count == 1 && run.stderr[0].contains("bluetoothd is not running: start it (sudo systemctl start bluetooth)"), "\(run.stderr)")
    }
}
