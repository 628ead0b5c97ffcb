import BluetideMQTT
import BluetideTestSupport
import Foundation
import Testing

/// The outbox file on a disk that fills up: said once, and the messages still arrive (from memory).
@Suite(.needsMosquitto, .timeLimit(.minutes(2)))
struct MQTTOutboxFullDiskTests {
    @Test(.enabled(if: OptionalTool.isCI || TmpfsMount.permitted, "mount -t tmpfs is not permitted here (it needs root): skipped outside CI"))
    func aFullDiskIsReportedOnceAndNothingIsLost() async throws {
        let mount = try TmpfsMount(megabytes: 1)
        defer { mount.remove() }
        let broker = try await MosquittoBroker.start(persistent: true)
        do {
            // A persistent subscriber at QoS 1: the broker keeps for it what comes while it reconnects.
            let sub = try await MosquittoClients.subscribe(broker, topics: ["full/#"], extra: ["-c", "-q", "1"])
            await broker.stop()
            var options = try MQTTOptions(url: broker.url, clientID: "full-disk")
            options.reconnectDelaySeconds = (1, 1)
            options.outboxFile = mount.directory.appendingPathComponent("outbox").path
            let client = try MQTTClient(options)
            TmpfsMount.fill(mount.directory.appendingPathComponent("filler").path)
            try client.start()
            let payload = String(repeating: "x", count: 200)
            for value in 0..<50 { try client.publish(MQTTMessage(topic: "full/v", text: "\(value) \(payload)", qos: .atLeastOnce)) }
            #expect(client.unacknowledgedCount == 50)
            #expect(client.outboxFileFailure?.contains("No space left on device") == true, "\(String(describing: client.outboxFileFailure))")
            try await broker.launch()
            try await client.waitUntilConnected(timeout: .seconds(30))
            #expect(await client.flush(timeout: .seconds(20)))
            var received: [String] = []
            while received.count < 50, let line = try await sub.lines.next(timeout: .seconds(20)) { received.append(line) }
            #expect(received == (0..<50).map { "full/v|0|\($0) \(payload)" })
            await client.close()
            // One report of the failure among the client's events, however many writes failed.
            var failures = 0
            for await event in client.events { if case .outboxFileFailed = event { failures += 1 } }
            #expect(failures == 1)
            await sub.stop()
        } catch {
            await broker.finish()
            throw error
        }
        await broker.finish()
    }
}
