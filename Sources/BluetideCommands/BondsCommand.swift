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
            Bonds live in a JSON file (mode 0600), by default ~/.config/bluetide/bonds.json;
            device commands given the same --bonds file encrypt a reconnect from it without
            pairing again. Removing a bond makes the device pair again next time (remove it on
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
    /// `$XDG_CONFIG_HOME/bluetide/bonds.json` or `~/.config/bluetide/bonds.json`.
    static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (NSHomeDirectory() + "/.config")
        return base + "/bluetide/bonds.json"
    }

    @Option(name: .long, help: ArgumentHelp("The bond file (default: ~/.config/bluetide/bonds.json).", valueName: "path"))
    var bondsFile: String?

    var path: String { bondsFile ?? Self.defaultPath }
}
