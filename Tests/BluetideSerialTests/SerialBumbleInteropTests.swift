import Bluetide
import BluetideSerial
import BluetideTestSupport
import Foundation
import Testing

/// SerialLink against a Nordic UART peer written with Bumble (`Interop/bumble/nus_peer.py`),
/// over two linked Bumble virtual controllers.
@Suite(.serialized, .bumbleInterop, .timeLimit(.minutes(3))) struct SerialBumbleInteropTests {
    @Test func echoesThroughBumblesNordicUARTPeer() async throws {
        let (controllers, ports) = try await BumbleLinkedControllers.start()
        var processes = [controllers]
        defer { let all = processes; Task { for process in all.reversed() { await process.stop() } } }
        let peer = try await BumbleProcess.launchPython(
            .interopScript("nus_peer.py"),
            arguments: [String(ports[1]), "--name", "Bumble UART", "--greeting", "hello from bumble\n", "--timeout", "120", "--exit-on-stdin-eof"])
        processes.append(peer)
        _ = try await peer.firstJSON("event", "ready", timeout: .seconds(30))

        let bluetooth = try await Bluetooth.open(transport: "tcp-client:127.0.0.1:\(ports[0])")
        let link = try await within(60, "find and connect to the Bumble peer") {
            let found = try await SerialScanner(central: bluetooth.central).find("Bumble UART", timeout: .seconds(20))
            #expect(SerialScanner.isUART(found), "the NUS UUID is advertised: \(found.serviceUUIDs)")
            return try await SerialLink.connect(to: found, on: bluetooth.central)
        }
        #expect(await link.profile.kind == .nordicUART)
        let recorder = LinkRecorder(link)
        let greeting = Array("hello from bumble\n".utf8)
        try await within(30, "greeting") { try await recorder.wait { $0.bytes.count >= greeting.count } }
        let payload = randomBytes(10_000, seed: 21)
        try await within(90, "10 KB echo") {
            try await link.send(payload)
            try await link.drain()
            try await recorder.wait { $0.bytes.count >= greeting.count + payload.count }
        }
        #expect(recorder.bytes == greeting + payload, "complete and in order")
        recorder.stop()
        await link.close()
        let disconnected = try await peer.firstJSON("event", "disconnected", timeout: .seconds(30))
        #expect(disconnected["received"]?.int == payload.count, "the peer got every byte once")
        #expect(await peer.waitForExit(timeout: .seconds(30)) == 0)
        await bluetooth.close()
    }
}
