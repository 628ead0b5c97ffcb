import BluetideRecording
import Foundation
import Testing
@testable import BluetideRide

@Suite struct ExportTests {
    static let start = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18T11:06:40Z

    static let samples: [RideSample] = [
        RideSample(time: 1, trigger: .tick, speedKmh: 36, cadenceRpm: 90.4, powerWatts: 200, heartRateBpm: 120, distanceMeters: 10),
        RideSample(time: 2, trigger: .tick, speedKmh: 36, cadenceRpm: 91, powerWatts: 210, heartRateBpm: nil, distanceMeters: 20),
        RideSample(time: 3, trigger: .tick, speedKmh: nil, cadenceRpm: nil, powerWatts: nil, heartRateBpm: 130, distanceMeters: 20),
    ]

    /// Child element names of each occurrence of `parent`, in document order.
    static func children(of parent: String, in xml: String) throws -> [[String]] {
        var out: [[String]] = []
        var depth = 0
        var inside = false
        for element in try XMLScanner.scan(xml) {
            switch element.kind {
            case let .start(tag, _, selfClosing, _):
                if tag == parent, !inside {
                    inside = true
                    depth = 0
                    out.append([])
                    continue
                }
                if inside {
                    if depth == 0 { out[out.count - 1].append(tag) }
                    if !selfClosing { depth += 1 }
                }
            case let .end(tag):
                if inside {
                    if depth == 0, tag == parent { inside = false } else { depth -= 1 }
                }
            case .text: break
            }
        }
        return out
    }

    static func texts(_ tag: String, in xml: String) throws -> [String] {
        try XMLScanner.scan(xml).compactMap {
            if case let .text(parent, content) = $0.kind, parent == tag { return content }
            return nil
        }
    }

    @Test func tcxHasTheFieldsImportersReadInSchemaOrder() throws {
        let xml = TCXWriter.document(samples: Self.samples, start: Self.start)
        #expect(xml.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"))
        #expect(xml.contains("<Activity Sport=\"Biking\">"))
        #expect(try Self.texts("Id", in: xml) == ["2026-11-18T11:06:40.000Z"])
        // Lap children in the order of the TCX v2 schema's ActivityLap_t sequence.
        let lap = try #require(try Self.children(of: "Lap", in: xml).first)
        #expect(lap == [
            "TotalTimeSeconds", "DistanceMeters", "MaximumSpeed", "Calories", "AverageHeartRateBpm", "MaximumHeartRateBpm",
            "Intensity", "Cadence", "TriggerMethod", "Track", "Extensions",
        ])
        #expect(try Self.texts("TotalTimeSeconds", in: xml) == ["3.0"])
        #expect(try Self.texts("MaximumSpeed", in: xml) == ["10.00"])
        #expect(try Self.texts("Intensity", in: xml) == ["Active"])
        // Trackpoints: Time, DistanceMeters, HeartRateBpm, Cadence, Extensions (Trackpoint_t order),
        // with missing values left out rather than written as 0.
        let points = try Self.children(of: "Trackpoint", in: xml)
        #expect(points == [
            ["Time", "DistanceMeters", "HeartRateBpm", "Cadence", "Extensions"],
            ["Time", "DistanceMeters", "Cadence", "Extensions"],
            ["Time", "DistanceMeters", "HeartRateBpm"],
        ])
        #expect(try Self.texts("Time", in: xml) == ["2026-11-18T11:06:41.000Z", "2026-11-18T11:06:42.000Z", "2026-11-18T11:06:43.000Z"])
        #expect(try Self.texts("Value", in: xml) == ["125", "130", "120", "130"])  // lap average and max, then per point
        #expect(try Self.texts("ns3:Watts", in: xml) == ["200", "210"])
        #expect(try Self.texts("ns3:Speed", in: xml) == ["10.000", "10.000"])
        #expect(try Self.texts("ns3:AvgWatts", in: xml) == ["205"])
        #expect(try Self.texts("ns3:MaxWatts", in: xml) == ["210"])
        #expect(try Self.texts("Cadence", in: xml) == ["91", "90", "91"])
        // Every element opened is closed (the scanner would leave the stack unbalanced otherwise).
        var stack: [String] = []
        for element in try XMLScanner.scan(xml) {
            switch element.kind {
            case let .start(tag, _, selfClosing, _): if !selfClosing { stack.append(tag) }
            case let .end(tag): #expect(stack.popLast() == tag)
            case .text: break
            }
        }
        #expect(stack.isEmpty)
    }

    @Test func csvLeavesMissingValuesEmpty() {
        let csv = RideCSVWriter.document(samples: Self.samples, start: Self.start)
        let lines = csv.split(separator: "\n").map(String.init)
        #expect(lines == [
            RideCSVWriter.header,
            "1.000,2026-11-18T11:06:41.000Z,36.00,90,200,120,10.00,",
            "2.000,2026-11-18T11:06:42.000Z,36.00,91,210,,20.00,",
            "3.000,2026-11-18T11:06:43.000Z,,,,130,20.00,",
        ])
    }

    @Test func aRecordedRideExportsItsTicks() async throws {
        let device = DeviceIdentity(address: "C0:00:00:00:00:02", name: "HRM")
        let records = (0..<9).map { step in
            ValueRecord(
                timestamp: Double(step) * 0.5, device: device, characteristic: .heartRateMeasurement, operation: .notify,
                value: [0x00, UInt8(100 + step)])
        }
        let log = ValueLog(header: ValueLogHeader(startedAt: WallClockTime(Self.start)), records: records)
        let samples = try await RideExport.samples(of: log)
        #expect(samples.map(\.time) == [1, 2, 3, 4])
        #expect(samples.map(\.heartRateBpm) == [101, 103, 105, 107])
        let csv = try await RideExport.document(of: log, format: .csv)
        #expect(csv.split(separator: "\n").count == 5)
        #expect(csv.contains("1.000,2026-11-18T11:06:41.000Z,,,,101,0.00,"))
    }
}
