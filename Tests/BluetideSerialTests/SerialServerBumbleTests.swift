import Bluetide
import BluetideSerial
import BluetideTestSupport
import Foundation
import Testing

/// SerialServer (what `uart serve` runs) against a Nordic UART central written with Bumble
/// (`Interop/bumble/nus_central.py`), over two linked Bumble virtual controllers: 20 KB from
/// Bumble come back through the server's echo, complete and in order.
@Suite(.serialized, .bumbleInterop, .timeLimit(.minutes(3))) struct SerialServerBumbleTests {
    @Test func bumblesCentralGetsTwentyKilobytesEchoed() async throws {
        let (controllers, ports) = try await BumbleLinkedControllers.start()
        var processes = [controllers]
        defer { let all = processes; Task { for process in all.reversed() { await process.stop() } } }
        let bluetooth = try await Bluetooth.open(transport: "tcp-client:127.0.0.1:\(ports[0])", configuration: .init(deviceName: "PC"))
        let server = try await SerialServer.start(on: bluetooth.peripheral, options: SerialServerOptions(name: "PC", profile: .nordicUART))
        let echo = Task { for await chunk in server.received { try? await server.send(chunk.bytes) } }
        let central = try await BumbleProcess.launchPython(
            .interopScript("nus_central.py"), arguments: [String(ports[1]), "--name", "PC", "--bytes", "20000", "--exit-on-stdin-eof"])
        processes.append(central)
        let result = try await central.firstJSON("event", "result", timeout: .seconds(150))
        #expect(result["received"]?.int == 20_000, "\(result)")
        #expect(result["equal"]?.bool == true, "\(result)")
        #expect(await central.waitForExit(timeout: .seconds(30)) == 0)
        echo.cancel()
        await server.close()
        await bluetooth.close()
    }
}
