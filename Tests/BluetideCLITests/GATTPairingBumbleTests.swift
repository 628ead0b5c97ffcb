import BluetideTestSupport
import Foundation
import Testing

/// The issue's "done when" at the command line: the built `bluetide gatt` reads the encrypted
/// and authenticated values of a Bumble peripheral (`pairing_peer.py` on the second of two
/// linked Bumble controllers) by pairing, a second run re-encrypts from the bond file without
/// pairing, and every failed pairing ends in one line and a non-zero exit.
@Suite("bluetide gatt pairs with a Bumble peripheral", .serialized, .bumbleInterop, .timeLimit(.minutes(4)))
struct GATTPairingBumbleTests {
    static let peerAddress = "F1:F2:F3:F4:F5:F6"
    static let device = peerAddress + "/R"
    static let encrypted = "B1DE0101-0000-4000-8000-00000000B1DE"
    static let authenticated = "B1DE0102-0000-4000-8000-00000000B1DE"
    static let script = BumbleEnvironment.repositoryRoot.appendingPathComponent("Tests/BluetideSecurityTests/Bumble/pairing_peer.py")

    /// Linked controllers for the whole test; `body` gets the port `bluetide` connects to and
    /// starts peers with `peer(arguments)` (each serves one connection, then exits).
    static func withControllers(
        _ body: @Sendable (_ port: UInt16, _ peer: @Sendable ([String]) async throws -> BumbleProcess) async throws -> Void
    ) async throws {
        let (controllers, ports) = try await BumbleLinkedControllers.start(count: 2)
        let started = StartedPeers()
        do {
            try await body(ports[0]) { arguments in
                let peer = try await BumbleProcess.launchPython(
                    .script(script),
                    arguments: ["\(ports[1])", "--role", "peripheral", "--address", peerAddress, "--exit-on-stdin-eof"] + arguments,
                    name: "pairing-peer")
                await started.add(peer)
                _ = try await peer.firstJSON("event", "ready", timeout: .seconds(30))
                return peer
            }
        } catch {
            await started.stopAll()
            await controllers.stop()
            throw error
        }
        await started.stopAll()
        await controllers.stop()
    }

    /// `bluetide gatt` of the peer on `port` with `arguments` after the transport.
    static func gatt(_ port: UInt16, _ arguments: [String]) async throws -> BluetideExecutable.Completion {
        try await BluetideExecutable.run(["gatt", device, "--transport", "tcp-client:127.0.0.1:\(port)", "--timeout", "10"] + arguments)
    }

    /// The peer's events once its link is gone (it exits after one connection).
    static func events(of peer: BumbleProcess) async -> [String] {
        _ = try? await peer.firstJSON("event", "disconnected", timeout: .seconds(20))
        return await peer.output(.stdout).compactMap { JSONValue(line: $0)?["event"]?.string }
    }

