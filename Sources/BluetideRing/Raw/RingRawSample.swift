import Bluetide
import BluetideSupport
import Foundation

/// One raw sensor packet (`A1`) as it arrived from the ring.
public struct RingRawSample: Hashable, Sendable {
    /// Seconds since the raw stream started, on the session's monotonic clock (arrival time:
    /// the ring's packets carry no time of their own).
    public var seconds: Double
    /// The decoded sample.
    public var sample: COLMIRawSensorSample
    /// The 16 bytes as received (for the value log).
    public var packet: [UInt8]

    public init(seconds: Double, sample: COLMIRawSensorSample, packet: [UInt8]) {
        self.seconds = seconds
        self.sample = sample
        self.packet = packet
    }

    /// `ppg`, `accelerometer`, `spo2`, or `other`.
    public var kind: String {
        switch sample {
        case .ppg: "ppg"
        case .accelerometer: "accelerometer"
        case .spo2: "spo2"
        case .other: "other"
        }
    }
}

/// Counts of a raw stream: samples per kind, how long, what was lost on our side.
public struct RingRawStatistics: Hashable, Sendable {
    /// Samples received, by ``RingRawSample/kind``.
    public private(set) var counts: [String: Int] = [:]
    /// Arrival time of the first and of the last sample, seconds since the stream started.
    public private(set) var first: Double?
    public private(set) var last: Double?
    /// Raw packets the session discarded: corrupt (bad checksum) or not taken from a full buffer.
    /// The ring's packets carry no sequence number, so packets lost on the air cannot be counted.
    public var dropped = 0

    public init() {}

    /// Counts one sample.
    public mutating func add(_ sample: RingRawSample) {
        counts[sample.kind, default: 0] += 1
        if first == nil { first = sample.seconds }
        last = sample.seconds
    }

    /// Samples received in all.
    public var total: Int { counts.values.reduce(0, +) }

    /// Samples per second over `duration` seconds (the whole run), 0 for an empty run.
    public func samplesPerSecond(over duration: Double) -> Double { duration > 0 ? Double(total) / duration : 0 }
}

/// Writes raw samples as CSV or JSON Lines, one row per sample with its timestamp.
///
/// CSV columns: `time` (UTC, ISO 8601 with milliseconds and `Z`), `seconds` (since the stream
/// started), `kind` (`ppg`, `accelerometer`, `spo2`), then `raw`, `max`, `min`, `diff` (PPG and
/// SpO2) or `x`, `y`, `z` (accelerometer, 12-bit signed counts of the STK8321, bytes 2-3, 4-5,
/// 6-7 in atc1441's axis order); cells a kind does not have are empty. JSON Lines has the same
/// keys, without the empty ones.
public enum RingRawFormat: String, Sendable, CaseIterable {
    case csv, jsonl

    /// The first line (CSV only).
    public var header: String? { self == .csv ? "time,seconds,kind,raw,max,min,diff,x,y,z" : nil }

    /// The line of one sample; `start` is the wall-clock time of ``RingRawSample/seconds`` 0.
    public func line(_ s: RingRawSample, start: Date) -> String {
        let time = Self.timeText(start.addingTimeInterval(s.seconds))
        let seconds = String(format: "%.3f", s.seconds)
        var fields: [(String, Int)] = []
        switch s.sample {
        case let .ppg(raw, max, min, diff):
            fields = [("raw", Int(raw)), ("max", Int(max)), ("min", Int(min)), ("diff", Int(diff))]
        case let .spo2(raw, max, min, diff):
            fields = [("raw", Int(raw)), ("max", Int(max)), ("min", Int(min)), ("diff", Int(diff))]
        case let .accelerometer(a, b, c):
            fields = [("x", Int(COLMIRawSensorSample.signed12(a))), ("y", Int(COLMIRawSensorSample.signed12(b))), ("z", Int(COLMIRawSensorSample.signed12(c)))]
        case .other:
            fields = []
        }
        switch self {
        case .csv:
            let columns = ["raw", "max", "min", "diff", "x", "y", "z"]
            let cells = columns.map { name in fields.first { $0.0 == name }.map { String($0.1) } ?? "" }
            return ([time, seconds, s.kind] + cells).joined(separator: ",")
        case .jsonl:
            let rest = fields.map { ",\"\($0.0)\":\($0.1)" }.joined()
            return "{\"time\":\"\(time)\",\"seconds\":\(seconds),\"kind\":\"\(s.kind)\"\(rest)}"
        }
    }

    /// `2026-11-23T08:05:00.250Z`.
    public static func timeText(_ date: Date) -> String {
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let (seconds, ms) = CivilCalendar.floorDivide(millis, 1000)
        let (days, rest) = CivilCalendar.floorDivide(seconds, 86_400)
        let p = RingCalendar.pad
        return "\(RingCalendar.label(day: Int(days)))T\(p(rest / 3600, 2)):\(p(rest / 60 % 60, 2)):\(p(rest % 60, 2)).\(p(ms, 3))Z"
    }
}
