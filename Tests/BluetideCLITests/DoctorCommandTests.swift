@testable import BluetideCommands
import BluetideDBus
import BluetideTestSupport
import Foundation
import Testing

/// `bluetide doctor`'s advice as a pure function of a machine's facts.
@Suite struct DoctorAdviceTests {
    typealias Adapter = DoctorFacts.Adapter

    static func machine(
        _ adapters: [Adapter], bluetoothd: Bool? = true, busProblem: String? = nil, libdbusProblem: String? = nil,
        root: Bool = false, netAdmin: Bool = false
    ) -> DoctorFacts {
        DoctorFacts(
            kernelBluetooth: true, adapters: adapters, libdbusProblem: libdbusProblem, libdbusVersion: "1.14.10",
            systemBusProblem: busProblem, bluetoothdRunning: bluetoothd, bluezVersion: "5.66", isRoot: root, hasNetAdmin: netAdmin)
    }

    static let systemAdapter = Adapter(index: 0, address: "00:11:22:33:44:55", up: true, powered: true, softBlocked: false, hardBlocked: false, managedByBluetoothd: true)

    @Test func oneAdapterHeldByBluetoothdIsSharedThroughBlueZ() {
        let report = DoctorAdvice.advise(Self.machine([Self.systemAdapter]))
        #expect(report.holders[0] == .bluetoothd)
        #expect(report.recommendation.transport == "bluez:hci0")
        #expect(report.recommendation.command == "bluetide scan --transport bluez:hci0")
        #expect(report.recommendation.before.isEmpty)
        #expect(report.notes.contains { $0.contains("setcap cap_net_admin") })
    }

    @Test func aPoweredOffSoftBlockedSystemAdapterIsUnblockedAndPoweredFirst() {
        var adapter = Self.systemAdapter
        adapter.up = false
        adapter.powered = false
        adapter.softBlocked = true
        let report = DoctorAdvice.advise(Self.machine([adapter]))
        #expect(report.recommendation.transport == "bluez:hci0")
        #expect(report.recommendation.before == ["rfkill unblock bluetooth", "bluetoothctl power on"])
    }

    @Test func twoAdaptersKeepOneForTheSystemAndGiveTheOtherToBluetide() {
        let second = Adapter(index: 1, address: "00:11:22:33:44:66", up: true, powered: true, managedByBluetoothd: true)
        let report = DoctorAdvice.advise(Self.machine([Self.systemAdapter, second]))
        #expect(report.recommendation.summary == "keep hci0 for the system, give hci1 to Bluetide")
        #expect(report.recommendation.before == ["sudo btmgmt --index 1 power off"])
        #expect(report.recommendation.command == "sudo bluetide scan --transport hci-socket:1")
        // Root needs no sudo; a second adapter nobody holds needs no power-off.
        let free = Adapter(index: 1, up: false)
        let asRoot = DoctorAdvice.advise(Self.machine([Self.systemAdapter, free], root: true))
        #expect(asRoot.holders[1] == .nobody)
        #expect(asRoot.recommendation.before.isEmpty)
        #expect(asRoot.recommendation.command == "bluetide scan --transport hci-socket:1")
        #expect(!asRoot.notes.contains { $0.contains("setcap") })
    }

    @Test func anAdapterNobodyHoldsGoesToTheOwnStack() {
        let report = DoctorAdvice.advise(Self.machine([Adapter(index: 0, up: false)], bluetoothd: false, netAdmin: true))
        #expect(report.holders[0] == .nobody)
        #expect(report.recommendation.transport == "hci-socket:0")
        #expect(report.recommendation.command == "bluetide scan --transport hci-socket:0")
        #expect(report.notes.contains { $0.contains("bluetoothd is not running") })
    }

    @Test func withoutTheBusTheSystemAdapterMustBeTakenFromBluetoothd() {
        let report = DoctorAdvice.advise(Self.machine(
            [Self.systemAdapter], bluetoothd: nil,
            libdbusProblem: "the BlueZ backend needs libdbus-1, which is not installed: install the Debian package libdbus-1-3 (apt-get install libdbus-1-3)"))
        #expect(report.recommendation.transport == "hci-socket:0")
        #expect(report.recommendation.before == ["sudo systemctl stop bluetooth"])
        #expect(report.notes.contains { $0.contains("libdbus-1-3") })
        #expect(report.recommendation.reason.contains("libdbus-1-3"))
    }

    @Test func anAdapterUpInAnotherProgramsHandsIsBusy() {
        let report = DoctorAdvice.advise(Self.machine([Adapter(index: 0, up: true)], bluetoothd: true))
        #expect(report.holders[0] == .userChannel)
        #expect(report.recommendation.summary == "hci0 is busy")
    }

    @Test func noAdapterMeansTheVirtualController() {
        var facts = Self.machine([])
        facts.kernelBluetooth = false
        let report = DoctorAdvice.advise(facts)
        #expect(report.recommendation.transport == "virtual")
        #expect(report.recommendation.command == "bluetide demo")
        #expect(report.recommendation.reason.contains("no /sys/class/bluetooth"))
    }

