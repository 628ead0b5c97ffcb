import Bluetide
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideRide

/// Rides against trainers written with Bumble (`Interop/bumble/ftms_trainer.py`,
/// `fec_trainer.py`) over Bumble's linked virtual controllers, and the bridge driven by a Bumble
/// central acting as an FTMS-only app (`ftms_app.py`): Bluetide as central and as peripheral.
@Suite(.serialized, .bumbleInterop, .timeLimit(.minutes(4))) struct RideBumbleInteropTests {
    /// Starts `count` linked controllers and the given peers (script, port index, arguments), each
    /// waited for until `ready`; stops them all after `body`, whether it threw or not.
    func withPeers(
        controllers count: Int, _ peers: [(script: String, port: Int, arguments: [String])],
        _ body: (_ ports: [UInt16], _ peers: [BumbleProcess]) async throws -> Void
    ) async throws {
        let (controllers, ports) = try await BumbleLinkedControllers.start(count: count)
        var started: [BumbleProcess] = []
        do {
            for peer in peers {
                let process = try await BumbleProcess.launchPython(
                    .interopScript(peer.script), arguments: [String(ports[peer.port])] + peer.arguments + ["--exit-on-stdin-eof"])
                started.append(process)
                _ = try await process.firstJSON("event", "ready", timeout: .seconds(30))
            }
            try await body(ports, started)
        } catch {
            for process in started.reversed() { await process.stop() }
            await controllers.stop()
            throw error
        }
        for process in started.reversed() { await process.stop() }
        await controllers.stop()
    }

    /// The first `command` event of `trainer` for FE-C page `page`.
    func fecCommand(_ trainer: BumbleProcess, page: Int) async throws -> JSONValue {
        let line = try await trainer.firstLine(timeout: .seconds(30), describing: "page \(page) command") {
            let json = JSONValue(line: $0)
            return json?["event"]?.string == "command" && json?["page"]?.int == page
        }
        return try #require(JSONValue(line: line))
    }

    @Test func ergOnBumblesFTMSTrainerAfterRequestControl() async throws {
        try await withPeers(controllers: 2, [("ftms_trainer.py", 0, ["--name", "Bumble FTMS", "--power", "240"])]) { ports, peers in
            let trainer = peers[0]
            let bluetooth = try await Bluetooth.open(transport: "tcp-client:127.0.0.1:\(ports[1])")
            let source = LiveRideSource(central: bluetooth.central, requests: [.init(.trainer, device: "Bumble FTMS")], configuration: .init(scanSeconds: 20))
            let session = RideSession(source: source)
            do {
                let stream = try await session.start()
                #expect(await source.devices.map(\.role) == [.ftmsTrainer])
                try await session.setTarget(.power(watts: 150))
                let seen = try await guarded("ERG 150 W on Bumble's FTMS trainer", seconds: 90) {
                    try await samples(stream) { settled($0, at: 150, tolerance: 5) }
                }
                #expect(seen.last?.sources[.power] == "Bumble FTMS")
                // The trainer insists on the handshake: our control asked for control first.
                let control = try await trainer.firstLine(timeout: .seconds(10), describing: "request control") {
                    JSONValue(line: $0)?["name"]?.string == "request control"
                }
                #expect(JSONValue(line: control)?["result"]?.int == 1)
                let erg = try await trainer.firstLine(timeout: .seconds(10), describing: "set target power") {
                    JSONValue(line: $0)?["name"]?.string == "set target power"
                }
                #expect(JSONValue(line: erg)?["target_power_w"]?.int == 150)
                #expect(JSONValue(line: erg)?["result"]?.int == 1)
                // Out of its range (0–1500 W): the trainer's answer is surfaced, naming the request.
                let control2 = try #require(await session.trainer)
                await #expect(throws: TrainerControlError(
                    request: "set target power 1600 W",
                    reason: "the trainer answered \"invalid parameter\" (0x03): the value is outside the trainer's supported range")) {
                    try await control2.setTargetPower(watts: 1600)
                }
            } catch {
                await session.stop()
                await bluetooth.close()
                throw error
            }
            await session.stop()
            await bluetooth.close()
        }
    }

    @Test func ftmsTrainerRefusesCommandsBeforeRequestControl() async throws {
        try await withPeers(controllers: 2, [("ftms_trainer.py", 0, ["--name", "Bumble FTMS"])]) { ports, _ in
            let bluetooth = try await Bluetooth.open(transport: "tcp-client:127.0.0.1:\(ports[1])")
            do {
                let found = try await guarded("find the trainer") { () -> Advertisement? in
                    for await advertisement in try await bluetooth.central.scan(filter: .init(name: .exact("Bumble FTMS")), timeout: .seconds(20)) {
                        return advertisement
                    }
                    return nil
                }
                let connection = try await bluetooth.central.connect(to: try #require(found).address)
                let answers = try await connection.notifications(of: .fitnessMachineControlPoint)
                try await connection.write(FitnessMachineControlPointRequest.setTargetPower(watts: 200), to: .fitnessMachineControlPoint)
                let refusal = try await guarded("the refusal") { () -> [UInt8]? in
                    for try await bytes in answers { return bytes }
                    return nil
                }
                #expect(refusal == [0x80, 0x05, 0x05], "control not permitted before Request Control")
                await connection.disconnect()
            } catch {
                await bluetooth.close()
                throw error
            }
            await bluetooth.close()
        }
    }

    @Test func ergOnBumblesFECTrainerConfirmedByPage71() async throws {
        try await withPeers(controllers: 2, [("fec_trainer.py", 0, ["--name", "Bumble Tacx"])]) { ports, peers in
            let trainer = peers[0]
            let bluetooth = try await Bluetooth.open(transport: "tcp-client:127.0.0.1:\(ports[1])")
            let source = LiveRideSource(central: bluetooth.central, requests: [.init(.trainer, optional: true)], configuration: .init(scanSeconds: 20))
            let session = RideSession(source: source)
            do {
                let stream = try await session.start()
                #expect(await source.devices.map(\.role) == [.fecTrainer])
                try await session.setTarget(.power(watts: 230))
                _ = try await guarded("ERG 230 W on Bumble's FE-C trainer", seconds: 90) {
                    try await samples(stream) { settled($0, at: 230, tolerance: 5) }
                }
                let page49 = try await fecCommand(trainer, page: 49)
                #expect(page49["target_power_w"]?.double == 230)
                try await session.setTarget(.grade(percent: 4.5))
                let page51 = try await fecCommand(trainer, page: 51)
                #expect(page51["grade_percent"]?.double == 4.5)
            } catch {
                await session.stop()
                await bluetooth.close()
                throw error
            }
            await session.stop()
            await bluetooth.close()
        }
    }

    /// The issue's bridge test: an FTMS-only app (Bumble) rides a Tacx FE-C trainer (Bumble)
    /// through the bridge, which reads the trainer as a central and serves FTMS as a peripheral
    /// on the same controller.
    @Test func anFTMSAppRidesAnFECTrainerThroughTheBridge() async throws {
        try await withPeers(controllers: 3, [("fec_trainer.py", 0, ["--name", "Bumble Tacx", "--power", "250"])]) { ports, peers in
            let trainer = peers[0]
            let bluetooth = try await Bluetooth.open(transport: "tcp-client:127.0.0.1:\(ports[1])")
            let source = LiveRideSource(central: bluetooth.central, requests: [.init(.trainer, device: "Bumble Tacx")], configuration: .init(scanSeconds: 20))
            let session = RideSession(source: source)
            let bridge = RideBridge(session: session, peripheral: bluetooth.peripheral, configuration: .init(name: "Bluetide FTMS"))
            var pump: Task<Void, Never>?
            var app: BumbleProcess?
            do {
                let stream = try await session.start()
                try await bridge.start()
                pump = Task { for await sample in stream { await bridge.publish(sample) } }
                let launched = try await BumbleProcess.launchPython(
                    .interopScript("ftms_app.py"),
                    arguments: [String(ports[2]), "--erg", "180", "--write-before-control", "--grade", "2", "--tolerance", "8", "--watch", "60", "--exit-on-stdin-eof"])
                app = launched
                let status = await launched.waitForExit(timeout: .seconds(120))
                let output = await launched.output()
                let stderr = await launched.stderrTail()
                let lines = output.compactMap { JSONValue(line: $0) }
                #expect(status == 0, "the app's output: \(output.joined(separator: "\n")) \(stderr)")
                // It read the features: power target and simulation.
                let feature = try #require(lines.first { $0["event"]?.string == "feature" })
                #expect(feature["power_target"]?.bool == true)
                #expect(feature["simulation"]?.bool == true)
                let range = try #require(lines.first { $0["event"]?.string == "power-range" })
                #expect(range["maximum_w"]?.int == 2000)
                // The handshake: refused before Request Control, then success for each request.
                let results = lines.filter { $0["event"]?.string == "response" }.compactMap { $0["result"]?.int }
                #expect(results == [0x05, 0x01, 0x01, 0x01])
                #expect(lines.contains { $0["event"]?.string == "status" && $0["hex"]?.string == "08b400" }, "target power changed to 180 W")
                // The trainer behind the bridge got page 51 (grade 2 %) and page 49 with 180 W.
                let page51 = try await fecCommand(trainer, page: 51)
                #expect(page51["grade_percent"]?.double == 2)
                let page49 = try await fecCommand(trainer, page: 49)
                #expect(page49["target_power_w"]?.double == 180)
                // And the app saw the power settle near 180 W in Indoor Bike Data.
                #expect(lines.contains { $0["event"]?.string == "settled" })
                let powers = lines.filter { $0["event"]?.string == "bike-data" }.compactMap { $0["power_w"]?.int }
                #expect(powers.suffix(3).allSatisfy { abs($0 - 180) <= 8 }, "\(powers)")
            } catch {
                pump?.cancel()
                await app?.stop()
                await bridge.stop()
                await session.stop()
                await bluetooth.close()
                throw error
            }
            pump?.cancel()
            await app?.stop()
            await bridge.stop()
            await session.stop()
            await bluetooth.close()
        }
    }
}
