import Foundation
import BluetideBase
import BluetideProfiles
import BluetideSupport

/// The packets `bluetide bench codec` decodes: spec vectors covering the common flag layouts.
public enum CodecBenchmark {
    static let heartRatePackets: [[UInt8]] = [
        [0x00, 0x48], [0x16, 0x4E, 0x1C, 0x03, 0xF4, 0x02], [0x19, 0x4E, 0x00, 0x10, 0x00, 0x1C, 0x03],
    ]
    static let cscPackets: [[UInt8]] = [
        [0x03, 0xA2, 0x5E, 0x01, 0x00, 0x6D, 0x0E, 0x4B, 0x63, 0x96, 0x7F],
        [0x02, 0xFE, 0xFF, 0x00, 0xFC], [0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x04],
    ]

    /// Runs each codec `count` times and returns the figures.
    public static func run(count: Int) -> [BenchResult] {
        var results = [
            measure("heart-rate", count: count, inputs: heartRatePackets) {
                (try? HeartRateMeasurement(bytes: $0)) != nil
            },
            measure("csc", count: count, inputs: cscPackets) { (try? CSCMeasurement(bytes: $0)) != nil },
        ]
        results.append(contentsOf: trainerResults(count: count))
        return results
    }

    /// Indoor Bike Data: speed + cadence + power (fitness.md §4.2 shapes), and every field.
    static let indoorBikePackets: [[UInt8]] = [
        IndoorBikeData(instantaneousSpeedHundredthKmh: 2950, instantaneousCadenceHalfRpm: 180, instantaneousPowerWatts: 250).bytes,
        IndoorBikeData(instantaneousSpeedHundredthKmh: 3120, instantaneousCadenceHalfRpm: 176, totalDistanceMeters: 12_345,
                       resistanceLevel: 20, instantaneousPowerWatts: 231, heartRateBpm: 142, elapsedTimeSeconds: 600).bytes,
    ]

    static func trainerResults(count: Int) -> [BenchResult] {
        [measure("ftms-indoor-bike", count: count, inputs: indoorBikePackets) { (try? IndoorBikeData(bytes: $0)) != nil }]
    }
}

/// One codec benchmark figure: `packets` decoded in `seconds` of wall time.
public struct BenchResult: Sendable {
    public let name: String
    public let packets: Int
    public let seconds: Double
    public var packetsPerSecond: Double { seconds > 0 ? Double(packets) / seconds : .infinity }
    public var line: String {
        let rate = packetsPerSecond
        return "\(name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(packets) packets in \(String(format: "%.3f", seconds)) s  =  \(String(format: "%.0f", rate)) packets/s  (\(String(format: "%.1f", 1e9 / rate)) ns/packet)"
    }
    public var json: String {
        "{\"type\":\"codec-benchmark\",\"profile\":\"\(name)\",\"packets\":\(packets),"
            + String(format: "\"seconds\":%.6f,\"packetsPerSecond\":%.0f}", seconds, packetsPerSecond)
    }
}

/// Times `body` over `count` iterations of a rotating set of inputs; failures are counted so the
/// optimiser cannot drop the work.
func measure(_ name: String, count: Int, inputs: [[UInt8]], body: ([UInt8]) -> Bool) -> BenchResult {
    let clock = ContinuousClock()
    var ok = 0
    let start = clock.now
    for i in 0..<count where body(inputs[i % inputs.count]) { ok += 1 }
    let elapsed = clock.now - start
    precondition(ok == count, "\(name): \(count - ok) of \(count) benchmark packets failed to decode")
    let seconds = elapsed.inSeconds
    return BenchResult(name: name, packets: count, seconds: seconds)
}
