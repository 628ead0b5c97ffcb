import BluetideTestSupport
import Foundation
import Testing

/// `bluetide gatt` against a Bumble peripheral that breaks the ATT protocol on purpose
/// (`Interop/bumble/hostile_gatt_peer.py` on the second of two linked Bumble controllers):
/// duplicated responses, a response nobody asked for, a backwards service range and value
/// handles 0 and 0xFFFF each end the command with one line saying "protocol error" and exit
/// status 1, and nothing the broken answers say is printed as the device's. The same peer
/// behaving is dumped normally (the control).
@Suite("bluetide gatt against a hostile Bumble peer", .serialized, .bumbleInterop, .timeLimit(.minutes(4)))
struct GATTHostilePeerBumbleTests {
    static let peerAddress = "F1:F2:F3:F4:F5:F7"
    static let device = peerAddress + "/R"

    /// `bluetide gatt` of a peer started with `--mode mode`, each on fresh linked controllers.
    static func gatt(mode: String, _ arguments: [String] = []) async throws -> BluetideExecutable.Completion {
        let (controllers, ports) = try await BumbleLinkedControllers.start(count: 2)
        var peer: BumbleProcess?
        do {
            let started = try await BumbleProcess.launchPython(
                .interopScript("hostile_gatt_peer.py"),
                arguments: ["\(ports[1])", "--mode", mode, "--address", peerAddress, "--exit-on-stdin-eof"],
                name: "hostile-peer")
            peer = started
            _ = try await started.firstJSON("event", "ready", timeout: .seconds(30))
            let run = try await BluetideExecutable.run(
                ["gatt", device, "--transport", "tcp-client:127.0.0.1:\(ports[0])", "--timeout", "10"] + arguments)
            await started.stop()
            await controllers.stop()
            return run
        } catch {
            await peer?.stop()
            await controllers.stop()
            throw error
        }
    }

    /// The one error line of a failed run, checked to be about the protocol.
    static func expectProtocolError(_ run: BluetideExecutable.Completion, saying detail: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(run.status == 1, "stdout \(run.stdout), stderr \(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.stderr.count == 1, "\(run.stderr)", sourceLocation: sourceLocation)
        let line = run.stderr.first ?? ""
        // Text mode: "bluetide: …"; with --json one error object.
        #expect(line.hasPrefix("bluetide: ") || line.hasPrefix("{\"error\""), "\(line)", sourceLocation: sourceLocation)
        #expect(line.contains("protocol error: "), "\(line)", sourceLocation: sourceLocation)
        #expect(line.contains(detail), "\(line)", sourceLocation: sourceLocation)
        // Nothing made of the broken answers reached standard output.
        #expect(!run.stdout.contains { $0.contains("Battery Level") && !$0.contains("87 %") }, "\(run.stdout)", sourceLocation: sourceLocation)
        #expect(!run.stdout.contains { $0.contains("(handles 10–5)") || $0.contains("(handles 1–0)") }, "\(run.stdout)", sourceLocation: sourceLocation)
    }

    @Test func theSamePeerBehavingIsDumped() async throws {
        let run = try await Self.gatt(mode: "none")
        #expect(run.status == 0, "stdout \(run.stdout), stderr \(run.stderr)")
        #expect(run.stdout.contains { $0.contains("2A19 Battery Level [read] = 57") }, "\(run.stdout)")
        #expect(run.stdout.filter { $0.hasPrefix("service 180D") }.count == 1, "\(run.stdout)")
    }

    @Test func duplicatedResponsesAreAProtocolError() async throws {
        let run = try await Self.gatt(mode: "duplicate")
        Self.expectProtocolError(run, saying: "protocol error: the device ")
        #expect(run.stdout.filter { $0.hasPrefix("service 1800") }.count <= 1, "\(run.stdout)")
    }

    @Test func aResponseNobodyAskedForIsAProtocolError() async throws {
        let run = try await Self.gatt(mode: "unsolicited")
        Self.expectProtocolError(run, saying: "Read By Group Type Response (0x11)")
        #expect(!run.stdout.contains { $0.contains("handles 1–65535") }, "\(run.stdout)")
    }

    @Test func aBackwardsServiceRangeIsAProtocolError() async throws {
        let run = try await Self.gatt(mode: "backwards", ["--json"])
        Self.expectProtocolError(run, saying: "backwards handle range 10–5")
        #expect(run.stdout.isEmpty, "\(run.stdout)")
    }

    @Test func valueHandlesZeroAndFFFFAreProtocolErrors() async throws {
        for (mode, handle) in [("zero-handle", "0"), ("ffff-handle", "65535")] {
            let run = try await Self.gatt(mode: mode)
            Self.expectProtocolError(run, saying: "gives value handle \(handle)")
        }
    }
}
