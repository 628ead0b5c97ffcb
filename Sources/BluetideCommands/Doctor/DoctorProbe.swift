import BluetideBlueZ
import BluetideDBus
import BluetideSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads ``DoctorFacts`` from this machine: the kernel's adapters (`/sys/class/bluetooth` and
/// the HCIGETDEVINFO ioctl, which needs no privilege), rfkill (`/sys/class/rfkill`), the system
/// bus and bluetoothd (over D-Bus), BlueZ's version, and this process's privileges. Nothing is
/// changed: no adapter is opened, powered or bound.
enum DoctorProbe {
    /// The whole snapshot; each D-Bus step within `timeout`.
    static func facts(sysfs: String = "/sys/class", timeout: Duration = .seconds(5)) async -> DoctorFacts {
        let kernelBluetooth = FileManager.default.fileExists(atPath: "\(sysfs)/bluetooth")
        var adapters = kernelAdapters(sysfs: sysfs)
        let rfkill = rfkillStates(sysfs: sysfs)
        var facts = DoctorFacts(
            kernelBluetooth: kernelBluetooth, adapters: [], libdbusProblem: DBusConnection.libraryProblem,
            libdbusVersion: DBusConnection.libraryVersion, systemBusProblem: nil, bluetoothdRunning: nil, bluezVersion: nil,
            isRoot: geteuid() == 0, hasNetAdmin: hasEffectiveCapability(12))
        if facts.libdbusProblem == nil {
            do {
                let bluez = try await withTimeLimit(timeout, onTimeout: { DBusError("no answer within \(Int(timeout.components.seconds)) s") }) {
                    try await BlueZ.connect(.system)
                }
                do {
                    let running = try await bluez.isRunning(timeout: timeout)
                    facts.bluetoothdRunning = running
                    if running {
                        for adapter in try await bluez.adapters(timeout: timeout) {
                            guard let index = adapter.index else { continue }
                            facts.bluezVersion = facts.bluezVersion ?? adapter.bluezVersion
                            if let at = adapters.firstIndex(where: { $0.index == index }) {
                                adapters[at].managedByBluetoothd = true
                                adapters[at].powered = adapter.powered
                                adapters[at].address = adapters[at].address ?? adapter.address
                            } else {
                                adapters.append(DoctorFacts.Adapter(
                                    index: index, address: adapter.address, powered: adapter.powered, managedByBluetoothd: true))
                            }
                        }
                    }
                } catch {
                    facts.systemBusProblem = facts.bluetoothdRunning == nil ? "\(error)" : nil
                }
                await bluez.close()
            } catch {
                facts.systemBusProblem = "\(error)"
            }
        }
        for index in adapters.indices {
            if let state = rfkill[adapters[index].name] {
                adapters[index].softBlocked = state.soft
                adapters[index].hardBlocked = state.hard
            }
        }
        facts.adapters = adapters.sorted { $0.index < $1.index }
        if facts.bluezVersion == nil { facts.bluezVersion = bluetoothdVersion() }
        return facts
    }

    /// The kernel's adapters: each `hciN` in /sys/class/bluetooth, with address and up flag from
    /// HCIGETDEVINFO when the ioctl answers.
    static func kernelAdapters(sysfs: String) -> [DoctorFacts.Adapter] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "\(sysfs)/bluetooth")) ?? []
        let indices = names.compactMap { name -> Int? in
            guard name.hasPrefix("hci"), !name.contains(":") else { return nil }
            return Int(name.dropFirst(3))
        }.sorted()
        guard !indices.isEmpty else { return [] }
        let fd = socket(31 /* AF_BLUETOOTH */, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 1 /* BTPROTO_HCI */)
        defer { if fd >= 0 { close(fd) } }
        return indices.map { index in
            var adapter = DoctorFacts.Adapter(index: index)
            guard fd >= 0, index <= Int(UInt16.max) else { return adapter }
            // struct hci_dev_info: dev_id (u16), name[8], bdaddr (6, little-endian), flags (u32 at 16), … (92 bytes).
            var info = [UInt8](repeating: 0, count: 128)
            info[0] = UInt8(index & 0xFF)
            info[1] = UInt8(index >> 8)
            let request: UInt = 0x8004_48D3  // HCIGETDEVINFO = _IOR('H', 211, int)
            let result = info.withUnsafeMutableBytes { Glibc.ioctl(fd, request, $0.baseAddress!) }
            guard result == 0 else { return adapter }
            let bytes = info[10..<16].reversed()
            adapter.address = bytes.map { String(format: "%02X", $0) }.joined(separator: ":")
            let flags = UInt32(info[16]) | UInt32(info[17]) << 8 | UInt32(info[18]) << 16 | UInt32(info[19]) << 24
            adapter.up = flags & 1 != 0  // HCI_UP
            return adapter
        }
    }

    /// rfkill's Bluetooth entries, by the device's name (`hci0`): soft and hard block.
    static func rfkillStates(sysfs: String) -> [String: (soft: Bool, hard: Bool)] {
        let root = "\(sysfs)/rfkill"
        var states: [String: (soft: Bool, hard: Bool)] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] where entry.hasPrefix("rfkill") {
            func read(_ file: String) -> String? {
                (try? String(contentsOfFile: "\(root)/\(entry)/\(file)", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            guard read("type") == "bluetooth", let name = read("name") else { continue }
            states[name] = (read("soft") == "1", read("hard") == "1")
        }
        return states
    }

    /// Whether capability `bit` is in this process's effective set (`CapEff` in /proc/self/status).
    static func hasEffectiveCapability(_ bit: Int) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
              let mask = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << UInt64(bit)) != 0
    }

    /// `bluetoothd --version` from where Debian, Fedora and Arch install it, when present.
    static func bluetoothdVersion() -> String? {
        for path in ["/usr/libexec/bluetooth/bluetoothd", "/usr/lib/bluetooth/bluetoothd", "/usr/sbin/bluetoothd"]
        where FileManager.default.isExecutableFile(atPath: path) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = ["--version"]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { continue }
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty, text.first?.isNumber == true { return text }
        }
        return nil
    }
}
