import Bluetide
import BluetideEmulation
import BluetideDeviceModels
import BluetideSupport
import BluetideTransport
import Testing
@testable import BluetideCommands

/// An emulated heart-rate strap on a private virtual link, started by the test (not with
/// `--emulate`) so the test can cut its link: the rig of the link-loss tests of `record` and
/// `subscribe`. The link, the strap and the command run in virtual time on one manual clock, so
/// the strap's notifications, the command's `--timeout` and the reconnect's back-off pass the
/// same way however busy the machine is.
enum LinkLossRig {
    /// Starts a strap advertising as "Bluetide HRM" from the random static `address`, runs
    /// `command` on the strap's link (its `--transport` value and clock are given), cuts the
    /// link once the command has printed two values (progress-based, no fixed wait), and stops
    /// the strap when the command ends. Returns what the command printed and how it ended.
    static func run(
        address: UInt64, _ command: @escaping @Sendable (_ transport: String, _ output: CommandOutput, _ clock: BluetideClock) async throws -> Void
    ) async throws -> (lines: [String], error: (any Error)?) {
        let collector = LineCollector()
        let failure = try await inVirtualTime(guard: 120) { clock -> (any Error)? in
            let link = String(privateLink().dropFirst("virtual:".count))
            // The link is made on the rig's clock before anyone attaches to it.
            await Bluetooth.prepareVirtualLink(named: link, clock: clock)
            let transport = await VirtualTransport.attach(toLinkNamed: link)
            let model = try #require(EmulatorCatalog.make(name: "heart-rate"))
            let device = try await EmulatedPeripheral.launch(transport: transport, models: [model], address: .randomStatic(address), clock: clock)
            let running = Task { try await command("virtual:\(link)", collector.output, clock) }
            let cut = Task {
                try await collector.wait { $0.filter { $0.contains("bpm") }.count >= 2 }
                await transport.controller.link.linkLoss(transport.controller)
            }
            defer { cut.cancel() }
            var failure: (any Error)?
            do { try await running.value } catch { failure = error }
            await device.stop()
            await device.close()
            return failure
        }
        return (collector.lines, failure)
    }
}
