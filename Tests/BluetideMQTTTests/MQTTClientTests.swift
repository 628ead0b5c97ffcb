@testable import BluetideMQTT
import BluetideSupport
import BluetideTestSupport
import Foundation
import Testing

extension Trait where Self == ConditionTrait {
    /// libmosquitto loads (or CI, where its absence fails the test).
    static var needsLibmosquitto: Self {
        .enabled(if: OptionalTool.isCI || MQTTClient.libraryProblem == nil, "\(MQTTClient.libraryProblem ?? ""): skipped outside CI")
    }
}

@Suite struct MQTTOptionsTests {
    @Test func brokerURLsGiveHostPortAndTLS() throws {
        let plain = try MQTTOptions(url: "mqtt://127.0.0.1", clientID: "a")
        #expect(plain.host == "127.0.0.1" && plain.port == 1883 && !plain.useTLS)
        let secure = try MQTTOptions(url: "mqtts://broker.example:8884", clientID: "a")
        #expect(secure.host == "broker.example" && secure.port == 8884 && secure.useTLS)
        let user = try MQTTOptions(url: "mqtt://gateway@10.0.0.2:1884", clientID: "a")
        #expect(user.username == "gateway" && user.port == 1884 && user.password == nil)
    }

    @Test func badBrokerURLsSayWhatIsWrong() {
        #expect(throws: MQTTError.self) { try MQTTOptions(url: "http://x", clientID: "a") }
        do {
            _ = try MQTTOptions(url: "mqtt://user:secret@host", clientID: "a")
            Issue.record("a password in the URL was accepted")
        } catch {
            #expect(error.message.contains("password in the URL"))
            #expect(!error.message.contains("secret") || error.message.contains("user:secret@host"))
        }
        #expect(throws: MQTTError.self) { try MQTTOptions(url: "mqtt://", clientID: "a") }
        #expect(throws: MQTTError.self) { try MQTTOptions(url: "mqtt://host:99999", clientID: "a") }
        #expect(throws: MQTTError.self) { try MQTTOptions(url: "mqtt://host/path", clientID: "a") }
    }
}

/// The client against a real Mosquitto broker with `mosquitto_sub`/`mosquitto_pub` as the other side.
@Suite(.needsMosquitto, .needsLibmosquitto, .timeLimit(.minutes(2)))
struct MQTTClientBrokerTests {
    func client(_ broker: MosquittoBroker, id: String = "t-\(UInt32.random(in: 0...UInt32.max))",
                configure: (inout MQTTOptions) -> Void = { _ in }) throws -> MQTTClient {
        var options = try MQTTOptions(url: broker.url, clientID: id)
        options.reconnectDelaySeconds = (1, 2)
        configure(&options)
        return try MQTTClient(options)
    }

    @Test func publishesAndReceivesAtBothQoSLevelsWithRetain() async throws {
        let broker = try await MosquittoBroker.start()
        let client = try client(broker)
        do {
            try await client.connect(timeout: .seconds(20))
            try await client.subscribe("in/#", qos: .atLeastOnce)
            try await MosquittoClients.publish(broker, topic: "in/one", message: "hello", qos: 1)
            try await MosquittoClients.publish(broker, topic: "in/two", message: "zero", qos: 0)
            var received: [MQTTMessage] = []
            for await message in client.messages {
                received.append(message)
                if received.count == 2 { break }
            }
            #expect(received.map(\.topic) == ["in/one", "in/two"])
            #expect(received.map(\.text) == ["hello", "zero"])
            #expect(received.map(\.qos) == [.atLeastOnce, .atMostOnce])

            try await client.publishAndWait(MQTTMessage(topic: "out/kept", text: "42", qos: .atLeastOnce, retain: true))
            try await client.publishAndWait(MQTTMessage(topic: "out/plain", text: "x", qos: .atMostOnce))
            // A subscriber arriving later gets the retained message only, flagged retained.
            let sub = try await MosquittoClients.subscribe(broker, topics: ["out/#"])
            #expect(try await sub.lines.next(timeout: .seconds(20)) == "out/kept|1|42")
            try await client.publishAndWait(MQTTMessage(topic: "out/live", text: "now", qos: .atLeastOnce))
            #expect(try await sub.lines.next(timeout: .seconds(20)) == "out/live|0|now")
            #expect(client.unacknowledgedCount == 0)
            await sub.stop()
        } catch {
            await client.close()
            await broker.finish()
            throw error
        }
        await client.close()
        await broker.finish()
    }

