import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideBench
@testable import BluetideCommands

/// `bluetide bench` against itself in separate processes: `bluetide controllers` for the shared
/// radio, `bench peripheral` and `bench central` as two more processes, as a user runs them.
@Suite(.serialized) struct BumbleBenchProcessTests {
    static func bluetide(_ name: String, _ arguments: [String]) throws -> BumbleProcess {
        let binary = try #require(DecodeCommandTests.bluetideBinary(), "bluetide executable not built next to the tests")
        return try BumbleProcess.launch(name: name, executable: binary, arguments: arguments)
    }

    @Test(arguments: [BumbleBenchScenario.send, .ping])
    func benchCentralAndPeripheralProcessesOverSharedControllers(_ scenario: BumbleBenchScenario) async throws {
        try await benchTimeLimit(90) {
            let controllers = try Self.bluetide("controllers", ["controllers", "tcp-server:127.0.0.1:0", "tcp-server:127.0.0.1:0", "--exit-on-stdin-eof"])
            var children = [controllers]
            do {
                let ready = try await controllers.firstLine(timeout: .seconds(30), describing: "READY line") { $0.hasPrefix("READY ") }
                let ports = ready.split(separator: " ").dropFirst().map(String.init)
                try #require(ports.count == 2)
                let common = ["--json", "--start-delay", "0", "--timeout", "30", "--packet-count", "50", "--packet-size", "200"]
                let peripheral = try Self.bluetide("peripheral", ["bench", "peripheral", "--transport", "tcp-client:127.0.0.1:\(ports[1])", "--scenario", scenario.peer.rawValue] + common)
                children.append(peripheral)
                // The peripheral says when it advertises (progress goes to stderr).
                _ = try await peripheral.firstLine(from: .stderr, timeout: .seconds(30), describing: "advertising") { $0.contains("advertising as") }
                let central = try Self.bluetide("central", ["bench", "central", "--transport", "tcp-client:127.0.0.1:\(ports[0])", "--scenario", scenario.rawValue] + common)
                children.append(central)
                for (side, process) in [("central", central), ("peripheral", peripheral)] {
                    let json = try await process.firstLine(timeout: .seconds(60), describing: "\(side) figures") { $0.hasPrefix("{") }
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
                    #expect(object["packets"] as? Int == 50, "\(side): \(json)")
                    #expect(object["missing"] as? Int == 0 && object["outOfOrder"] as? Int == 0, "\(side): \(json)")
                    #expect(object["role"] as? String == side)
                    let status = await process.waitForExit(timeout: .seconds(30))
                    #expect(status == 0, "\(side) exit status \(String(describing: status))")
                }
            } catch {
                for child in children { await child.stop() }
                throw error
            }
            for child in children { await child.stop() }
        }
    }

    @Test func benchCommandsRefuseBadInputWithOneLine() async throws {
        let cases: [([String], String)] = [
            (["bench", "central", "--transport", "virtual"], "the in-process virtual link has no peer"),
            (["bench", "central", "--transport", "tcp-client:127.0.0.1:9", "--packet-size", "5"], "--packet-size 5: expected 10 to 8192"),
            (["bench", "peripheral", "--transport", "tcp-client:127.0.0.1:9", "--address", "01:02:03:04:05:06"], "--address 01:02:03:04:05:06: expected a random static address"),
            (["bench", "peripheral", "--transport", "tcp-client:127.0.0.1:9", "--att-mtu", "600"], "--att-mtu 600: expected 23 to 517"),
            (["bench", "loopback", "--scenario", "ping", "--packet-count", "1"], "ping needs at least 2 packets"),
            (["bench", "central", "--transport", "nonsense:1"], "--transport"),
        ]
        for (arguments, expected) in cases {
            let process = try Self.bluetide("bench", arguments)
            let status = await process.waitForExit(timeout: .seconds(30))
            await process.stop()
            let errors = await process.output(.stderr)
            #expect(status == 2, "\(arguments): status \(String(describing: status)), stderr \(errors)")
            #expect(errors.count == 1 && errors.first?.contains(expected) == true, "\(arguments): \(errors)")
        }
    }
}
