import ArgumentParser

/// `bluetide ride`: a trainer and sensors together, live (the default subcommand), exported, or
/// bridged to FTMS apps.
struct RideCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ride",
        abstract: "Ride: trainer and sensors merged live, ERG/grade/workouts, recording, export, web page, FTMS bridge.",
        discussion: """
            Examples (no hardware: --emulate starts devices on an in-process radio):
              bluetide ride --emulate tacx-fec,heart-rate --erg 200
              bluetide ride --emulate ftms-bike,heart-rate --workout sweetspot.zwo \\
                  --ftp 250 --record ride.jsonl
              bluetide ride --replay ride.jsonl --pace 4
              bluetide ride export ride.jsonl --format tcx --output ride.tcx
              bluetide ride bridge --trainer "Tacx Neo 2T" --transport hci-socket:0
              bluetide ride serve --emulate tacx-fec,heart-rate --erg 200 --host 0.0.0.0
            """,
        subcommands: [RideRunCommand.self, RideExportCommand.self, RideBridgeCommand.self, RideServeCommand.self],
        defaultSubcommand: RideRunCommand.self)
}