    @Test func lastWillIsPublishedWhenTheClientVanishesButNotOnACleanClose() async throws {
        try await MosquittoBroker.run { broker in
            let will = MQTTMessage(topic: "gw/availability", text: "offline", qos: .atLeastOnce, retain: true)
            let first = try client(broker) { $0.will = will }
            try await first.connect(timeout: .seconds(20))
            try await first.publishAndWait(MQTTMessage(topic: "gw/availability", text: "online", qos: .atLeastOnce, retain: true))
            let sub = try await MosquittoClients.subscribe(broker, topics: ["gw/availability"])
            #expect(try await sub.lines.next(timeout: .seconds(20)) == "gw/availability|1|online")
            first.drop()
            #expect(try await sub.lines.next(timeout: .seconds(20)) == "gw/availability|0|offline")
            await first.close()

            let second = try client(broker) { $0.will = will }
            try await second.connect(timeout: .seconds(20))
            try await second.publishAndWait(MQTTMessage(topic: "gw/availability", text: "online", qos: .atLeastOnce, retain: true))
            #expect(try await sub.lines.next(timeout: .seconds(20)) == "gw/availability|0|online")
            await second.close()
            // After a clean close the broker keeps "online" (the will is not sent): a marker published
            // after the close is the next line.
            try await MosquittoClients.publish(broker, topic: "gw/availability", message: "marker", qos: 1)
            #expect(try await sub.lines.next(timeout: .seconds(20)) == "gw/availability|0|marker")
            await sub.stop()
        }
    }

    @Test func refusedCredentialsGiveOneClearLineAndGoodOnesConnect() async throws {
        try await MosquittoBroker.run(users: ["gateway": "right-password"]) { broker in
            let wrong = try client(broker) { $0.username = "gateway"; $0.password = "wrong-password" }
            do {
                try await wrong.connect(timeout: .seconds(20))
                Issue.record("a wrong password connected")
            } catch {
                let line = "\(error)"
                #expect(line.contains("refused the connection"), "\(line)")
                #expect(line.contains("not authori"), "\(line)")
                #expect(!line.contains("wrong-password"))
                #expect(!line.contains("\n"))
            }
            await wrong.close()
            let right = try client(broker) { $0.username = "gateway"; $0.password = "right-password" }
            try await right.connect(timeout: .seconds(20))
            #expect(right.isConnected)
            await right.close()
        }
    }

    @Test func reconnectsAfterTheBrokerRestartsAndDeliversWhatWasQueuedInOrder() async throws {
        try await MosquittoBroker.run { broker in
            let client = try client(broker) { $0.outboxLimit = 3 }
            try await client.connect(timeout: .seconds(20))
            // The client reads its own values back: its subscription is renewed on reconnect before
            // the outbox is sent, so what it receives is what the broker got, in the broker's order.
            try await client.subscribe("values/#")
            let events = Task { () -> [MQTTEvent] in
                var seen: [MQTTEvent] = []
                for await event in client.events {
                    seen.append(event)
                    if seen.filter({ $0 == .connected }).count == 2 { break }
                }
                return seen
            }
            await broker.stop()
            try await client.waitUntilDisconnected(timeout: .seconds(20))
            // Kept at QoS 1 while the broker is away; the outbox holds 3, so the 2 oldest are dropped.
            for index in 1...5 {
                #expect(try client.publish(MQTTMessage(topic: "values/n", text: "\(index)", qos: .atLeastOnce)) == 0)
            }
            #expect(client.unacknowledgedCount == 3)
            #expect(client.droppedCount == 2)
            #expect(throws: MQTTError.self) { try client.publish(MQTTMessage(topic: "values/n", text: "lost", qos: .atMostOnce)) }
            try await broker.launch()
            try await client.waitUntilConnected(timeout: .seconds(30))
            #expect(await client.flush(timeout: .seconds(20)))
            var received: [String] = []
            for await message in client.messages where message.topic == "values/n" {
                received.append(message.text)
                if received.count == 3 { break }
            }
            #expect(received == ["3", "4", "5"])
            let seen = await events.value
            #expect(seen.contains { if case .disconnected = $0 { true } else { false } }, "\(seen)")
            #expect(seen.last == .connected)
            // The outbox's growth is said at each power of two (1, 2; it holds 3 at most).
            #expect(seen.filter { if case .queued = $0 { true } else { false } } == [.queued(1), .queued(2)], "\(seen)")
            await client.close()
        }
    }

    @Test func anAbsentBrokerGivesOneLineWithinTheLimit() async throws {
        let port = try await { () async throws -> Int in
            let broker = try await MosquittoBroker.start()
            await broker.finish()
            return broker.port
        }()
        var options = try MQTTOptions(url: "mqtt://127.0.0.1:\(port)", clientID: "absent")
        options.reconnectDelaySeconds = (1, 1)
        let client = try MQTTClient(options)
        do {
            try await client.connect(timeout: .seconds(2))
            Issue.record("connected to nothing")
        } catch {
            #expect("\(error)".contains("no answer from the MQTT broker at 127.0.0.1:\(port)"), "\(error)")
        }
        await client.close()
    }

