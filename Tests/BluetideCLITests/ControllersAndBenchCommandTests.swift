import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideBench
@testable import BluetideCommands

/// `bluetide controllers` (arguments and the running executable) and `bluetide bench gatt`.
@Suite(.timeLimit(.minutes(1))) struct ControllersAndBenchCommandTests {
    @Test func controllersSpecsAreCheckedWithOneLineErrors() throws {
        let good = try ControllersCommand.parse(["tcp-server:_:9000", "tcp-server:127.0.0.1:0"]).listeners()
        #expect(good.map(\.port) == [9000, 0])
        #expect(good.map(\.host) == [nil, "127.0.0.1"])
        for bad in [["tcp-client:127.0.0.1:9000"], ["tcp-server:_:70000"], ["serial:/dev/ttyACM0"], []] {
            do {
                _ = try ControllersCommand.parse(bad).listeners()
                Issue.record("\(bad) was accepted")
            } catch let failure as CommandFailure {
                #expect(failure.message.hasPrefix("controllers: "))
                #expect(!failure.message.contains("\n"))
                #expect(failure.message.contains("tcp-server:"))
            }
        }
    }

    /// Reads the next `count` stdout lines (fewer if the stream ends first), each within 60 s.
    private func lines(_ process: BumbleProcess, count: Int) async throws -> [String] {
        var head: [String] = []
        while head.count < count, let line = try await process.nextLine(timeout: BluetideExecutable.runTimeout) {
            head.append(line)
        }
        return head
    }

    @Test func executablePrintsReadyAndControllersThenStopsOnStdinEOF() async throws {
        let process = try BluetideExecutable.launch([
            "controllers", "tcp-server:127.0.0.1:0", "tcp-server:127.0.0.1:0", "--exit-on-stdin-eof",
        ])
        do {
            let head = try await lines(process, count: 3)
            try #require(head.count == 3, "output was \(head)")
            let ready = head[0].split(separator: " ")
            #expect(ready.first == "READY")
            let ports = ready.dropFirst().compactMap { Int($0) }
            #expect(ports.count == 2 && ports.allSatisfy { $0 > 0 })
            #expect(head[1] == "controller 1: tcp-server 127.0.0.1:\(ports[0]), address 00:00:00:00:00:01"
                + " (this computer only; tcp-server:0.0.0.0:PORT listens on every interface)")
            #expect(head[2].hasPrefix("controller 2: tcp-server 127.0.0.1:\(ports[1]), address "))
            await process.closeStdin()
            let status = await process.waitForExit(timeout: BluetideExecutable.runTimeout)
            #expect(status == 0)
        } catch {
            await process.stop()
            throw error
        }
        await process.stop()
    }

    @Test func emulateExitsWithOneLineWhenItsControllerGoesAway() async throws {
        let controllers = try BluetideExecutable.launch(["controllers", "tcp-server:127.0.0.1:0", "--exit-on-stdin-eof"])
        var emulate: BumbleProcess?
        do {
            let head = try await lines(controllers, count: 2)
            let port = try #require(head.first?.split(separator: " ").dropFirst().first.flatMap { Int($0) }, "\(head)")
            let device = try BluetideExecutable.launch(["emulate", "heart-rate", "--transport", "tcp-client:127.0.0.1:\(port)"])
            emulate = device
            let started = try await device.nextLine(timeout: BluetideExecutable.runTimeout)
            #expect(started?.contains("advertising as") == true, "\(String(describing: started))")
            // The controllers process ends: emulate must not keep running silently.
            await controllers.closeStdin()
            _ = await controllers.waitForExit(timeout: BluetideExecutable.runTimeout)
            let status = await device.waitForExit(timeout: BluetideExecutable.runTimeout)
            #expect(status == ExitStatus.failure.rawValue, "a runtime failure, like subscribe's")
            let errors = await device.output(.stderr)
            #expect(errors.count == 1 && errors.first?.contains("went away") == true, "\(errors)")
        } catch {
            await controllers.stop()
            await emulate?.stop()
            throw error
        }
        await controllers.stop()
        await emulate?.stop()
    }

    @Test func executableStopsCleanlyOnSIGTERM() async throws {
        let process = try BluetideExecutable.launch(["controllers", "tcp-server:127.0.0.1:0"])
        do {
            #expect(try await lines(process, count: 2).first?.hasPrefix("READY ") == true)
            kill(process.pid, SIGTERM)
            // Never hang the suite: SIGKILL after 10 s (then the status checks below fail).
            if await process.waitForExit(timeout: .seconds(10)) == nil {
                kill(process.pid, SIGKILL)
                _ = await process.waitForExit(timeout: .seconds(10))
            }
            #expect(await process.exitStatus == 0)
            #expect(await process.endedBySignal == false)
        } catch {
            await process.stop()
            throw error
        }
        await process.stop()
    }

    @Test func executableRefusesABadSpecWithStatusTwo() async throws {
        let run = try await BluetideExecutable.run(["controllers", "tcp-server:_:9000", "tcp-client:127.0.0.1:9001"])
        #expect(run.status == 2)
        let text = run.stderr.joined(separator: "\n")
        #expect(text.split(separator: "\n").count == 1)
        #expect(text.contains("tcp-client:127.0.0.1:9001"))
    }

    @Test func gattBenchMovesEveryValueIntactBothWays() async throws {
        let results = try await GATTBenchmark.run(mtu: 247, packetSize: 244, packetCount: 300)
        #expect(results.map(\.name) == ["notify", "write-without-response"])
        for result in results {
            #expect(result.isComplete, "\(result.name): \(result.problem ?? "")")
            #expect(result.packets == 300)
            #expect(result.bytes == 300 * 244)
            #expect(result.cpuSeconds >= 0 && result.seconds > 0)
        }
        // Writes travel one actor path, so they must also keep their order.
        #expect(results[1].outOfOrder == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(results[0].json.utf8)) as? [String: Any])
        #expect(json["type"] as? String == "gatt-benchmark")
        #expect(json["scenario"] as? String == "notify")
        #expect(json["packetSizeBytes"] as? Int == 244)
        #expect(json["complete"] as? Bool == true)
    }

    @Test func gattBenchAtTheSmallestMTU() async throws {
        let results = try await GATTBenchmark.run(mtu: 23, packetSize: 20, packetCount: 100)
        #expect(results.allSatisfy { $0.isComplete && $0.packets == 100 })
    }

    @Test func notificationCheckerFindsCorruptMissingDuplicateAndLateValues() {
        var checker = NotificationChecker(count: 4, size: 8)
        #expect(checker.receive(GATTBenchmark.value(1, size: 8)) == nil)
        #expect(checker.receive(GATTBenchmark.value(0, size: 8)) == nil)
        #expect(checker.outOfOrder == 1)
        #expect(checker.receive(GATTBenchmark.value(1, size: 8)) == "value 1 received twice")
        var corrupt = GATTBenchmark.value(2, size: 8)
        corrupt[6] ^= 0xFF
        #expect(checker.receive(corrupt)?.contains("byte 6") == true)
        #expect(checker.receive(Array(GATTBenchmark.value(3, size: 8).prefix(6)))?.contains("6 bytes") == true)
        #expect(checker.receive(GATTBenchmark.value(9, size: 8)) == "value with unexpected sequence 9")
        #expect(checker.receive([1, 2]) != nil)
        #expect(GATTBenchmark.check(GATTBenchmark.value(5, size: 8), expected: 4, size: 8)?.contains("out of order") == true)
    }

    @Test func gattBenchRefusesBadSizes() async throws {
        for arguments in [["--mtu", "22"], ["--packet-size", "245"], ["--packet-size", "3"], ["--packet-count", "0"]] {
            let command = try GATTBench.parse(arguments)
            await #expect(throws: CommandFailure.self, "\(arguments)") { try await command.run() }
        }
    }
}