    @Test func aHardBlockedAdapterIsNotRecommended() {
        let blocked = Adapter(index: 0, up: false, softBlocked: false, hardBlocked: true)
        let free = Adapter(index: 1, up: false, softBlocked: false, hardBlocked: false)
        let report = DoctorAdvice.advise(Self.machine([blocked, free], bluetoothd: false, root: true))
        #expect(report.recommendation.transport == "hci-socket:1")
        #expect(report.notes.contains { $0.contains("hci0 is blocked by a hardware switch") })
    }

    @Test func theProbeReadsRfkillFromSysfs() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("doctor-sysfs-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        for (entry, type, name, soft, hard) in [("rfkill0", "wlan", "phy0", "0", "0"), ("rfkill1", "bluetooth", "hci0", "1", "0")] {
            let folder = root.appendingPathComponent("rfkill/\(entry)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (file, text) in [("type", type), ("name", name), ("soft", soft), ("hard", hard)] {
                try "\(text)\n".write(to: folder.appendingPathComponent(file), atomically: true, encoding: .utf8)
            }
        }
        let states = DoctorProbe.rfkillStates(sysfs: root.path)
        #expect(states.count == 1)
        #expect(states["hci0"]?.soft == true && states["hci0"]?.hard == false)
    }
}

/// `bluetide doctor` as a user runs it.
@Suite(.timeLimit(.minutes(2))) struct DoctorCommandTests {
    @Test(.needsPythonModule("jsonschema", install: "pip install -r Interop/requirements.txt"))
    func jsonFollowsTheSchemaAndEndsWithARecommendation() async throws {
        let run = try await BluetideExecutable.run(["doctor", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.last?.contains("\"type\":\"recommendation\"") == true)
        #expect(run.stdout.contains { $0.contains("\"type\":\"system\"") })
        try await JSONOutputSchemaTests.expectValid(run.stdout.map { "doctor\t\($0)" })
    }

    @Test func withoutLibdbusTheDoctorNamesThePackage() async throws {
        let run = try await BluetideExecutable.run(["doctor"], environment: ["BLUETIDE_LIBDBUS": "/nonexistent/libdbus-1.so.3"])
        #expect(run.status == 0)
        #expect(run.stdout.contains(
            "  D-Bus: the BlueZ backend needs libdbus-1, which is not installed: install the Debian package libdbus-1-3 (apt-get install libdbus-1-3)"))
        #expect(run.stdout.contains { $0.hasPrefix("recommendation: ") })
    }
}

/// `bluetide doctor` against a stand-in bluetoothd: `org.bluez` on a private system bus, serving
/// one powered-off adapter through ObjectManager.
@Suite(.timeLimit(.minutes(2))) struct DoctorWithBluetoothdTests {
    @Test(.enabled(if: OptionalTool.isCI || (DBusConnection.libraryProblem == nil && OptionalTool.executable("dbus-daemon") != nil),
                   "libdbus-1 or dbus-daemon is missing (apt-get install libdbus-1-3 dbus-daemon): skipped outside CI"))
    func theDoctorSeesBluetoothdItsVersionAndItsPoweredOffAdapter() async throws {
        let bus = try await PrivateBus.start(type: "system")
        let bluez = try await DBusConnection.open(.address(bus.address))
        do {
            let owner = try await bluez.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "RequestName", arguments: [.string("org.bluez"), .uint32(4)])
            #expect(owner.first == .uint32(1))
            try bluez.export(path: "/") { call in
                guard call.member == "GetManagedObjects" else { throw DBusError("unknown method", name: "org.freedesktop.DBus.Error.UnknownMethod") }
                let adapter: DBusValue = .dictionary([
                    "Address": .string("00:00:00:00:00:01"), "AddressType": .string("public"), "Powered": .boolean(false),
                    "Modalias": .string("usb:v1D6Bp0246d0542"),
                ])
                return [.dictionary(key: "o", value: "a{sa{sv}}", [
                    DBusDictionaryEntry(key: .objectPath("/org/bluez/hci0"), value: .dictionary(key: "s", value: "a{sv}", [
                        DBusDictionaryEntry(key: .string("org.bluez.Adapter1"), value: adapter),
                    ])),
                ])]
            }
            let run = try await BluetideExecutable.run(["doctor", "--json"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
            #expect(run.status == 0, "\(run.stderr)")
            let system = try #require(run.stdout.first { $0.contains("\"type\":\"system\"") })
            #expect(system.contains("\"bluetoothd\":{\"running\":true,\"version\":\"5.66\"}"), "\(system)")
            #expect(system.contains("\"systemBus\":{\"reachable\":true}"), "\(system)")
            let adapter = try #require(run.stdout.first { $0.contains("\"adapter\":\"hci0\"") })
            #expect(adapter.contains("\"holder\":\"bluetoothd\"") && adapter.contains("\"powered\":false"), "\(adapter)")
            if run.stdout.filter({ $0.contains("\"type\":\"adapter\"") }).count == 1 {
                let advice = try #require(run.stdout.last)
                #expect(advice.contains("\"transport\":\"bluez:hci0\""), "\(advice)")
                #expect(advice.contains("\"before\":[\"bluetoothctl power on\"]"), "\(advice)")
            }
        } catch {
            await bluez.close()
            await bus.stop()
            throw error
        }
        await bluez.close()
        await bus.stop()
    }
}
