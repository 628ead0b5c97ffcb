import Bluetide
import BluetideTestSupport
import Foundation
import Testing

/// The apps on the `bluez` transport, end to end: the `bluetide` binary in the guest, beside
/// bluetoothd, against Bluetide emulators on the host. One test, several commands, so the guest
/// boots once and each emulator starts once. Part of the one serialized BlueZ suite.
extension BlueZGuestTests {
    @Test func theAppsRunOverTheBlueZTransport() async throws {
        try await withRig("apps over bluez", 900) { rig in
            // HM-10 echo: `uart` as a pipe.
            let module = try await rig.emulate("hm10", on: Self.port(of: "hm10"), address: "C1:B1:7E:00:08:07", name: "BZ-UART")
            defer { Task { await module.stop() } }
            let uart = try await rig.guest.run(
                "echo hello-over-bluez | " + Self.bluetideInGuest("uart BZ-UART --transport bluez --scan-time 30 --idle-timeout 3"), timeout: .seconds(90))
            #expect(uart.status == 0, "uart: \(Self.describe(uart))")
            #expect(uart.stdout.contains { $0.contains("hello-over-bluez") }, "uart echo: \(Self.describe(uart))")
            await module.stop()

            // ERG on an FTMS trainer: control requested, the target written, samples near it.
            let trainer = try await rig.emulate("ftms-bike", on: Self.port(of: "ftms-bike"), address: "C1:B1:7E:00:08:04", name: "BZ-FTMS")
            defer { Task { await trainer.stop() } }
            let ride = try await rig.guest.run(
                Self.bluetideInGuest("ride --trainer BZ-FTMS --erg 150 --transport bluez --timeout 30 --duration 20 --json"), timeout: .seconds(240))
            #expect(ride.status == 0, "ride: \(Self.describe(ride))")
            let samples = ride.json.filter { $0["type"] as? String == "sample" }
            #expect(samples.count >= 5, "ride samples: \(Self.describe(ride))")
            await trainer.stop()
            let trainerRecords = await Self.records(of: trainer)
            let controlPoint = Self.writes(in: trainerRecords, to: "2AD9")
            #expect(controlPoint.first == "00" && controlPoint.contains("059600"), "control point writes: \(controlPoint)")

            // A value log of a strap's heart rates; an HCI capture is refused, pointing to btmon.
            let strap = try await rig.emulate("heart-rate", on: Self.port(of: "heart-rate"), address: "C1:B1:7E:00:08:00", name: "BZ-REC")
            defer { Task { await strap.stop() } }
            let record = try await rig.guest.run(
                Self.bluetideInGuest("record BZ-REC heart-rate --transport bluez --timeout 30 --out /tmp/bz-record.jsonl --count 3")
                    + " && wc -l < /tmp/bz-record.jsonl", timeout: .seconds(180))
            #expect(record.status == 0, "record: \(Self.describe(record))")
            #expect((record.stdout.last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0) >= 3, "value log lines: \(Self.describe(record))")
            let capture = try await rig.guest.run(
                Self.bluetideInGuest("record BZ-REC heart-rate --transport bluez --out /tmp/bz-x.jsonl --snoop /tmp/bz.btsnoop --count 1"),
                timeout: .seconds(60))
            #expect(capture.status != 0 && capture.stderr.count == 1 && capture.stderr.contains { $0.contains("btmon") }, "record --snoop: \(Self.describe(capture))")

            // Notifications through AcquireNotify: while a subscription runs, bluetoothd says the
            // Heart Rate Measurement's notifications are acquired (a socket, not StartNotify).
            let subscribe = try await rig.guest.start(
                Self.bluetideInGuest("subscribe BZ-REC heart-rate --transport bluez --timeout 30 --count 20 --json"), timeout: .seconds(90))
            _ = try await rig.guest.line(of: subscribe, timeout: .seconds(60)) { $0.contains("\"notification\"") }
            let acquired = try await rig.guest.run(
                "python3 -c \"import dbus; objects = dbus.Interface(dbus.SystemBus().get_object('org.bluez', '/'), 'org.freedesktop.DBus.ObjectManager').GetManagedObjects(); "
                    + "print([str(path) for path, interfaces in objects.items() if str(interfaces.get('org.bluez.GattCharacteristic1', {}).get('UUID', '')).startswith('00002a37') "
                    + "and bool(interfaces['org.bluez.GattCharacteristic1'].get('NotifyAcquired', False))])\"", timeout: .seconds(30))
            let notified = try await rig.guest.result(of: subscribe, timeout: .seconds(90))
            #expect(acquired.stdout.contains { $0.contains("/char") }, "NotifyAcquired of 2A37 while subscribed: \(Self.describe(acquired))")
            #expect(notified.status == 0 && notified.json.filter { $0["type"] as? String == "notification" }.count == 20, "subscribe: \(Self.describe(notified))")

            // The shell: read, subscribe, a refused write, info.
            let shell = try await rig.guest.run(
                "printf 'read body-sensor-location\\nsubscribe heart-rate\\nwrite 2A39 02\\ninfo\\n' | "
                    + Self.bluetideInGuest("shell BZ-REC --transport bluez --timeout 30 --json"), timeout: .seconds(90))
            #expect(shell.json.contains { $0["type"] as? String == "read" }, "shell: \(Self.describe(shell))")
            #expect(shell.json.contains { $0["type"] as? String == "info" }, "shell: \(Self.describe(shell))")
            await strap.stop()

            // The reflex coach runs a sequence on a punch trainer (its simulated athlete hits).
            let punch = try await rig.emulate("punch", on: Self.port(of: "punch"), address: "C1:B1:7E:00:08:08", name: "Reflex-BZ")
            defer { Task { await punch.stop() } }
            let database = "--db /tmp/bz-coach.sqlite"
            let setUp = try await rig.guest.run(
                "rm -f /tmp/bz-coach.sqlite && " + Self.bluetideInGuest("reflex coach athletes add Ana \(database)") + " && "
                    + Self.bluetideInGuest("reflex coach sequences save Jab --targets 0,3,5,1 --times 900 \(database)"), timeout: .seconds(60))
            #expect(setUp.status == 0, "coach set-up: \(Self.describe(setUp))")
            let run = try await rig.guest.run(
                Self.bluetideInGuest("reflex coach run --athlete Ana --sequence Jab --device Reflex-BZ --transport bluez --timeout 30 --json \(database)"),
                timeout: .seconds(120))
            #expect(run.status == 0, "coach run: \(Self.describe(run))")
            let ended = run.json.first { $0["type"] as? String == "ended" }
            #expect(ended?["complete"] as? Bool == true && Self.count(ended?["stepsStored"]) == 4, "coach run: \(Self.describe(run))")
            print("bluez apps: uart \(uart.stdout.suffix(2)); ride \(ride.stdout.suffix(1)); record \(record.stdout.suffix(1)); shell \(shell.stdout.suffix(4)); coach \(run.stdout.suffix(3))")
        }
    }
}
