import Bluetide
import BluetideTestSupport
import Foundation
import Testing

/// Bluetide's `bluez` transport in the guest: the guest's bluetoothd owns hci0 (one of
/// Bluetide's virtual controllers), and the `bluetide` binary runs in the guest as a D-Bus client
/// of it — the way a user runs it beside the system's Bluetooth — against an emulated
/// heart-rate strap served by Bluetide on the host. Part of ``BlueZGuestTests`` (an extension)
/// so it shares the one guest boot and runs one test at a time with the others.
extension BlueZGuestTests {
    /// `bluetide ARGUMENTS` in the guest, with the host's Swift runtime.
    static func bluetideInGuest(_ arguments: String) -> String {
        "LD_LIBRARY_PATH=/opt/swiftlib /share/bin/bluetide \(arguments)"
    }

    @Test func bluetideOnTheBlueZTransportScansReadsAndSubscribesBesideBluetoothd() async throws {
        try await withRig("bluetide --transport bluez vs heart-rate", 420) { rig in
            let strap = try await rig.emulate("heart-rate", on: 0, address: "C1:B1:7E:00:03:00", name: "BZ-HRM")
            defer { Task { await strap.stop() } }

            let started = ContinuousClock.now
            let scan = try await rig.guest.run(
                Self.bluetideInGuest("scan --transport bluez --name BZ-HRM --service 180D --min-rssi -100 --scan-time 6 --json"),
                timeout: .seconds(60))
            #expect(scan.status == 0, "scan: \(scan.stderr.suffix(5))")
            let seen = scan.json.first { $0["type"] as? String == "advertisement" }
            let device = try #require(seen?["device"] as? [String: Any], "no advertisement: \(scan.stdout.suffix(5)) \(scan.stderr.suffix(5))")
            #expect(device["address"] as? String == "C1:B1:7E:00:03:00/R")
            #expect(device["name"] as? String == "BZ-HRM")
            #expect((seen?["services"] as? [[String: Any]])?.contains { $0["uuid"] as? String == "180D" } == true, "\(String(describing: seen))")
            print("bluez backend: scan took \(BlueZRig.seconds(since: started)) s")

            let read = try await rig.guest.run(
                Self.bluetideInGuest("read BZ-HRM body-sensor-location --transport bluez --timeout 30 --json"), timeout: .seconds(90))
            #expect(read.status == 0, "read: \(read.stderr.suffix(5))")
            let value = read.json.first { $0["type"] as? String == "read" }?["value"] as? [String: Any]
            #expect(value?["hex"] as? String == "01", "\(read.stdout.suffix(3)) \(read.stderr.suffix(5))")

            let gatt = try await rig.guest.run(Self.bluetideInGuest("gatt BZ-HRM --transport bluez --timeout 30 --json"), timeout: .seconds(90))
            #expect(gatt.status == 0, "gatt: \(gatt.stderr.suffix(5))")
            #expect(gatt.stdout.contains { $0.contains("\"180D\"") && $0.contains("\"2A37\"") }, "\(gatt.stdout.suffix(3))")

            let subscribed = ContinuousClock.now
            let subscribe = try await rig.guest.run(
                Self.bluetideInGuest("subscribe BZ-HRM heart-rate --transport bluez --timeout 30 --count 3 --json"), timeout: .seconds(90))
            #expect(subscribe.status == 0, "subscribe: \(subscribe.stderr.suffix(5))")
            let notifications = subscribe.json.filter { $0["type"] as? String == "notification" }
            #expect(notifications.count == 3, "\(subscribe.stdout.suffix(4)) \(subscribe.stderr.suffix(5))")
            #expect(notifications.allSatisfy { (($0["value"] as? [String: Any])?["hex"] as? String)?.count ?? 0 >= 4 })
            print("bluez backend: subscribe (connect, discovery, 3 values) took \(BlueZRig.seconds(since: subscribed)) s")

            // Writes with response: accepted, and refused with the strap's ATT error 0x80.
            let accepted = try await rig.guest.run(
                Self.bluetideInGuest("write BZ-HRM 2A39 01 --transport bluez --timeout 30 --json"), timeout: .seconds(90))
            #expect(accepted.status == 0, "write 01: \(accepted.stderr.suffix(5))")
            let refusedWrite = try await rig.guest.run(Self.bluetideInGuest("write BZ-HRM 2A39 02 --transport bluez --timeout 30"), timeout: .seconds(90))
            #expect(refusedWrite.status == 1)
            #expect(refusedWrite.stderr.contains { $0.contains("0x80") }, "\(refusedWrite.stderr)")

            // A write without response to a serial module.
            let module = try await rig.emulate("hm10", on: 7, address: "C1:B1:7E:00:03:07", name: "BZ-HM10")
            defer { Task { await module.stop() } }
            let command = try await rig.guest.run(
                Self.bluetideInGuest("write BZ-HM10 FFE1 48656C6C6F --without-response --transport bluez --timeout 30"), timeout: .seconds(90))
            #expect(command.status == 0, "write without response: \(command.stderr.suffix(5))")
            await module.stop()
            let moduleEvents = await module.output().compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
            #expect(moduleEvents.contains { $0["type"] as? String == "written" && Self.hex(of: $0) == "48656c6c6f" }, "\(moduleEvents.suffix(5))")

            // What BlueZ cannot do is refused in one line that says what to use instead.
            let capture = try await rig.guest.run(
                Self.bluetideInGuest("read BZ-HRM battery-level --transport bluez+snoop:/tmp/x.btsnoop"), timeout: .seconds(60))
            #expect(capture.status != 0)
            #expect(capture.stderr.contains { $0.contains("btmon") }, "\(capture.stderr)")

            // The strap saw a central subscribe.
            await strap.stop()
            let events = await strap.output().compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
            #expect(events.contains { $0["type"] as? String == "subscription" && Self.uuid(of: $0) == "2A37" })
            let writes = events.filter { $0["type"] as? String == "written" && Self.uuid(of: $0) == "2A39" }
            #expect(writes.contains { Self.hex(of: $0) == "01" && $0["attError"] == nil }, "\(writes)")
            #expect(writes.contains { Self.hex(of: $0) == "02" && $0["attError"] as? Int == 0x80 }, "\(writes)")
        }
    }

