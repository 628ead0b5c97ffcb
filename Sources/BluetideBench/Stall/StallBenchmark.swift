import BluetideBase
import BluetideHost
import BluetideTransport
import BluetideVirtual
import Foundation
import BluetideSupport

/// What a stalled-subscriber run measured.
public struct StallBenchResult: Sendable {
    /// One resident-set reading.
    public struct Sample: Sendable, Equatable {
        /// Seconds since the sender started.
        public var seconds: Double
        /// Resident set size of this process, MB (10^6 bytes).
        public var residentMegabytes: Double
    }

    /// Value bytes per notification.
    public let valueSize: Int
    /// Rate the sender offered, value bytes per second (0: as fast as the link takes them).
    public let offeredBytesPerSecond: Int
    /// How long the sender ran, seconds.
    public let seconds: Double
    /// Notifications the peripheral sent.
    public let sent: Int
    /// Values the central's subscription stream dropped (its reader never read).
    public let dropped: Int
    /// Values the stream held when the run ended (read out after it).
    public let held: Int
    /// The newest value's sequence number among those held (nil when none was held).
    public let newestHeld: Int?
    /// Resident set size, MB, about once a second (empty where `/proc` is not available).
    public let samples: [Sample]
    /// The limit the run is checked against, MB.
    public let limitMegabytes: Double

    /// Every value is accounted for: held or dropped.
    public var accountedFor: Bool { held + dropped == sent }
    public var firstMegabytes: Double? { samples.first?.residentMegabytes }
    public var peakMegabytes: Double? { samples.map(\.residentMegabytes).max() }
    public var lastMegabytes: Double? { samples.last?.residentMegabytes }
    /// Value bytes per second the sender achieved.
    public var bytesPerSecond: Double { seconds > 0 ? Double(sent * valueSize) / seconds : 0 }
    /// True when the peak stayed within the limit (or nothing was sampled) and every value is
    /// accounted for.
    public var isWithinLimit: Bool { accountedFor && (peakMegabytes ?? 0) <= limitMegabytes }

    /// Why the run failed, or nil.
    public var problem: String? {
        if !accountedFor { return "\(sent) values sent, but \(held) held + \(dropped) dropped = \(held + dropped)" }
        if let peak = peakMegabytes, peak > limitMegabytes {
            return String(format: "resident set peaked at %.1f MB, above the %.0f MB limit", peak, limitMegabytes)
        }
        return nil
    }

    public var line: String {
        func mb(_ value: Double?) -> String { value.map { String(format: "%.1f MB", $0) } ?? "n/a" }
        return String(format: "stall: %d × %d B notifications in %.1f s (%.0f bytes/s) to a subscriber that never read: ",
                      sent, valueSize, seconds, bytesPerSecond)
            + "\(held) held, \(dropped) dropped; resident set \(mb(firstMegabytes)) first, \(mb(peakMegabytes)) peak, \(mb(lastMegabytes)) last"
            + String(format: " (limit %.0f MB): ", limitMegabytes)
            + (problem.map { "PROBLEM: \($0)" } ?? "flat")
    }

    public var json: String {
        var fields = [
            "\"type\":\"stall-benchmark\"", "\"valueSizeBytes\":\(valueSize)", "\"offeredBytesPerSecond\":\(offeredBytesPerSecond)",
            String(format: "\"seconds\":%.3f", seconds), String(format: "\"bytesPerSecond\":%.0f", bytesPerSecond),
            "\"sent\":\(sent)", "\"dropped\":\(dropped)", "\"held\":\(held)",
            String(format: "\"limitMegabytes\":%.1f", limitMegabytes),
            "\"residentMegabytes\":[" + samples.map { String(format: "{\"seconds\":%.1f,\"megabytes\":%.2f}", $0.seconds, $0.residentMegabytes) }.joined(separator: ",") + "]",
            "\"withinLimit\":\(isWithinLimit)",
        ]
        if let peak = peakMegabytes { fields.append(String(format: "\"peakMegabytes\":%.2f", peak)) }
        if let problem { fields.append("\"problem\":\"\(problem)\"") }
        return "{" + fields.joined(separator: ",") + "}"
    }
}

/// Memory under a subscriber that stops reading: two `HostStack`s on a fresh in-process
/// ``VirtualLink``; the central subscribes to notifications and never reads its stream while
/// the peripheral notifies at a set rate. The host keeps reading the link (so flow control does
/// not push back) and the subscription's bounded buffer keeps the newest values and drops the
/// rest, so the process's memory stays flat. After the run a read on the same bearer (whose
/// response follows every notification sent before it) makes the count exact: every value
/// sent was held or dropped.
public enum StallBenchmark {
    static let service = BluetoothUUID(0xFFC0)
    static let notifyUUID = BluetoothUUID(0xFFC1)
    static let fenceUUID = BluetoothUUID(0xFFC2)

