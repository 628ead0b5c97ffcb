import ArgumentParser

/// The `bluetide` command: decode, and later scan, connect, emulate, record and replay.
public struct BluetideCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "bluetide",
        abstract: "Bluetooth Low Energy toolkit: decode device data, talk to devices, emulate them.")

    public init() {}
}
