import BluetideEmulation
import BluetideDeviceModels
import BluetideTransport
import Testing
@testable import BluetideCommands

/// An emulated heart-rate strap on a private virtual link, started by the test (not with
/// `--emulate`) so the test can cut its link: the rig of the link-loss tests of `record` and
/// `subscribe`.
struct LinkLossRig {
    /// The `--transport` value that reaches the strap.
    let link: String
    private let transport: VirtualTransport
    private let device: EmulatedPeripheral

    /// A strap advertising as "Bluetide HRM" from the random static `address`.
    static func start(address: UInt64) async throws -> LinkLossRig {
        let link = privateLink()
        let transport = await VirtualTransport.attach(toLinkNamed: String(link.dropFirst("virtual:".count)))
        let model = try #require(EmulatorCatalog.make(name: "heart-rate"))
        let device = try await EmulatedPeripheral.launch(transport: transport, models: [model], address: .randomStatic(address))
        return LinkLossRig(link: link, transport: transport, device: device)
    }

    /// Runs `command` (under a hang guard), cuts the link once it has printed two values
    /// (progress-based, no fixed wait), and stops the strap when the command ends. Returns what
    /// the command printed and how it ended.
    func run(_ command: @escaping @Sendable (CommandOutput) async throws -> Void) async -> (lines: [String], error: (any Error)?) {
        let collector = LineCollector()
        // A wall-clock rig (the strap ticks in real time): the guard is a generous hang guard,
        // for a machine that starves the test process (30 s ran out once under load).
        let running = Task { try await withGuard(120) { try await command(collector.output) } }
        let transport = transport
        let cut = Task {
            try await collector.wait { $0.filter { $0.contains("bpm") }.count >= 2 }
            await transport.controller.link.linkLoss(transport.controller)
        }
        defer { cut.cancel() }
        var failure: (any Error)?
        do { try await running.value } catch { failure = error }
        await device.stop()
        await device.close()
        return (collector.lines, failure)
    }
}
