import ArgumentParser
import Bluetide
import BluetideBlueZ
import Foundation

/// `bluetide bonds list|remove`: the devices this computer bonded with, read from (and removed
/// from) the bond file, without a controller.
struct BondsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bonds",
        abstract: "List or forget bonded devices (the keys kept after pairing).",
        discussion: """
            Bonds live in a JSON file (mode 0600), by default $XDG_CONFIG_HOME/bluetide/bonds.json \
            (~/.config/bluetide/bonds.json when XDG_CONFIG_HOME is unset). Device commands keep \
            the bonds they make there and encrypt a reconnect from it without pairing again; \
            --bonds-file picks another file for all of them. Bonds with emulated devices \
            (--emulate) are not kept: those devices are new each run. Removing a bond makes the device pair again next time (remove it on
            the device too, or its stale keys make encryption fail).

            With --transport bluez (or bluez:hciN) the bonds are bluetoothd's: its paired and \
            bonded devices on that adapter (what device commands on the bluez transport pair), \
            listed from D-Bus and removed with Adapter1.RemoveDevice, which also forgets the \
            device's cached services. Their security level is read from bluetoothd's key store \
            when it may be (as root).

            Examples:
              bluetide bonds list
              bluetide bonds remove C0:11:22:33:44:55/R
              bluetide bonds list --transport bluez
              bluetide bonds remove C0:11:22:33:44:55/R --transport bluez:hci0
            """,
        subcommands: [List.self, Remove.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the bonded devices, one line each.")

        @OptionGroup var bonds: BondsOptions

        @Flag(name: .long, help: "One bond record per line (docs/json-output.md).")
        var json = false

        func run() async throws {
            if let adapter = try bonds.bluezAdapter() {
                try await BlueZBondsCommand.list(adapter: adapter, json: json)
                return
            }
            let records: [BondRecord]
            do { records = try BondRecords(path: bonds.path).list() } catch { throw CommandFailure("\(error)") }
            if json {
                for record in records {
                    StandardStreams.output.line(JSONOutput.line("bond", [
                        "device": JSONOutput.device(record.address),
                        "securityLevel": .number(Double(record.securityLevel.rawValue)),
                        "secureConnections": .bool(record.secureConnections),
                        "keySize": .number(Double(record.keySize)),
                    ]))
                }
            } else if records.isEmpty {
                StandardStreams.output.line("no bonds in \(bonds.path)")
            } else {
                for record in records { StandardStreams.output.line("\(record)") }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget the bond with a device.")

        @Argument(help: "The device's address, with /P (public) or /R (random), e.g. C0:11:22:33:44:55/R.")
        var address: String

        @OptionGroup var bonds: BondsOptions

        func run() async throws {
            guard let device = try? BluetoothAddress(address) else {
                throw CommandFailure.usage("address \"\(address)\" is not an address: expected six hex bytes and /P or /R, e.g. C0:11:22:33:44:55/R", field: "address")
            }
            if let adapter = try bonds.bluezAdapter() {
                try await BlueZBondsCommand.remove(device, adapter: adapter)
                return
            }
            let removed: BondRecord?
            do { removed = try BondRecords(path: bonds.path).remove(device) } catch { throw CommandFailure("\(error)") }
            guard removed != nil else {
                throw CommandFailure("no bond with \(device) in \(bonds.path); `bluetide bonds list` shows the bonded devices")
            }
            StandardStreams.output.line("removed the bond with \(device): it must pair again")
        }
    }
}

/// Where the bond file is.
struct BondsOptions: ParsableArguments {
    /// The one bond file every command reads and writes unless given `--bonds-file`:
    /// `$XDG_CONFIG_HOME/bluetide/bonds.json`, else `$HOME/.config/bluetide/bonds.json` (as the
    /// XDG base directory rules say; `XDG_CONFIG_HOME` counts only when absolute), else the
    /// account's home directory from the password database.
    static var defaultPath: String { defaultPath(environment: ProcessInfo.processInfo.environment) }

    /// ``defaultPath`` for the given environment variables.
    static func defaultPath(environment: [String: String]) -> String {
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let base = configHome ?? (home.hasSuffix("/") ? String(home.dropLast()) : home) + "/.config"
        return base + "/bluetide/bonds.json"
    }

    @Option(name: .long, help: ArgumentHelp("The bond file (default: $XDG_CONFIG_HOME/bluetide/bonds.json, else ~/.config/bluetide/bonds.json).", valueName: "path"))
    var bondsFile: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "bluez or bluez:hciN: bluetoothd's paired devices on that adapter instead of the bond file (Bluetide's own host keeps its bonds in the file).",
            valueName: "transport"))
    var transport: String?

    var path: String { bondsFile ?? Self.defaultPath }

    /// The adapter of `--transport bluez[:hciN]` (nil: its first), or nil without `--transport`;
    /// any other transport is refused in one line (its bonds are the file's).
    func bluezAdapter() throws -> String?? {
        guard let transport else { return nil }
        if transport == "bluez" || transport.hasPrefix("bluez:") {
            if bondsFile != nil {
                throw CommandFailure.usage("--bonds-file and --transport \(transport): bluetoothd keeps its own bonds; give one of them", field: "--bonds-file")
            }
            guard transport != "bluez" else { return .some(nil) }
            let name = String(transport.dropFirst("bluez:".count))
            guard name.hasPrefix("hci"), Int(name.dropFirst(3)) != nil else {
                throw CommandFailure.usage("--transport \(transport): expected bluez or bluez:hciN, e.g. bluez:hci0 (bluetide doctor lists the adapters)", field: "--transport")
            }
            return .some(name)
        }
        throw CommandFailure.usage(
            "--transport \(transport): the bonds of Bluetide's own host (every transport but bluez) are in the bond file; drop --transport, or give bluez for bluetoothd's",
            field: "--transport")
    }
}

