import ArgumentParser
import Bluetide
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

            Examples:
              bluetide bonds list
              bluetide bonds remove C0:11:22:33:44:55/R
            """,
        subcommands: [List.self, Remove.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the bonded devices, one line each.")

        @OptionGroup var bonds: BondsOptions

        @Flag(name: .long, help: "One bond record per line (docs/json-output.md).")
        var json = false

        func run() throws {
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

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget the bond with a device.")

        @Argument(help: "The device's address, with /P (public) or /R (random), e.g. C0:11:22:33:44:55/R.")
        var address: String

        @OptionGroup var bonds: BondsOptions

        func run() throws {
            guard let device = try? BluetoothAddress(address) else {
                throw CommandFailure.usage("address \"\(address)\" is not an address: expected six hex bytes and /P or /R, e.g. C0:11:22:33:44:55/R", field: "address")
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

    var path: String { bondsFile ?? Self.defaultPath }
}
