import BluetideTestSupport
import Foundation
import Testing

/// `bluetide replay` ends as its help says.
@Suite(.timeLimit(.minutes(3))) struct ReplayEndingTests {
    static func write(_ text: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("replay-end-\(UUID().uuidString).jsonl")
        try Data(text.utf8).write(to: url)
        return url
    }

    static let header = #"{"format":"bluetide-values","version":1}"#

    /// `--as-peripheral` ends once every value was played (it waited for a signal that never came).
    @Test func replayAsPeripheralEndsAfterItsLastValue() async throws {
        let log = try Self.write(JSONOutputSchemaTests.replayLog)
        defer { try? FileManager.default.removeItem(at: log) }
        let controllers = try BluetideExecutable.launch(["controllers", "tcp-server:127.0.0.1:0", "tcp-server:127.0.0.1:0"])
        var replay: BumbleProcess?
        do {
            let ready = try #require(try await controllers.nextLine(timeout: BluetideExecutable.runTimeout))
            let ports = ready.split(separator: " ").dropFirst().compactMap { Int($0) }
            try #require(ports.count == 2, "\(ready)")
            let device = try BluetideExecutable.launch([
                "replay", log.path, "--as-peripheral", "--as-fast-as-possible", "--name", "Replay End",
                "--transport", "tcp-client:127.0.0.1:\(ports[0])",
            ])
            replay = device
            let started = try await device.nextLine(timeout: BluetideExecutable.runTimeout)
            #expect(started?.hasPrefix("replay: advertising as") == true, "\(String(describing: started))")
            // A central subscribes: playback starts, plays the three values and ends.
            let central = try BluetideExecutable.launch([
                "subscribe", "Replay End", "2A5B", "--duration", "20", "--transport", "tcp-client:127.0.0.1:\(ports[1])",
            ])
            let status = await device.waitForExit(timeout: .seconds(40))
            await central.stop()
            let output = await device.output(.either)
            #expect(status == 0, "replay still running after its last value: \(output)")
            let sent = await device.output(.stdout).filter { $0.hasPrefix("sent ") }
            #expect(sent.count == 3, "\(output)")
        } catch {
            await replay?.stop()
            await controllers.stop()
            throw error
        }
        await replay?.stop()
        await controllers.stop()
    }
}
