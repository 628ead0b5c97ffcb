import ArgumentParser

/// The `bluetide` command line tool.
public struct BluetideCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "bluetide",
        abstract: "Bluetooth Low Energy toolkit: decode device data, talk to devices, emulate them.",
        discussion: """
            Examples:
              bluetide decode --list
              bluetide decode heart-rate 164E1C03F402
              bluetide decode csc 03A25E01006D0E4B63967F 03A45E0100D7124B63967F --circumference 2.105
              bluetide decode fec --json A4094E05192A5A1027FA403032
            """,
        subcommands: [
            DecodeCommand.self, BenchCommand.self, EmulateCommand.self, ReplayCommand.self, ControllersCommand.self,
        ])

    public init() {}
}
