import BluetideRingWeb
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import BluetideRing

/// `ring serve`: the pages over a synced store, through Hummingbird's test client and in headless Chromium.
@Suite(.timeLimit(.minutes(3))) struct RingWebTests {
    /// A store with three days: hourly heart rate, steps, one night, SpO2 (UTC calendar).
    static func store() throws -> RingStore {
        let store = try RingStore.inMemory()
        let start = 20_400  // 2025-11-08
        for day in start..<(start + 3) {
            let label = RingCalendar.label(day: day)
            let base = Date(timeIntervalSince1970: TimeInterval(day) * 86_400)
            let hr = (0..<24).map { RingSample(time: base.addingTimeInterval(TimeInterval($0) * 3600), kind: "heart_rate", value: Double(60 + $0), unit: "bpm") }
            try store.store(hr, kind: "heart_rate", day: label, complete: true, ring: "r", at: base)
            let steps = (40..<80).map { RingSample(time: base.addingTimeInterval(TimeInterval($0) * 900), kind: "steps", value: 100, unit: "steps") }
            try store.store(steps, kind: "steps", day: label, complete: true, ring: "r", at: base)
            let sleep = [
                RingSample(time: base.addingTimeInterval(-3600), kind: "sleep_light", value: 120, unit: "min"),
                RingSample(time: base.addingTimeInterval(3600), kind: "sleep_deep", value: 90, unit: "min"),
                RingSample(time: base.addingTimeInterval(9000), kind: "sleep_awake", value: 10, unit: "min"),
            ]
            try store.store(sleep, kind: "sleep", day: label, complete: true, ring: "r", at: base)
            let spo2 = (0..<24).map { RingSample(time: base.addingTimeInterval(TimeInterval($0) * 3600), kind: "spo2", value: Double(95 + $0 % 3), unit: "%") }
            try store.store(spo2, kind: "spo2", day: label, complete: true, ring: "r", at: base)
        }
        return store
    }

    @Test func theOverviewShowsEveryChartWithTheSyncedNumbers() throws {
        let dashboard = RingDashboard(store: try Self.store(), calendar: .utc)
        let o = try dashboard.overview(day: nil)
        #expect(o.heartRateDay == "2025-11-10")
        #expect(o.heartRate.count == 24 && o.heartRate.first?.minute == 0 && o.heartRate.last?.bpm == 83)
        #expect(o.steps.map(\.steps) == [4000, 4000, 4000])
        #expect(o.sleep.first?.minutesByKind == ["sleep_light": 120, "sleep_deep": 90, "sleep_awake": 10])
        #expect(o.sleep.map(\.label) == ["2025-11-08", "2025-11-09", "2025-11-10"])
        #expect(o.spo2.first?.low == 95 && o.spo2.first?.high == 97)
        let html = try dashboard.page(day: "2025-11-09")
        #expect(html.contains("<meta name=\"viewport\""))
        #expect(html.contains("Heart rate, 2025-11-09"))
        #expect(html.contains("href=\"/?day=2025-11-08\"") && html.contains("href=\"/?day=2025-11-10\""))
        #expect(html.components(separatedBy: "<svg").count == 5)
        #expect(html.contains("<title>23:00: 83 bpm</title>"))
        #expect(html.contains("2025-11-09 deep: 1.5 hours"))
        #expect(throws: RingDashboard.PageError.self) { try dashboard.page(day: "2025-13-40") }
    }

    @Test func theServerAnswersPagesTheExportAndBadDays() async throws {
        let server = RingWebServer(dashboard: RingDashboard(store: try Self.store(), calendar: .utc))
        let app = Application(router: server.router())
        try await app.test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("Steps per day"))
            }
            try await client.execute(uri: "/?day=nope", method: .get) { response in
                #expect(response.status == .badRequest)
            }
            try await client.execute(uri: "/samples.csv", method: .get) { response in
                #expect(String(buffer: response.body).hasPrefix("time,kind,value,unit\n2025-11-07T23:00:00Z,sleep_light,120,min\n"))
            }
        }
    }

    @Test func headlessChromiumRendersTheChartsAtPhoneWidth() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), "chromium is not installed: apt-get install chromium (.ci/run does)")
        let server = RingWebServer(dashboard: RingDashboard(store: try Self.store(), calendar: .utc))
        let (ports, sink) = AsyncStream<Int>.makeStream()
        let serving = Task { try await server.serve(host: "127.0.0.1", port: 0) { sink.yield($0) } }
        defer { serving.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let dom = try await Chromium.dumpDOM("http://127.0.0.1:\(port)/", windowSize: "390,2000")
        #expect(dom.contains("Ring history"))
        #expect(dom.components(separatedBy: "<svg").count == 5)
        #expect(dom.contains("hr-line"))
    }
}

/// `chromium --headless --dump-dom`, on a thread of its own, killed after 60 s.
enum Chromium {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static func dumpDOM(_ url: String, windowSize: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                let profile = NSTemporaryDirectory() + "ring-chromium-\(UUID().uuidString)"
                defer { try? FileManager.default.removeItem(atPath: profile) }
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/chromium")
                process.arguments = [
                    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage", "--user-data-dir=\(profile)",
                    "--window-size=\(windowSize)", "--dump-dom", url,
                ]
                let output = Pipe()
                process.standardOutput = output
                process.standardError = FileHandle.nullDevice
                do { try process.run() } catch {
                    continuation.resume(throwing: error)
                    return
                }
                let killer = DispatchWorkItem { if process.isRunning { process.terminate() } }
                DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: killer)
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                killer.cancel()
                guard process.terminationStatus == 0 else {
                    continuation.resume(throwing: Failure(description: "chromium --dump-dom exited with \(process.terminationStatus)"))
                    return
                }
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }.start()
        }
    }
}
