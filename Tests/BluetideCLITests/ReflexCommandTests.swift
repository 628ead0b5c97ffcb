import BluetideBase
import BluetideHost
import BluetideProfiles
import BluetideTransport
import Foundation
import Synchronization
import Testing
import BluetideTestSupport
import BluetideSupport
@testable import Bluetide
@testable import BluetideCommands

@Suite struct ReflexCommandTests {
    private func options(_ arguments: [String]) throws -> ReflexDeviceCommand {
        let parsed = try BluetideCommand.parseAsRoot(["reflex", "device"] + arguments)
        return try #require(parsed as? ReflexDeviceCommand)
    }

    private func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reflex-\(UUID().uuidString).conf").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func defaultsAndOverrides() throws {
        let plain = try options([]).resolvedOptions()
        #expect(plain.configuration.backend == .linux && plain.name == nil)
        #expect(try options([]).transport == "virtual")
        let path = try file("backend = linux\ndevice-name = \"Reflex-Gym\"\ndebounce-ms = 30\n")
        let resolved = try options(["--config", path, "--gpio", "sim", "--name", "Ring-1"]).resolvedOptions()
        #expect(resolved.configuration.backend == .sim)
        #expect(resolved.configuration.debounceMilliseconds == 30)
        #expect(resolved.configuration.deviceName == "Reflex-Gym")
        #expect(resolved.name == "Ring-1")
    }

    @Test func badConfigurationFailsWithTheParsersMessage() throws {
        let path = try file("chip = /dev/gpiochip0\n[target.0]\nled = 17\nsensor = 17\n")
        do {
            _ = try options(["--config", path]).resolvedOptions()
            Issue.record("a bad file was accepted")
        } catch let failure as CommandFailure {
            #expect(failure.message.hasPrefix(path + ": "))
            #expect(failure.message.contains("target"))
            #expect(failure.status == .usage && failure.field == "--config", "a bad file is bad input: exit 2")
        }
        let debounce = try file("debounce-ms = abc\n")
        #expect(throws: CommandFailure.self) { try options(["--config", debounce]).resolvedOptions() }
        let missing = "/nonexistent/reflex.conf"
        do {
            _ = try options(["--config", missing]).resolvedOptions()
            Issue.record("a missing file was accepted")
        } catch let failure as CommandFailure {
            #expect(failure.message.contains("cannot read"))
        }
        #expect(throws: CommandFailure.self) { try options(["--gpio", "gpiozero"]).resolvedOptions() }
        #expect(throws: CommandFailure.self) { try options(["--name", String(repeating: "x", count: 40)]).resolvedOptions() }
        #expect(throws: CommandFailure.self) { try options(["--duration=-1"]).resolvedOptions() }
    }

    @Test func debounceErrorNamesLineAndKey() throws {
        let path = try file("# reflex\ndebounce-ms = abc\n")
        do {
            _ = try options(["--config", path]).resolvedOptions()
            Issue.record("accepted")
        } catch let failure as CommandFailure {
            #expect(failure.message == "\(path): line 2: debounce-ms: expected an integer number of milliseconds 0…1000, found \"abc\"")
        }
    }
}

/// The command itself on a virtual link, with a bare host stack as the coach.
@Suite struct ReflexDeviceCommandRunTests {
    /// The printed lines; a test waits for one to arrive (no polling).
    final class Lines: Sendable {
        private let state = Observed<[String]>([])
        func append(_ line: String) { state.append(line) }
        var all: [String] { state.value }
        /// Returns once a line matching `predicate` was printed.
        func waitFor(_ predicate: @escaping @Sendable (String) -> Bool) async throws { _ = try await state.first(where: predicate) }
    }


    struct TimedOut: Error {}

    /// In virtual time: the link, the device, its simulated athlete and the coach's stack run on
    /// one manual clock. Fails instead of hanging when the exchange does not finish within 60 s.
    @Test func printsOneLinePerEventWhileACoachRunsASequence() async throws {
        let clock = ManualClock()
        try await withRunTimeLimit(60, onTimeout: { TimedOut() }) {
            try await clock.advancing { try await self.exchange(clock: clock) }
        }
    }

    func exchange(clock: ManualClock) async throws {
        let link = "reflex-cli-\(UUID().uuidString)"
        await Bluetooth.prepareVirtualLink(named: link, clock: BluetideClock(clock))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reflex-\(UUID().uuidString).conf").path
        try "backend = sim\ndevice-name = Reflex-CLI\n[sim]\nseed = 3\nmiss-probability = 0\nwrong-target-probability = 0\nreaction-max-ms = 200\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let command = try #require(
            try BluetideCommand.parseAsRoot(["reflex", "device", "--config", path, "--transport", "virtual:\(link)", "--duration", "30"])
                as? ReflexDeviceCommand)
        let lines = Lines()
        let (interrupts, interrupt) = AsyncStream.makeStream(of: Int32.self)
        let serving = Task { try await command.serve(until: interrupts, clock: BluetideClock(clock)) { lines.append($0) } }

        let coach = HostStack(
            transport: await VirtualTransport.attach(toLinkNamed: link),
            configuration: .init(randomAddress: .randomStatic(0x0C11_0000_0001), commandTimeout: 30), clock: clock)
        try await coach.start()
        // Find the device by its advertised name.
        let reports = try await coach.scan(active: true)
        var device: BluetoothAddress?
        for await report in reports where report.data.localName == "Reflex-CLI" {
            device = report.address
            break
        }
        let address = try #require(device)
        let connection = try await coach.connect(to: address, timeout: 20)
        let services = try await connection.gatt.discoverDatabase()
        let punch = try #require(services.first { $0.service.uuid == PunchUUID.service })
        func handle(_ uuid: BluetoothUUID) throws -> GATTCharacteristic {
            try #require(punch.characteristics.first { $0.characteristic.uuid == uuid }).characteristic
        }
        let control = try await connection.gatt.subscribe(to: try handle(PunchUUID.control))
        try await connection.gatt.write(handle: try handle(PunchUUID.sequence).valueHandle, value: [2, 5])
        try await connection.gatt.write(handle: try handle(PunchUUID.timeSequence).valueHandle, value: [0x2C, 0x01, 0x2C, 0x01])
        try await connection.gatt.write(handle: try handle(PunchUUID.control).valueHandle, value: [0x01])
        for await status in control where status.first == 0x12 { break }
        _ = try await connection.disconnect()
        // Wait for the disconnect line, then interrupt.
        try await lines.waitFor { $0.hasPrefix("coach disconnected") }
        interrupt.yield(2)
        try await serving.value
        await coach.close()

        let printed = lines.all
        #expect(printed.first?.hasPrefix("advertising as Reflex-CLI (") == true)
        #expect(printed.contains { $0.hasPrefix("coach connected: ") })
        #expect(printed.contains("sequence received: 2 steps, targets 2 5"))
        #expect(printed.contains("time sequence received: 2 steps, ms 300 300"))
        #expect(printed.contains("run started"))
        #expect(printed.filter { $0.hasPrefix("response: step ") }.count == 2)
        #expect(printed.contains("run finished: 2 steps"))
        #expect(printed.contains { $0.hasPrefix("coach disconnected: ") })
    }
}
