import BluetideTestSupport
import BluetideTransport
import Foundation
import Testing
@testable import BluetideBench
@testable import BluetideCommands

/// `bluetide bench` against Bumble's bench app (`bumble.apps.bench`, through
/// `Interop/bumble/bench.py`, which fixes Bumble 0.0.236's GATT sender) on two linked Bumble
/// controllers: every scenario, with Bluetide as the central and as the peripheral.
@Suite(.bumbleInterop, .serialized) struct BumbleBenchInteropTests {
    /// One pairing: what Bluetide runs and what Bumble runs.
    struct Pairing: CustomTestStringConvertible, Sendable {
        let ours: BumbleBenchRole
        let scenario: BumbleBenchScenario
        var packetCount: Int { scenario == .ping || scenario == .pong ? 20 : 100 }
        var packetSize: Int { scenario == .ping || scenario == .pong ? 100 : 500 }
        var testDescription: String { "Bluetide \(ours.rawValue) \(scenario.rawValue) ↔ Bumble \(scenario.peer.rawValue)" }
        /// What Bumble logs when its side of the run succeeded.
        var bumbleSuccessLine: String {
            switch scenario.peer {
            case .send: "@@@ Received ACK"
            case .receive: "@@@ Received last packet"
            case .ping: "@@@ RTTs"
            case .pong: "=== Done!"
            }
        }
    }

    static let pairings: [Pairing] = [
        Pairing(ours: .central, scenario: .send), Pairing(ours: .central, scenario: .receive),
        Pairing(ours: .central, scenario: .ping), Pairing(ours: .central, scenario: .pong),
        Pairing(ours: .peripheral, scenario: .receive), Pairing(ours: .peripheral, scenario: .send),
        Pairing(ours: .peripheral, scenario: .pong), Pairing(ours: .peripheral, scenario: .ping),
    ]

    @Test(arguments: pairings)
    func bluetideAndBumbleRunTheScenario(_ pairing: Pairing) async throws {
        try await benchTimeLimit(120) {
            let (controllers, ports) = try await BumbleLinkedControllers.start(count: 2)
            do {
                try await Self.run(pairing, centralPort: ports[0], peripheralPort: ports[1])
            } catch {
                await controllers.stop()
                throw error
            }
            await controllers.stop()
        }
    }

    static func run(_ pairing: Pairing, centralPort: UInt16, peripheralPort: UInt16) async throws {
        let ourPort = pairing.ours == .central ? centralPort : peripheralPort
        let bumblePort = pairing.ours == .central ? peripheralPort : centralPort
        let count = String(pairing.packetCount), size = String(pairing.packetSize)
        var ourArguments = ["--quiet", "--scenario", pairing.scenario.rawValue, "--start-delay", "0", "--timeout", "30"]
        if pairing.scenario.originatesPackets { ourArguments += ["--packet-count", count, "--packet-size", size] }
        let options = try BumbleBenchOptions.parse(ourArguments)
        let settings = try options.settings(for: pairing.ours)

        var bumbleArguments = ["--scenario", pairing.scenario.peer.rawValue, "--start-delay", "0"]
        if pairing.scenario.peer.originatesPackets { bumbleArguments += ["--packet-count", count, "--packet-size", size] }
        bumbleArguments += [pairing.ours == .central ? "peripheral" : "central", "tcp-client:127.0.0.1:\(bumblePort)", "--exit-on-stdin-eof"]

        let transport = try await Transport.open("tcp-client:127.0.0.1:\(ourPort)")
        let ownAddress = try benchOwnAddress(
            pairing.ours == .central ? BumbleBenchService.centralAddress : BumbleBenchService.peripheralAddress, option: "address")
        let ours = Task {
            try await BumbleBenchSide.run(
                role: pairing.ours, transport: transport, address: ownAddress, peer: BumbleBenchService.peripheralAddress,
                name: BumbleBenchService.peripheralName, options: options, settings: settings)
        }
        let bumble: BumbleProcess
        do {
            bumble = try await BumbleProcess.launchPython(.interopScript("bench.py"), arguments: bumbleArguments, name: "bumble-bench")
        } catch {
            ours.cancel()
            throw error
        }
        let reports: [BumbleBenchReport]
        do {
            reports = try await ours.value
        } catch {
            await bumble.stop()
            throw await bumble.failure("Bluetide's side failed: \(error)")
        }
        let status = await bumble.waitForExit(timeout: .seconds(30))
        let log = await bumble.output(.stderr)
        let problem = status == 0 ? "" : "\(await bumble.failure("Bumble's bench did not exit cleanly"))"
        await bumble.stop()
        #expect(status == 0, "\(problem)")
        #expect(log.contains { $0.contains(pairing.bumbleSuccessLine) }, "Bumble logged no \"\(pairing.bumbleSuccessLine)\": \(log.suffix(20))")
        #expect(!log.contains { $0.contains("Unexpected packet") || $0.contains("Traceback") }, "\(log.suffix(20))")

        let report = try #require(reports.first)
        #expect(reports.count == 1)
        #expect(report.isClean, "\(report.line)")
        #expect(report.packets == pairing.packetCount, "\(report.line)")
        #expect(report.mtu == 517, "both sides offer 517: \(report.line)")
        if pairing.scenario == .ping { #expect(report.roundTrip?.count == pairing.packetCount) }
        if pairing.scenario == .send { #expect(report.bytes == pairing.packetCount * pairing.packetSize) }
    }
}