    @Test func aMissingCAFileIsNamed() throws {
        var options = try MQTTOptions(url: "mqtts://127.0.0.1:8883", clientID: "tls")
        options.caFile = "/nonexistent/ca.pem"
        #expect(throws: MQTTError("CA file /nonexistent/ca.pem cannot be read; expected a PEM file of the broker's CA")) {
            _ = try MQTTClient(options)
        }
    }
}

/// The outbox on disk (``MQTTOptions/outboxFile``): what waits for the broker survives the client.
@Suite(.needsMosquitto, .needsLibmosquitto, .timeLimit(.minutes(2)))
struct MQTTOutboxFileTests {
    func options(_ broker: MosquittoBroker, file: String, limit: Int = 10_000) throws -> MQTTOptions {
        var options = try MQTTOptions(url: broker.url, clientID: "outbox-\(UInt32.random(in: 0...UInt32.max))")
        options.reconnectDelaySeconds = (1, 1)
        options.outboxFile = file
        options.outboxLimit = limit
        return options
    }

    @Test func messagesQueuedWhileTheBrokerIsAwaySurviveTheClientAndArriveInOrder() async throws {
        try await MosquittoBroker.run { broker in
            let file = broker.directory.appendingPathComponent("outbox").path
            let first = try MQTTClient(try options(broker, file: file, limit: 5))
            try await first.connect(timeout: .seconds(20))
            try await first.publishAndWait(MQTTMessage(topic: "q/v", text: "0", qos: .atLeastOnce))
            await broker.stop()
            try await first.waitUntilDisconnected(timeout: .seconds(20))
            // Eight while it is away, with room for five: the three oldest are dropped and counted.
            for value in 1...8 { try first.publish(MQTTMessage(topic: "q/v", text: "\(value)", qos: .atLeastOnce)) }
            #expect(first.unacknowledgedCount == 5 && first.droppedCount == 3)
            first.drop()  // as a killed process: nothing flushed, nothing said

            // The next process finds them in the file, before it connects; it reads its own
            // messages back (the subscription is renewed before the outbox is sent).
            let second = try MQTTClient(try options(broker, file: file, limit: 5))
            #expect(second.unacknowledgedCount == 5 && second.droppedCount == 3)
            // One more: the outbox holds five, so "4" goes.
            try second.publish(MQTTMessage(topic: "q/v", text: "9", qos: .atLeastOnce))
            #expect(second.droppedCount == 4)
            try await second.subscribe("q/#")
            try await broker.launch()
            try await second.connect(timeout: .seconds(20))
            #expect(await second.flush(timeout: .seconds(20)))
            var received: [String] = []
            for await message in second.messages {
                received.append(message.text)
                if received.count == 5 { break }
            }
            #expect(received == ["5", "6", "7", "8", "9"])
            await second.close()
            // Everything acknowledged: the file is empty, a third client sends nothing again.
            #expect((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) == 0)
            let third = try MQTTClient(try options(broker, file: file))
            #expect(third.unacknowledgedCount == 0)
            await third.close()
        }
    }

    @Test func aCutShortRecordEndsTheFileAndAnUnwritablePathIsOneLine() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("outbox").path
        var options = try MQTTOptions(url: "mqtt://127.0.0.1:1", clientID: "cut")
        options.outboxFile = file
        // Two whole records, then half of a third (a crash in the middle of a write).
        var bytes = MQTTOutboxFile.encode(MQTTMessage(topic: "a", text: "1", qos: .atLeastOnce, retain: true))
        bytes += MQTTOutboxFile.encode(MQTTMessage(topic: "b", text: "2", qos: .atLeastOnce))
        bytes += MQTTOutboxFile.encode(MQTTMessage(topic: "c", text: "333", qos: .atLeastOnce)).prefix(6)
        FileManager.default.createFile(atPath: file, contents: Data(bytes))
        let read = try MQTTOutboxFile.read(path: file)
        #expect(read == [MQTTMessage(topic: "a", text: "1", qos: .atLeastOnce, retain: true), MQTTMessage(topic: "b", text: "2", qos: .atLeastOnce)])
        let client = try MQTTClient(options)
        #expect(client.unacknowledgedCount == 2)
        client.drop()

        func refusal(_ path: String) -> String? {
            options.outboxFile = path
            do { _ = try MQTTClient(options) } catch { return error.message }
            return nil
        }
        #expect(refusal(folder.path)?.contains("not a regular file") == true)  // a folder
        #expect(refusal("/nonexistent-\(UUID().uuidString)/outbox")?.contains("cannot be opened for writing") == true)
    }
}
