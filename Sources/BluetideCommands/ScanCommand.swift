import ArgumentParser
import Bluetide
import BluetideBase
import BluetideSupport
import BluetideTransport
import Foundation

/// `bluetide scan`: the devices around, strongest signal first.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Scan for advertising devices and list them by signal strength.",
        discussion: """
            Lists address, name, RSSI (with a bar) and advertised services, strongest first. On a terminal the table \
            updates live; otherwise one plain line per device is printed at the end (one JSON object per device with --json).

            Examples:
              bluetide scan --emulate heart-rate,csc
              bluetide scan --emulate heart-rate@-40,hm10@-75 --json
              bluetide scan --transport serial:/dev/ttyACM0 --service 180D --scan-time 10
            """)

    @OptionGroup var session: DeviceSessionOptions

    @Option(name: .customLong("scan-time"), help: "Seconds to scan (--timeout, its old name, still works).")
    var scanTime: Double = 5

    /// `--timeout`, the old name of `--scan-time` (hidden, deprecated).
    @Option(name: .customLong("timeout"), help: .hidden)
    var deprecatedTimeout: Double?

    /// Seconds to scan: `--scan-time`, or the deprecated `--timeout`.
    var timeout: Double { deprecatedTimeout ?? scanTime }

    @Option(name: .long, help: "Only devices advertising this service UUID (repeatable).")
    var service: [String] = []

    @Option(name: .long, help: "Only devices with exactly this name.")
    var name: String?

    @Option(name: .customLong("name-prefix"), help: "Only devices whose name starts with this.")
    var namePrefix: String?

    @Option(name: .customLong("name-pattern"), help: "Only devices whose name matches this regular expression.")
    var namePattern: String?

    @Option(name: .long, help: "Only devices with manufacturer data of this company ID (e.g. 0x004C).")
    var manufacturer: String?

    @Option(name: .customLong("min-rssi"), parsing: .unconditional, help: "Only devices at least this strong, dBm (e.g. -70).")
    var minRSSI: Int?

    @Flag(name: .long, help: "Print one JSON object per device.")
    var json = false

    func run() async throws {
        let output = CommandOutput.standardOutput()
        // BLUETIDE_VIRTUAL_TIME=1 with --emulate: the whole scan in virtual time (VirtualTimeOption).
        let command = self
        try await VirtualTimeOption.run(session) { try await command.execute(output, clock: $0) }
    }

    /// Builds the API filter from the options.
    func filter() throws -> ScanFilter {
        var filter = ScanFilter(minimumRSSI: minRSSI, allowDuplicates: true)
        for text in service {
            do { filter.serviceUUIDs.append(try BluetoothUUID(text)) } catch {
                throw CommandFailure("--service \(text): \(error) (expected e.g. 180D or 0000180D-0000-1000-8000-00805F9B34FB)")
            }
        }
        let names = [name != nil, namePrefix != nil, namePattern != nil].filter { $0 }.count
        guard names <= 1 else { throw CommandFailure("give only one of --name, --name-prefix, --name-pattern") }
        if let name { filter.name = .exact(name) }
        if let namePrefix { filter.name = .prefix(namePrefix) }
        if let namePattern {
            do { filter.name = try .pattern(namePattern) } catch { throw CommandFailure("--name-pattern: \(error)") }
        }
        if let manufacturer {
            let digits = manufacturer.lowercased().hasPrefix("0x") ? String(manufacturer.dropFirst(2)) : manufacturer
            guard let id = UInt16(digits, radix: manufacturer.lowercased().hasPrefix("0x") ? 16 : 10) ?? UInt16(digits, radix: 16) else {
                throw CommandFailure("--manufacturer \(manufacturer): expected a company ID like 0x004C or 76")
            }
            filter.manufacturerID = id
        }
        guard timeout.isFinite, timeout > 0 else { throw CommandFailure("--scan-time \(timeout): expected seconds > 0, e.g. --scan-time 10") }
        return filter
    }

    /// Scans and prints. With `--emulate`, the emulated world and the scan's length run on
    /// `clock` (a test's manual clock scans for `--scan-time` of virtual time).
    func execute(_ output: CommandOutput, clock: BluetideClock = .continuous) async throws {
        let filter = try filter()
        let session = try await DeviceSession.open(session, clock: clock)
        var latest: [BluetoothAddress: Advertisement] = [:]
        var drawn = 0
        let live = output.isTerminal && !json
        do {
            let stream = try await session.central.scan(filter: filter, timeout: .seconds(timeout))
            for await advertisement in stream {
                latest[advertisement.address] = advertisement
                if live {
                    let lines = Self.table(RSSIRanking.ranked(Array(latest.values)), colour: true)
                    // Move up over the previous table and redraw it.
                    let up = drawn > 0 ? "\u{1B}[\(drawn)A" : ""
                    output.emit(up + lines.map { "\u{1B}[2K" + $0 }.joined(separator: "\n"))
                    drawn = lines.count
                }
            }
        } catch {
            await session.close()
            throw CommandFailure("cannot scan on \(session.transportText): \(error)")
        }
        await session.close()
        let ranked = RSSIRanking.ranked(Array(latest.values))
        if json {
            for device in ranked { output.emit(Self.jsonLine(device)) }
        } else if !live {
            for line in Self.table(ranked, colour: false) { output.emit(line) }
        } else if ranked.isEmpty {
            output.emit("no devices seen within \(DeviceSession.format(timeout)) s")
        }
    }

    /// A bar of 10 cells for an RSSI (−100 dBm empty, −30 dBm full).
    static func bar(_ rssi: Int) -> String {
        let filled = max(0, min(10, (rssi + 100 + 3) / 7))
        return String(repeating: "█", count: filled) + String(repeating: "·", count: 10 - filled)
    }

    /// Service UUIDs by name where known.
    static func serviceNames(_ uuids: [BluetoothUUID]) -> String {
        uuids.map { uuid in uuid.name ?? uuid.uuid16.map { String(format: "%04X", $0) } ?? "\(uuid)" }.joined(separator: ", ")
    }

    /// The table's lines, header first.
    static func table(_ devices: [Advertisement], colour: Bool) -> [String] {
        let nameWidth = max(4, devices.map { ($0.name ?? "").count }.max() ?? 0)
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        var lines = [pad("ADDRESS", 19) + "  " + pad("NAME", nameWidth) + "  " + pad("RSSI", 4) + "  " + pad("SIGNAL", 10) + "  SERVICES"]
        for device in devices {
            let bar = colour ? RSSIColor(rssi: device.rssi).colorize(bar(device.rssi)) : bar(device.rssi)
            lines.append(
                pad(device.address.description, 19) + "  " + pad(device.name ?? "-", nameWidth) + "  "
                    + pad(String(device.rssi), 4) + "  " + bar + "  " + serviceNames(device.serviceUUIDs))
        }
        return lines
    }

    /// An `advertisement` record: the device (with its RSSI), services as UUID objects (named
    /// where the UUID is assigned), TX power, manufacturer data by company identifier.
    static func jsonLine(_ device: Advertisement) -> String {
        var seen: JSONOutputValue = JSONOutput.device(device.address, name: device.name)
        if case var .object(fields) = seen {
            fields["rssiDbm"] = .integer(Int64(device.rssi))
            seen = .object(fields)
        }
        var object: [String: JSONOutputValue] = [
            "device": seen, "rssiDbm": .integer(Int64(device.rssi)), "connectable": .bool(device.isConnectable),
            "services": .array(device.serviceUUIDs.map(JSONOutput.characteristic)), "colour": .string(RSSIColor(rssi: device.rssi).hex),
        ]
        if let tx = device.txPower { object["txPowerDbm"] = .integer(Int64(tx)) }
        if !device.manufacturerData.isEmpty {
            object["manufacturerData"] = .array(device.manufacturerData.keys.sorted().map { company in
                ["companyId": .integer(Int64(company)), "value": JSONOutput.value(device.manufacturerData[company] ?? [])]
            })
        }
        return JSONOutput.line("advertisement", object)
    }
}
