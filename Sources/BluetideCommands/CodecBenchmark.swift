import BluetideCore
import BluetideProfiles

/// The packets `bluetide bench codec` decodes: spec vectors covering the common flag layouts.
enum CodecBenchmark {
    static let heartRatePackets: [[UInt8]] = [
        [0x00, 0x48], [0x16, 0x4E, 0x1C, 0x03, 0xF4, 0x02], [0x19, 0x4E, 0x00, 0x10, 0x00, 0x1C, 0x03],
    ]
    static let cscPackets: [[UInt8]] = [
        [0x03, 0xA2, 0x5E, 0x01, 0x00, 0x6D, 0x0E, 0x4B, 0x63, 0x96, 0x7F],
        [0x02, 0xFE, 0xFF, 0x00, 0xFC], [0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x04],
    ]

    /// Runs each codec `count` times and returns the figures.
    static func run(count: Int) -> [BenchResult] {
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
