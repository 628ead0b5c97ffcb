import ArgumentParser
import BluetideBase

/// The `bluetide` command line tool.
public struct BluetideCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "bluetide",
        abstract: "Bluetooth Low Energy toolkit: decode device data, talk to devices, emulate them.",
        discussion: """
            Examples (no hardware needed: `virtual` is an in-process radio, --emulate starts devices on it):
              bluetide demo
              bluetide scan --emulate heart-rate,csc
              bluetide subscribe "Bluetide HRM" heart-rate --emulate heart-rate --count 5
              bluetide decode --list
              bluetide decode heart-rate 164E1C03F402
              bluetide decode csc 03A25E01006D0E4B63967F 03A45E0100D7124B63967F \\
                  --circumference 2.105
              bluetide decode fec --json A4094E05192A5A1027FA403032
              bluetide shell "Bluetide HRM" --emulate heart-rate

            Every command takes --log-level LEVEL (or -v, -vv) for logs on standard error, and
            --json where its output is data (docs/json-output.md: one schema for all commands).

            \(ExitStatus.helpText)
            """,
        version: BluetideVersion.current,
        subcommands: [
            DemoCommand.self, DecodeCommand.self, ScanCommand.self, GATTCommand.self, ReadCommand.self,
            WriteCommand.self, SubscribeCommand.self, RecordCommand.self, ReplayCommand.self, EmulateCommand.self,
            ControllersCommand.self, BenchCommand.self, ReflexCommand.self, RingCommand.self, UARTCommand.self,
            RideCommand.self, ShellCommand.self, BondsCommand.self, HelpDumpCommand.self,
            CloneCommand.self, GatewayRunCommand.self, DoctorCommand.self,
        ])

    public init() {}
}
