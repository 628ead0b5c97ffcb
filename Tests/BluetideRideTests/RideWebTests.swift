import BluetideRide
import BluetideRideWeb
import BluetideTestSupport
import Foundation
import HummingbirdWSClient
import Logging
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `ride serve`'s page and WebSocket on a real port.
@Suite(.serialized, .timeLimit(.minutes(2))) struct RideWebTests {
    static func sample(_ t: Double, power: Int?, heartRate: Int? = 130) -> RideSample {
        RideSample(time: t, trigger: .tick, speedKmh: 30, cadenceRpm: 90, powerWatts: power, heartRateBpm: heartRate, distanceMeters: t * 8,
                   target: .power(watts: 200))
    }

    static func get(_ url: String) async throws -> (status: Int, body: String) {
        let (data, response) = try await URLSession.shared.data(from: try #require(URL(string: url)))
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test func thePageTheLatestSampleAndTheLiveSocket() async throws {
        let feed = RideLiveFeed(historyLength: 3, startedAt: Date(timeIntervalSince1970: 1_795_000_000))
        let running = try await RideWebServer(feed: feed, title: "Tacx <Neo> & HRM").start(host: "127.0.0.1", port: 0)
        do {
            let page = try await Self.get("\(running.localURL)/")
            #expect(page.status == 200)
            #expect(page.body.contains("<canvas id=\"chart\">"))
            #expect(page.body.contains("<title>Tacx &lt;Neo&gt; &amp; HRM</title>"), "the title is escaped")
            #expect(page.body.contains("\"/live\""))
            #expect(try await Self.get("\(running.localURL)/latest.json").status == 404, "no sample yet")

            // Four samples with a history of three: a page connecting now gets the last three first.
            for t in 1...4 { await feed.publish(Self.sample(Double(t), power: 190 + t)) }
            await feed.publish(RideSample(time: 4.5, trigger: .update, powerWatts: 999))  // not a tick: not sent
            let latest = try await Self.get("\(running.localURL)/latest.json")
            #expect(latest.status == 200)
            #expect(latest.body.contains("\"powerWatts\":194"))
            #expect(latest.body.contains("\"utc\":\"2026-11-18T11:06:44.000Z\""), "the ride's start plus 4 s")

            let received = Mutex<[String]>([])
            let logger = { var logger = Logger(label: "ride-web-test"); logger.logLevel = .warning; return logger }()
            try await guarded("four live messages", seconds: 30) {
                try await WebSocketClient.connect(url: "ws://127.0.0.1:\(running.port)/live", logger: logger) { inbound, outbound, _ in
                    var count = 0
                    for try await message in inbound.messages(maxSize: 1 << 16) {
                        guard case let .text(text) = message else { continue }
                        received.withLock { $0.append(text) }
                        count += 1
                        if count == 3 { await feed.publish(Self.sample(5, power: nil)) }
                        if count == 4 { break }
                    }
                    try await outbound.close(.normalClosure, reason: nil)
                }
            }
            let messages = received.withLock { $0 }.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(messages.map { ($0["time"] as? [String: Any])?["monotonic"] as? Double } == [2, 3, 4, 5])
            #expect(messages.allSatisfy { $0["type"] as? String == "sample" })
            #expect(messages.prefix(3).map { $0["powerWatts"] as? Int } == [192, 193, 194])
            #expect(messages.last?["powerWatts"] == nil, "a missing power is left out, never zero")
            #expect((messages.last?["target"] as? [String: Any])?["powerWatts"] as? Int == 200)
        } catch {
            await running.stop()
            throw error
        }
        await running.stop()
    }

    @Test func aBusyPortIsReported() async throws {
        let first = try await RideWebServer(feed: RideLiveFeed()).start(host: "127.0.0.1", port: 0)
        await #expect(throws: (any Error).self) {
            let second = try await RideWebServer(feed: RideLiveFeed()).start(host: "127.0.0.1", port: first.port)
            await second.stop()
        }
        await first.stop()
    }
}