    /// Runs for `seconds` at `bytesPerSecond` of `valueSize`-byte notifications (MTU `mtu`),
    /// sampling the resident set about once a second; `sample` sees each reading as it is taken.
    public static func run(
        seconds: Double, bytesPerSecond: Int, valueSize: Int, mtu: Int = 517, limitMegabytes: Double = 40,
        sample: @escaping @Sendable (StallBenchResult.Sample) -> Void = { _ in }
    ) async throws -> StallBenchResult {
        try await run(
            until: .seconds(seconds), bytesPerSecond: bytesPerSecond, valueSize: valueSize, mtu: mtu,
            limitMegabytes: limitMegabytes, sample: sample)
    }

    /// Sends exactly `count` values as fast as the link takes them (no pacing, no clock): what a
    /// test runs to count the bound.
    public static func run(count: Int, valueSize: Int, mtu: Int = 517) async throws -> StallBenchResult {
        try await run(until: .count(count), bytesPerSecond: 0, valueSize: valueSize, mtu: mtu, limitMegabytes: .infinity, sample: { _ in })
    }

    enum End { case seconds(Double), count(Int) }

    static func run(
        until end: End, bytesPerSecond: Int, valueSize: Int, mtu: Int, limitMegabytes: Double,
        sample: @escaping @Sendable (StallBenchResult.Sample) -> Void
    ) async throws -> StallBenchResult {
        let pair = try await VirtualBenchPair.connect(
            what: "bench stall", name: "Bluetide Stall", peripheralAddress: .randomStatic(0x0000_B1DE_5A11),
            centralAddress: .randomStatic(0x0000_B1DE_5A10),
            services: [GATTServiceDefinition(uuid: service, characteristics: [
                GATTCharacteristicDefinition(uuid: notifyUUID, properties: .notify),
                GATTCharacteristicDefinition(uuid: fenceUUID, properties: .read, value: [0]),
            ])],
            mtu: mtu)
        defer { pair.closeLater() }
        let (peripheral, link, negotiated) = (pair.peripheral, pair.link, pair.mtu)
        guard valueSize >= 4, valueSize <= negotiated - 3 else {
            throw BenchFailure("bench stall: --packet-size \(valueSize): expected 4 to \(negotiated - 3) (the negotiated MTU − 3)")
        }
        guard let notify = pair.characteristic(notifyUUID),
              let fence = pair.characteristic(fenceUUID),
              let handle = await peripheral.valueHandle(of: notifyUUID),
              let peripheralLink = await peripheral.openConnections.first
        else { throw BenchFailure("bench stall: the benchmark service was not discovered") }
        // Subscribed, and never read until the run is over.
        let values = try await link.gatt.subscribe(to: notify)

        var samples: [StallBenchResult.Sample] = []
        let start = ContinuousClock.now
        func elapsed() -> Double {
            (ContinuousClock.now - start).inSeconds
        }
        func takeSample() {
            guard let rss = residentMegabytes() else { return }
            let reading = StallBenchResult.Sample(seconds: elapsed(), residentMegabytes: rss)
            samples.append(reading)
            sample(reading)
        }
        takeSample()
        var sent = 0
        var nextSample = 1.0
        switch end {
        case let .count(count):
            while sent < count {
                try await peripheral.waitForBuffers(on: peripheralLink.handle)
                await peripheral.updateValue(GATTBenchmark.value(sent, size: valueSize), at: handle)
                sent += 1
            }
        case let .seconds(duration):
            // Every 10 ms, the values due by then (so the rate holds whatever the sleep's slack).
            while elapsed() < duration {
                let due = Int(elapsed() * Double(bytesPerSecond) / Double(valueSize))
                while sent < due {
                    try await peripheral.waitForBuffers(on: peripheralLink.handle)
                    await peripheral.updateValue(GATTBenchmark.value(sent, size: valueSize), at: handle)
                    sent += 1
                }
                if elapsed() >= nextSample {
                    takeSample()
                    nextSample += 1
                }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        let seconds = elapsed()
        takeSample()
        // The read's response follows every notification sent before it on the bearer: once it
        // is back, the central has delivered (or dropped) all of them.
        _ = try await link.gatt.read(handle: fence.valueHandle)
        let dropped = await link.droppedValues
        // Ends the stream; what it holds is still read out.
        try await link.gatt.unsubscribe(from: notify)
        var held = 0
        var newest: Int?
        for await value in values {
            held += 1
            if value.count >= 4 {
                newest = Int(value[0]) | Int(value[1]) << 8 | Int(value[2]) << 16 | Int(value[3]) << 24
            }
        }
        _ = try? await link.disconnect(timeout: 2)
        return StallBenchResult(
            valueSize: valueSize, offeredBytesPerSecond: bytesPerSecond, seconds: seconds, sent: sent, dropped: dropped,
            held: held, newestHeld: newest, samples: samples, limitMegabytes: limitMegabytes)
    }

    /// This process's resident set size, MB (10^6 bytes), from `/proc/self/status`; nil where
    /// that is not available.
    static func residentMegabytes() -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, let kilobytes = Double(fields[1]) else { return nil }
            return kilobytes * 1024 / 1e6
        }
        return nil
    }
}
