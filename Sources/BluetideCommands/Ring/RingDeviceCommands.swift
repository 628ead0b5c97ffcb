import ArgumentParser
import Bluetide
import BluetideRing
import Foundation

/// `bluetide ring battery`.
struct RingBatteryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "battery", abstract: "The paired ring's battery level.",
        discussion: "Examples:\n  bluetide ring battery\n  bluetide ring battery --json")

    @OptionGroup var connection: RingConnectionOptions
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() async throws { try await execute(CommandOutput.standardOutput()) }

    func execute(_ output: CommandOutput) async throws {
        let link = try await connection.open()
        let battery = try await link.use { try await $0.battery() }
        if json {
            output.emit(RingJSON.line("battery", device: link.device, Battery(levelPercent: Int(battery.levelPercent), charging: battery.isCharging)))
        } else {
            output.emit("\(link.label): battery \(battery.levelPercent) %\(battery.isCharging ? ", charging" : "")")
        }
    }

    /// The `battery` record's fields beside `device`.
    struct Battery: Encodable {
        let levelPercent: Int
        let charging: Bool
    }
}

/// `bluetide ring info`.
struct RingInfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info", abstract: "Firmware, hardware, features, battery and heart-rate logging of the paired ring.",
        discussion: "Examples:\n  bluetide ring info\n  bluetide ring info --json")

    @OptionGroup var connection: RingConnectionOptions
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() async throws { try await execute(CommandOutput.standardOutput()) }

    struct Info: Encodable {
        var ring: String
        var firmware: String?
        var hardware: String?
        var batteryPercent: Int
        var charging: Bool
        var heartRateLog: Bool
        var heartRateLogIntervalMinutes: Int
        var features: [String]
        /// The family member the ring's name says it is (docs/ring.md "The family").
        var model: String?
        /// Whether the ring asks for an OS bond (`3C` flag 0x08); asked only of models known to.
        var bondRequested: Bool?

        // `ring` (the label) is the human output's; the `ring-info` record names the ring as `device`.
        enum CodingKeys: String, CodingKey {
            case firmware, hardware, batteryPercent, charging, heartRateLog, heartRateLogIntervalMinutes, features, model, bondRequested
        }
    }

    func execute(_ output: CommandOutput) async throws {
        let link = try await connection.open()
        let info = try await link.use { ring -> Info in
            let device = try await ring.deviceInformation()
            let battery = try await ring.battery()
            let settings = try await ring.heartRateLogSettings()
            var features: [String] = []
            if let c = await ring.capabilities {
                if c.supportsSpO2 { features.append("SpO2") }
                if c.supportsTemperature { features.append("temperature") }
                if c.supportsStress { features.append("stress") }
                if c.supportsHRV { features.append("HRV") }
                if c.usesNewSleepProtocol { features.append("big-data sleep") }
            }
            if await ring.hasScreen { features.append("screen") }
            let model = await ring.model
            // Only models known to ask are asked: an R02 may never answer `3C`.
            let bond: Bool? = model?.mayAskForBond == true ? await ring.bondRequested : nil
            return Info(
                ring: link.label, firmware: device.firmware, hardware: device.hardware, batteryPercent: Int(battery.levelPercent),
                charging: battery.isCharging, heartRateLog: settings.enabled, heartRateLogIntervalMinutes: Int(settings.intervalMinutes),
                features: features, model: model?.displayName, bondRequested: bond)
        }
        if json { output.emit(RingJSON.line("ring-info", device: link.device, info)); return }
        output.emit("ring      \(info.ring)")
        output.emit("model     \(info.model ?? "unknown (not a name of the family in docs/ring.md)")")
        output.emit("firmware  \(info.firmware ?? "unknown")")
        output.emit("hardware  \(info.hardware ?? "unknown")")
        output.emit("battery   \(info.batteryPercent) %\(info.charging ? ", charging" : "")")
        output.emit("HR log    \(info.heartRateLog ? "on, every \(info.heartRateLogIntervalMinutes) min" : "off")")
        output.emit("features  \(info.features.isEmpty ? "none reported" : info.features.joined(separator: ", "))")
        if info.bondRequested == true {
            output.emit("bonding   the ring asks for a bond (3C flag 0x08): the link was paired (and bonded when a bond file is in use)")
        }
    }
}