    /// The keys of every bond in the bond file, as written.
    static func bondKeys(_ path: String) throws -> [String] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        let bonds = try #require(object?["bonds"] as? [Any], "no bonds in \(path)")
        return try bonds.map { String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self) }
    }

    @Test func justWorksReadsTheEncryptedValueAndTheNextRunReEncryptsFromTheBond() async throws {
        let folder = NSTemporaryDirectory() + "bluetide-cli-pairing-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bonds = folder + "/bonds.json"
        let peerArguments = ["--io", "no-io", "--keystore", folder + "/bumble-keys.json"]
        try await Self.withControllers { port, startPeer in
            // First run: the encrypted value needs pairing; gatt pairs Just Works and reads it.
            let first = try await startPeer(peerArguments)
            let paired = try await Self.gatt(port, ["--pairing", "just-works", "--bonds-file", bonds])
            #expect(paired.status == 0, "stdout \(paired.stdout), stderr \(paired.stderr)")
            #expect(paired.stdout.contains("  \(Self.encrypted) [read] = 65 6E 63 72 79 70 74 65 64  \"encrypted\""), "\(paired.stdout)")
            #expect(!paired.stdout.joined().contains("insufficient"), "\(paired.stdout)")
            let firstEvents = await Self.events(of: first)
            #expect(firstEvents.contains("pairing"), "\(firstEvents)")
            let keys = try Self.bondKeys(bonds)
            #expect(keys.count == 1)
            let mode = try FileManager.default.attributesOfItem(atPath: bonds)[.posixPermissions] as? Int
            #expect(mode == 0o600)

            // Second run, new processes on both sides: encryption from the bond, no pairing.
            let second = try await startPeer(peerArguments)
            let bonded = try await Self.gatt(port, ["--bonds-file", bonds, "--json"])
            #expect(bonded.status == 0, "stdout \(bonded.stdout), stderr \(bonded.stderr)")
            let line = try #require(bonded.stdout.last)
            let dump = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            let characteristics = (dump["services"] as? [[String: Any]] ?? []).flatMap { $0["characteristics"] as? [[String: Any]] ?? [] }
            let value = try #require(characteristics.first { $0["uuid"] as? String == Self.encrypted }?["value"] as? [String: Any])
            #expect(value["hex"] as? String == "656e63727970746564")
            #expect(value["summary"] as? String == "\"encrypted\"")
            let secondEvents = await Self.events(of: second)
            #expect(secondEvents.contains("encryption"), "\(secondEvents)")
            #expect(!secondEvents.contains("pairing"), "Bumble paired again: \(secondEvents)")
            #expect(try Self.bondKeys(bonds) == keys, "the bond's keys changed")
        }
    }

    @Test func aPasskeyShownByTheDeviceReadsTheAuthenticatedValue() async throws {
        try await Self.withControllers { port, startPeer in
            let peer = try await startPeer(["--io", "display", "--passkey", "123456"])
            let run = try await Self.gatt(port, ["--pairing", "passkey:123456"])
            #expect(run.status == 0, "stdout \(run.stdout), stderr \(run.stderr)")
            #expect(run.stdout.contains("  \(Self.authenticated) [read] = 61 75 74 68 65 6E 74 69 63 61 74 65 64  \"authenticated\""), "\(run.stdout)")
            let paired = try await peer.firstJSON("event", "pairing", timeout: .seconds(20))
            #expect(paired["authenticated"]?.bool == true)
        }
    }

    /// Numeric comparison: `--pairing confirm` accepts the number, the Bumble user says yes.
    @Test func confirmAcceptsNumericComparison() async throws {
        try await Self.withControllers { port, startPeer in
            let peer = try await startPeer(["--io", "display-yes-no"])
            async let run = Self.gatt(port, ["--pairing", "confirm"])
            _ = try await peer.firstJSON("event", "compare", timeout: .seconds(30))
            try await peer.writeToStdin("confirm yes\n")
            let completion = try await run
            #expect(completion.status == 0, "stdout \(completion.stdout), stderr \(completion.stderr)")
            #expect(completion.stdout.contains { $0.contains("\"authenticated\"") }, "\(completion.stdout)")
            let paired = try await peer.firstJSON("event", "pairing", timeout: .seconds(20))
            #expect(paired["authenticated"]?.bool == true)
        }
    }

    /// A device with a keyboard only: this side shows the passkey ("Type NNNNNN on …") and
    /// the Bumble user types it.
    @Test func aPasskeyToTypeOnTheDeviceIsShown() async throws {
        try await Self.withControllers { port, startPeer in
            let peer = try await startPeer(["--io", "keyboard"])
            let gatt = try BluetideExecutable.launch(
                ["gatt", Self.device, "--transport", "tcp-client:127.0.0.1:\(port)", "--timeout", "10", "--pairing", "confirm"])
            do {
                let shown = try await gatt.firstLine(from: .stderr, timeout: .seconds(30), describing: "the passkey to type") {
                    $0.hasPrefix("Type ") && $0.hasSuffix(" on \(Self.device)")
                }
                let passkey = try #require(Int(shown.dropFirst("Type ".count).prefix(6)), "\(shown)")
                _ = try await peer.firstJSON("event", "enter passkey", timeout: .seconds(20))
                try await peer.writeToStdin("passkey \(passkey)\n")
                let status = await gatt.waitForCompletion(timeout: .seconds(60))
                let stdout = await gatt.output(.stdout)
                let stderr = await gatt.output(.stderr)
                #expect(status == 0, "stdout \(stdout), stderr \(stderr)")
                #expect(stdout.contains { $0.contains("\"authenticated\"") }, "\(stdout)")
            } catch {
                await gatt.stop()
                throw error
            }
            await gatt.stop()
        }
    }

    @Test func aWrongPasskeyFailsInOneLine() async throws {
        try await Self.withControllers { port, startPeer in
            let peer = try await startPeer(["--io", "display", "--passkey", "123456"])
            let run = try await Self.gatt(port, ["--pairing", "passkey:654321"])
            #expect(run.status == 1, "stdout \(run.stdout), stderr \(run.stderr)")
            #expect(run.stderr == [
                "bluetide: pairing with \(Self.device) failed: it says the passkey did not match (confirm value failed, 0x04); check the six digits it shows and pair again",
            ])
            let failed = try await peer.firstJSON("event", "pairing failed", timeout: .seconds(20))
            #expect(failed["reason"]?.int == 4)
        }
    }

    @Test func aDeviceThatRefusesToPairFailsInOneLine() async throws {
        try await Self.withControllers { port, startPeer in
            _ = try await startPeer(["--io", "no-io", "--refuse-pairing"])
            let run = try await Self.gatt(port, ["--pairing", "just-works", "--json"])
            #expect(run.status == 1, "stdout \(run.stdout), stderr \(run.stderr)")
            #expect(run.stdout.isEmpty)
            let line = try #require(run.stderr.first)
            #expect(run.stderr.count == 1, "\(run.stderr)")
            let error = try #require((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["error"] as? [String: Any])
            #expect(error["message"] as? String == "\(Self.device) refused to pair (pairing not supported, 0x05): it does not pair, or not now; put it in pairing mode and try again")
        }
    }

    /// A passkey given for a device without display or keyboard: it pairs Just Works (the
    /// values are read), and one warning says the passkey was not used.
    @Test func aPasskeyForADeviceWithoutDisplayWarnsThatItWasNotUsed() async throws {
        try await Self.withControllers { port, startPeer in
            _ = try await startPeer(["--io", "no-io"])
            let run = try await Self.gatt(port, ["--pairing", "passkey:123456"])
            #expect(run.status == 0, "stdout \(run.stdout), stderr \(run.stderr)")
            #expect(run.stdout.contains { $0.contains("\"encrypted\"") }, "\(run.stdout)")
            #expect(run.stderr.count == 1, "\(run.stderr)")
            #expect(run.stderr.first?.contains("encrypted but not authenticated") == true, "\(run.stderr)")
            #expect(run.stderr.first?.contains("--pairing passkey:123456 was not used") == true, "\(run.stderr)")
        }
    }

    // MARK: At a terminal (tmux gives the command a pseudo-terminal)

    /// Without `--pairing`, at a terminal, `gatt` asks for the passkey the device shows.
    @Test(.needs("tmux", install: "apt-get install tmux"))
    func atATerminalGATTAsksForThePasskeyTheDeviceShows() async throws {
        try await Self.withControllers { port, startPeer in
            _ = try await startPeer(["--io", "display", "--passkey", "123456"])
            try await Self.inTerminal("gatt \(Self.device) --transport tcp-client:127.0.0.1:\(port) --timeout 10") { tmux in
                _ = try await tmux.waitForScreen(containing: "Enter the 6-digit passkey \(Self.device) shows:")
                try await tmux.keys("123456", "Enter")
                _ = try await tmux.waitForScreen(containing: "\(Self.authenticated) [read] = 61 75 74 68 65 6E 74 69 63 61 74 65 64  \"authenticated\"")
                _ = try await tmux.waitForScreen(containing: "[exited 0]")
            }
        }
    }

    /// At a terminal, numeric comparison is a yes/no question with the number.
    @Test(.needs("tmux", install: "apt-get install tmux"))
    func atATerminalGATTAsksToConfirmTheNumber() async throws {
        try await Self.withControllers { port, startPeer in
            let peer = try await startPeer(["--io", "display-yes-no"])
            try await Self.inTerminal("gatt \(Self.device) --transport tcp-client:127.0.0.1:\(port) --timeout 10") { tmux in
                let compare = try await peer.firstJSON("event", "compare", timeout: .seconds(30))
                let number = try #require(compare["number"]?.int)
                let digits = String(format: "%06d", number)
                _ = try await tmux.waitForScreen(containing: "Confirm that \(Self.device) shows \(digits) [y/N]")
                try await peer.writeToStdin("confirm yes\n")
                try await tmux.keys("y", "Enter")
                _ = try await tmux.waitForScreen(containing: "\"authenticated\"")
                _ = try await tmux.waitForScreen(containing: "[exited 0]")
            }
        }
    }

    /// The shell's `pair` asks at the shell's own prompt, then reads the authenticated value.
    @Test(.needs("tmux", install: "apt-get install tmux"))
    func theShellsPairAsksAtItsPrompt() async throws {
        try await Self.withControllers { port, startPeer in
            _ = try await startPeer(["--io", "display", "--passkey", "123456"])
            try await Self.inTerminal("shell \(Self.device) --transport tcp-client:127.0.0.1:\(port) --timeout 10") { tmux in
                _ = try await tmux.waitForScreen(containing: "\(Self.device)>")
                try await tmux.keys("pair", "Enter")
                _ = try await tmux.waitForScreen(containing: "Enter the 6-digit passkey \(Self.device) shows:")
                try await tmux.keys("123456", "Enter")
                _ = try await tmux.waitForScreen(
                    containing: "paired with \(Self.device): encrypted and authenticated (Secure Connections, 128-bit key), bonded")
                try await tmux.keys("read \(Self.authenticated)", "Enter")
                _ = try await tmux.waitForScreen(containing: "\(Self.authenticated): \"authenticated\"  [61 75")
                try await tmux.keys("C-d")
                _ = try await tmux.waitForScreen(containing: "[exited 0]")
            }
        }
    }

    /// Runs `bluetide ARGUMENTS` in a tmux pane (a real terminal, so the CLI asks its questions
    /// there), runs `steps` against the pane, and kills the pane whether they pass or throw.
    static func inTerminal(_ arguments: String, _ steps: (Tmux) async throws -> Void) async throws {
        let binary = try #require(DecodeCommandTests.bluetideBinary(), "bluetide executable not built next to the tests")
        let tmux = try #require(Tmux(), "tmux is not installed: apt-get install tmux (.ci/run does)")
        try tmux.start("'\(binary.path)' \(arguments)")
        do {
            try await steps(tmux)
        } catch {
            await tmux.kill()
            throw error
        }
        await tmux.kill()
    }
}

/// The peers a test started, stopped by PID when it ends.
private actor StartedPeers {
    private var peers: [BumbleProcess] = []
    func add(_ peer: BumbleProcess) { peers.append(peer) }
    func stopAll() async {
        for peer in peers { await peer.stop() }
        peers = []
    }
}