    @Test func theDoctorInTheGuestSeesBluetoothdsAdapterUpAndDown() async throws {
        try await withRig("bluetide doctor in the guest", 240) { rig in
            let up = try await rig.guest.run(Self.bluetideInGuest("doctor --json"), timeout: .seconds(60))
            #expect(up.status == 0, "\(up.stderr.suffix(5))")
            let adapter = try #require(up.json.first { $0["type"] as? String == "adapter" }, "\(up.stdout)")
            #expect(adapter["adapter"] as? String == "hci0")
            #expect(adapter["holder"] as? String == "bluetoothd")
            #expect(adapter["up"] as? Bool == true && adapter["powered"] as? Bool == true)
            let system = try #require(up.json.first { $0["type"] as? String == "system" })
            #expect((system["bluetoothd"] as? [String: Any])?["version"] as? String == "5.66", "\(system)")
            #expect((system["userChannel"] as? [String: Any])?["allowed"] as? Bool == true)
            let advice = try #require(up.json.last)
            #expect(advice["transport"] as? String == "bluez:hci0", "\(advice)")
            #expect(advice["command"] as? String == "bluetide scan --transport bluez:hci0")

            // Powered off by bluetoothd: still its adapter, down, and the advice powers it first.
            let off = try await rig.guest.run("bluetoothctl power off", timeout: .seconds(30))
            #expect(off.status == 0, "\(off.stderr)")
            let down = try await rig.guest.run(Self.bluetideInGuest("doctor --json"), timeout: .seconds(60))
            let downAdapter = try #require(down.json.first { $0["type"] as? String == "adapter" }, "\(down.stdout)")
            #expect(downAdapter["holder"] as? String == "bluetoothd")
            #expect(downAdapter["up"] as? Bool == false && downAdapter["powered"] as? Bool == false, "\(downAdapter)")
            let downAdvice = try #require(down.json.last)
            #expect(downAdvice["before"] as? [String] == ["bluetoothctl power on"], "\(downAdvice)")
            // And the bluez transport refuses the unpowered adapter in one line.
            let refused = try await rig.guest.run(Self.bluetideInGuest("scan --transport bluez --scan-time 1"), timeout: .seconds(60))
            #expect(refused.status == 1)
            #expect(refused.stderr.contains { $0.contains("not powered") && $0.contains("bluetoothctl power on") }, "\(refused.stderr)")
            _ = try await rig.guest.run("bluetoothctl power on", timeout: .seconds(30))

            // rfkill: a soft block is read from /sys/class/rfkill and the advice unblocks first.
            let rfkill = "for r in /sys/class/rfkill/rfkill*; do [ \"$(cat $r/type)\" = bluetooth ] && echo %d > $r/soft; done; true"
            _ = try await rig.guest.run(String(format: rfkill, 1), timeout: .seconds(30))
            let blocked = try await rig.guest.run(Self.bluetideInGuest("doctor --json"), timeout: .seconds(60))
            _ = try await rig.guest.run(String(format: rfkill, 0) + "; sleep 1; bluetoothctl power on", timeout: .seconds(30))
            let blockedAdapter = try #require(blocked.json.first { $0["type"] as? String == "adapter" }, "\(blocked.stdout)")
            #expect((blockedAdapter["rfkill"] as? [String: Any])?["softBlocked"] as? Bool == true, "\(blockedAdapter)")
            #expect((blocked.json.last?["before"] as? [String])?.first == "rfkill unblock bluetooth", "\(String(describing: blocked.json.last))")

            // Without root or CAP_NET_ADMIN (user nobody): no user channel, and the advice says so.
            let nobody = try await rig.guest.run(
                "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all env LD_LIBRARY_PATH=/opt/swiftlib HOME=/tmp /share/bin/bluetide doctor --json",
                timeout: .seconds(60))
            #expect(nobody.status == 0, "\(nobody.stderr.suffix(5))")
            let nobodySystem = try #require(nobody.json.first { $0["type"] as? String == "system" }, "\(nobody.stdout) \(nobody.stderr.suffix(5))")
            #expect((nobodySystem["userChannel"] as? [String: Any])?["allowed"] as? Bool == false, "\(nobodySystem)")
            #expect((nobodySystem["notes"] as? [String])?.contains { $0.contains("setcap cap_net_admin") } == true, "\(nobodySystem)")
        }
    }

    @Test func ringSyncRunsOverTheBlueZTransport() async throws {
        try await withRig("ring sync over bluez", 300) { rig in
            let ring = try await rig.emulate("colmi-r02", on: 6, address: "C1:B1:7E:00:03:06", name: "R02_BZ06")
            defer { Task { await ring.stop() } }
            let started = ContinuousClock.now
            let sync = try await rig.guest.run(
                Self.bluetideInGuest("ring sync --transport bluez --device C1:B1:7E:00:03:06/R --timeout 30 --days 1 --db /tmp/bz-ring.sqlite --json"),
                timeout: .seconds(180))
            #expect(sync.status == 0, "ring sync: \(sync.stdout.suffix(3)) \(sync.stderr.suffix(5))")
            let synced = try #require(sync.json.first { $0["type"] as? String == "synced" }, "\(sync.stdout.suffix(3)) \(sync.stderr.suffix(5))")
            #expect(Self.count(synced["added"]) > 0, "\(synced)")
            print("bluez backend: ring sync took \(BlueZRig.seconds(since: started)) s")
        }
    }
}
