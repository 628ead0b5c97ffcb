import ArgumentParser
import Foundation

/// `bluetide doctor`: which adapters this machine has, who holds each, whether the system bus
/// and bluetoothd answer, whether this process may open a user channel — and which transport
/// to use, as a command line.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check this machine's Bluetooth and say which transport to use.",
        discussion: """
            Lists the adapters (index, address, up or down, powered, rfkill, who holds each: \
            bluetoothd, a user channel, or nobody), whether the D-Bus system bus and bluetoothd \
            answer and BlueZ's version, and whether this process may open a user channel (root \
            or CAP_NET_ADMIN); then recommends a transport with the exact command line. Nothing \
            is changed: no adapter is opened or powered.

            bluez:hciN shares an adapter with the system through bluetoothd (headphones and \
            keyboards keep working); hci-socket:N gives an adapter to Bluetide's own host stack \
            (every feature, but the system loses it while Bluetide runs). With two adapters the \
            advice is to keep one for the system and give the other to Bluetide.

            With --json: one adapter record per adapter, one system record, one recommendation \
            record (docs/json-output.md). Exits 0 whatever it finds.

            Examples:
              bluetide doctor
              bluetide doctor --json
            """)

    @Flag(name: .long, help: "One JSON object per line (docs/json-output.md) instead of text.")
    var json = false

    func run() async throws {
        let facts = await DoctorProbe.facts()
        let report = DoctorAdvice.advise(facts)
        for line in json ? Self.jsonLines(facts, report) : Self.textLines(facts, report) {
            StandardStreams.output.line(line)
        }
    }

    static func textLines(_ facts: DoctorFacts, _ report: DoctorReport) -> [String] {
        var lines: [String] = []
        if facts.adapters.isEmpty {
            lines.append(facts.kernelBluetooth ? "adapters: none" : "adapters: none (this kernel has no Bluetooth: no /sys/class/bluetooth)")
        } else {
            lines.append("adapters:")
            for adapter in facts.adapters {
                var state: [String] = []
                if let up = adapter.up { state.append(up ? "up" : "down") }
                if let powered = adapter.powered { state.append(powered ? "powered" : "not powered") }
                if adapter.hardBlocked == true { state.append("rfkill: hard-blocked") }
                else if adapter.softBlocked == true { state.append("rfkill: soft-blocked") }
                else if adapter.softBlocked != nil { state.append("rfkill: unblocked") }
                let holder: String = switch report.holders[adapter.index] ?? .nobody {
                case .bluetoothd: "held by bluetoothd"
                case .userChannel: "held by another program (a user channel)"
                case .nobody: "held by nobody"
                }
                lines.append("  \(adapter.name)  \(adapter.address ?? "address unknown")  \(state.joined(separator: ", "))  \(holder)")
            }
        }
        lines.append("system:")
        if let problem = facts.libdbusProblem {
            lines.append("  D-Bus: \(problem)")
        } else if let problem = facts.systemBusProblem {
            lines.append("  D-Bus system bus: not reachable (\(problem))")
        } else {
            lines.append("  D-Bus system bus: reachable (libdbus \(facts.libdbusVersion ?? "?"))")
        }
        let version = facts.bluezVersion.map { ", BlueZ \($0)" } ?? ""
        switch facts.bluetoothdRunning {
        case true?: lines.append("  bluetoothd: running\(version)")
        case false?: lines.append("  bluetoothd: not running\(version)")
        case nil: lines.append("  bluetoothd: unknown (the bus could not be asked)\(version)")
        }
        lines.append("  user channel (hci-socket): " + (facts.isRoot ? "allowed (root)" : facts.hasNetAdmin ? "allowed (CAP_NET_ADMIN)" : "not allowed (needs root or CAP_NET_ADMIN)"))
        for note in report.notes { lines.append("note: \(note)") }
        let recommendation = report.recommendation
        lines.append("recommendation: \(recommendation.summary)")
        for step in recommendation.before { lines.append("  \(step)") }
        lines.append("  \(recommendation.command)")
        lines.append("  why: \(recommendation.reason)")
        return lines
    }

    static func jsonLines(_ facts: DoctorFacts, _ report: DoctorReport) -> [String] {
        var lines: [String] = []
        for adapter in facts.adapters {
            var fields: [String: JSONOutputValue] = [
                "adapter": .string(adapter.name), "index": .integer(Int64(adapter.index)),
                "holder": .string((report.holders[adapter.index] ?? .nobody).rawValue),
            ]
            if let address = adapter.address { fields["device"] = .object(["address": .string(address), "addressType": .string("public")]) }
            if let up = adapter.up { fields["up"] = .bool(up) }
            if let powered = adapter.powered { fields["powered"] = .bool(powered) }
            if let soft = adapter.softBlocked, let hard = adapter.hardBlocked {
                fields["rfkill"] = .object(["softBlocked": .bool(soft), "hardBlocked": .bool(hard)])
            }
            lines.append(JSONOutput.line("adapter", fields))
        }
        var libdbus: [String: JSONOutputValue] = ["loaded": .bool(facts.libdbusProblem == nil)]
        if let version = facts.libdbusVersion { libdbus["version"] = .string(version) }
        if let problem = facts.libdbusProblem { libdbus["problem"] = .string(problem) }
        var bus: [String: JSONOutputValue] = ["reachable": .bool(facts.libdbusProblem == nil && facts.systemBusProblem == nil)]
        if let problem = facts.systemBusProblem { bus["problem"] = .string(problem) }
        var bluetoothd: [String: JSONOutputValue] = [:]
        if let running = facts.bluetoothdRunning { bluetoothd["running"] = .bool(running) }
        if let version = facts.bluezVersion { bluetoothd["version"] = .string(version) }
        lines.append(JSONOutput.line("system", [
            "kernelBluetooth": .bool(facts.kernelBluetooth), "libdbus": .object(libdbus), "systemBus": .object(bus),
            "bluetoothd": .object(bluetoothd),
            "userChannel": .object([
                "allowed": .bool(facts.mayOpenUserChannel),
                "reason": .string(facts.isRoot ? "root" : facts.hasNetAdmin ? "CAP_NET_ADMIN" : "needs root or CAP_NET_ADMIN"),
            ]),
            "notes": .array(report.notes.map(JSONOutputValue.string)),
        ]))
        let recommendation = report.recommendation
        lines.append(JSONOutput.line("recommendation", [
            "transport": .string(recommendation.transport), "command": .string(recommendation.command),
            "before": .array(recommendation.before.map(JSONOutputValue.string)), "reason": .string(recommendation.reason),
            "summary": .string(recommendation.summary),
        ]))
        return lines
    }
}
