import ArgumentParser

/// `bluetide ring …`: a COLMI R02 ring, picked once, read live, its history synced into SQLite
/// and exported for pandas.
struct RingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ring",
        abstract: "COLMI R02 smart ring (and its family): pick it once, read it live, raw sensors, settings, sync its history.",
        discussion: """
            Pick the ring once; every other ring command then connects to it by itself (a ring takes one connection at a time, so each command opens the link, does its work and closes it). No ring at hand? --emulate colmi-r02 starts an emulated one on the virtual radio and is remembered with it.

            Examples:
              bluetide ring pair --first --emulate colmi-r02
              bluetide ring battery
              bluetide ring sync --days 7
              bluetide ring export --out ring-data
              python3 -c 'import pandas as pd; \\
                  print(pd.read_csv("ring-data/samples.csv", \\
                  parse_dates=["time"]).head())'
              bluetide ring watch (Ctrl-C stops the measurement and disconnects)
              bluetide ring raw --seconds 10 --out raw.csv
              bluetide ring settings --set hr-interval=10
              bluetide ring pair --transport hci-socket:0   (a real ring)
            See docs/ring.md and docs/ring-analysis.md.
            """,
        subcommands: [
            RingPairCommand.self, RingForgetCommand.self, RingBatteryCommand.self, RingInfoCommand.self,
            RingSyncCommand.self, RingExportCommand.self, RingWatchCommand.self, RingRawCommand.self, RingSettingsCommand.self, RingHeartRateSettingsCommand.self,
            RingFindCommand.self, RingPowerOffCommand.self, RingResetCommand.self, RingServeCommand.self,
        ])
}