/// `bluetide ring hr-log`: read or change heart-rate logging.
struct RingHeartRateSettingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hr-log", abstract: "Show or change how often the ring logs heart rate by itself.",
        discussion: """
            Examples:
              bluetide ring hr-log                 (show)
              bluetide ring hr-log --on --interval 10
              bluetide ring hr-log --off
            """)

    @OptionGroup var connection: RingConnectionOptions
    @Flag(name: .long, help: "Turn logging on.") var on = false
    @Flag(name: .long, help: "Turn logging off.") var off = false
    @Option(name: .long, help: "Minutes between measurements: 5 to 60, a multiple of 5.") var interval: Int?
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() async throws { try await execute(CommandOutput.standardOutput()) }

    func checkOptions() throws {
        if on && off { throw CommandFailure.usage("give --on or --off, not both", field: "--on") }
        if let interval, !(5...60).contains(interval) || interval % 5 != 0 {
            throw CommandFailure("--interval \(interval): expected 5 to 60 minutes in steps of 5, e.g. --interval 30")
        }
    }

    func execute(_ output: CommandOutput) async throws {
        try checkOptions()
        let link = try await connection.open()
        let settings = try await link.use { ring -> COLMIHeartRateLogSettings in
            let current = try await ring.heartRateLogSettings()
            guard on || off || interval != nil else { return current }
            return try await ring.setHeartRateLog(enabled: on || (!off && current.enabled), intervalMinutes: interval ?? Int(current.intervalMinutes))
        }
        if json {
            struct Out: Encodable { let enabled: Bool; let intervalMinutes: Int }
            output.emit(RingJSON.line("hr-log", device: link.device, Out(enabled: settings.enabled, intervalMinutes: Int(settings.intervalMinutes))))
        } else {
            output.emit("heart-rate log \(settings.enabled ? "on, every \(settings.intervalMinutes) min" : "off")")
        }
    }
}

/// `bluetide ring find`.
struct RingFindCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "find", abstract: "Flash the ring's LED for about 10 s to find it.", discussion: "Example:\n  bluetide ring find")

    @OptionGroup var connection: RingConnectionOptions

    func run() async throws { try await execute(CommandOutput.standardOutput()) }

    func execute(_ output: CommandOutput) async throws {
        let link = try await connection.open()
        try await link.use { try await $0.findDevice() }
        output.emit("\(link.label): flashing its LED for about 10 s")
    }
}

/// `bluetide ring power-off --yes`.
struct RingPowerOffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "power-off", abstract: "Turn the ring off (it comes back on when charged). Needs --yes.",
        discussion: "Example:\n  bluetide ring power-off --yes")

    @OptionGroup var connection: RingConnectionOptions
    @Flag(name: .long, help: "Really do it.") var yes = false

    func run() async throws { try await execute(CommandOutput.standardOutput()) }

    func execute(_ output: CommandOutput) async throws {
        try await RingConfirmedAction.run(
            yes: yes, connection: connection, output: output,
            refusal: "power-off turns the ring off until it is put on its charger; pass --yes to do it", done: "powering off"
        ) { try await $0.powerOff() }
    }
}

/// `bluetide ring reset --yes`.
struct RingResetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset", abstract: "Factory-reset the ring: erases its settings and history. Needs --yes.",
        discussion: "Sync first (bluetide ring sync) to keep the history.\nExample:\n  bluetide ring reset --yes")

    @OptionGroup var connection: RingConnectionOptions
    @Flag(name: .long, help: "Really erase the ring.") var yes = false

    func run() async throws { try await execute(CommandOutput.standardOutput()) }

    func execute(_ output: CommandOutput) async throws {
        try await RingConfirmedAction.run(
            yes: yes, connection: connection, output: output,
            refusal: "reset erases the ring's settings and all history not yet synced; run `bluetide ring sync` first, then pass --yes",
            done: "factory reset sent"
        ) { try await $0.factoryReset() }
    }
}

/// A command that only runs with `--yes`: refuses with a line saying why, else connects, acts, reports.
enum RingConfirmedAction {
    static func run(
        yes: Bool, connection: RingConnectionOptions, output: CommandOutput, refusal: String, done: String,
        _ action: (Ring) async throws -> Void
    ) async throws {
        guard yes else { throw CommandFailure.usage(refusal, field: "--yes") }
        let link = try await connection.open()
        try await link.use(action)
        output.emit("\(link.label): \(done)")
    }
}