/// `bluetide bonds list|remove --transport bluez`: bluetoothd's bonds over D-Bus.
enum BlueZBondsCommand {
    /// Runs `body` with bluetoothd's adapter `name` (nil: the first), closing the bus after.
    static func with(_ name: String?, _ body: (BlueZ, BlueZAdapter) async throws -> Void) async throws {
        let (bluez, adapter) = try await open(name)
        do { try await body(bluez, adapter) } catch {
            await bluez.close()
            throw error
        }
        await bluez.close()
    }

    static func open(_ name: String?) async throws -> (BlueZ, BlueZAdapter) {
        let bluez: BlueZ
        do { bluez = try await BlueZ.connect() } catch {
            throw CommandFailure("cannot reach bluetoothd over the D-Bus system bus (\(error)); bluetide doctor says what is missing")
        }
        do {
            guard try await bluez.isRunning() else {
                throw CommandFailure("bluetoothd is not running: start it (sudo systemctl start bluetooth); bonds of Bluetide's own host: drop --transport")
            }
            return (bluez, try await bluez.adapter(named: name))
        } catch let failure as CommandFailure {
            await bluez.close()
            throw failure
        } catch {
            await bluez.close()
            throw CommandFailure("\(error)")
        }
    }

    static func list(adapter name: String?, json: Bool) async throws {
        try await with(name) { bluez, adapter in try await list(bluez, adapter, json: json) }
    }

    static func list(_ bluez: BlueZ, _ adapter: BlueZAdapter, json: Bool) async throws {
        let bonds: [BlueZBond]
        do { bonds = try await bluez.bonds(of: adapter) } catch { throw CommandFailure("listing bluetoothd's devices failed: \(error)") }
        if json {
            for bond in bonds {
                var record: [String: JSONOutputValue] = [
                    "device": JSONOutput.device(bond.address, name: bond.name),
                    "adapter": .string(adapter.name),
                    "paired": .bool(bond.paired),
                    "bonded": .bool(bond.bonded),
                    "trusted": .bool(bond.trusted),
                    "connected": .bool(bond.connected),
                ]
                if let key = bond.key {
                    record["securityLevel"] = .number(Double(key.securityLevel.rawValue))
                    record["secureConnections"] = .bool(key.secureConnections)
                    record["keySize"] = .number(Double(key.keySize))
                }
                StandardStreams.output.line(JSONOutput.line("bond", record))
            }
        } else if bonds.isEmpty {
            StandardStreams.output.line("no bonds in bluetoothd on \(adapter.name)")
        } else {
            for bond in bonds { StandardStreams.output.line(describe(bond)) }
        }
    }

    /// "ADDRESS (NAME): bonded, LEVEL…".
    static func describe(_ bond: BlueZBond) -> String {
        var words = [bond.bonded ? "bonded" : "paired, not bonded (keys not kept)"]
        if let key = bond.key {
            words.append("\(key.securityLevel), \(key.secureConnections ? "LE Secure Connections" : "LE legacy pairing"), \(key.keySize)-octet key")
        } else {
            words.append("level not known (bluetoothd's key store is readable by root only)")
        }
        if bond.trusted { words.append("trusted") }
        if bond.connected { words.append("connected") }
        return "\(bond.address)\(bond.name.map { " (\($0))" } ?? ""): " + words.joined(separator: ", ")
    }

    static func remove(_ address: BluetoothAddress, adapter name: String?) async throws {
        try await with(name) { bluez, adapter in try await remove(address, bluez, adapter) }
    }

    static func remove(_ address: BluetoothAddress, _ bluez: BlueZ, _ adapter: BlueZAdapter) async throws {
        let bonds: [BlueZBond]
        do { bonds = try await bluez.bonds(of: adapter) } catch { throw CommandFailure("listing bluetoothd's devices failed: \(error)") }
        guard bonds.contains(where: { $0.address.littleEndianBytes == address.littleEndianBytes }) else {
            throw CommandFailure("bluetoothd on \(adapter.name) has no bond with \(address); `bluetide bonds list --transport bluez` shows its bonded devices")
        }
        do { _ = try await bluez.removeDevice(address, from: adapter) } catch {
            throw CommandFailure("bluetoothd did not remove \(address): \(error)")
        }
        StandardStreams.output.line("removed \(address) from bluetoothd on \(adapter.name): it must pair again")
    }
}
