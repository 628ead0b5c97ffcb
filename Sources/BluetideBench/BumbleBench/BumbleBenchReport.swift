import Foundation

/// Minimum, maximum, mean and sample standard deviation of a set of samples (milliseconds in
/// the bench reports).
public struct BenchStatistics: Codable, Equatable, Sendable {
    public let count: Int
    public let min: Double
    public let max: Double
    public let mean: Double
    /// Sample standard deviation (n − 1); 0 for fewer than 2 samples.
    public let stdev: Double

    /// Nil for no samples.
    init?(_ samples: [Double]) {
        guard let low = samples.min(), let high = samples.max() else { return nil }
        count = samples.count
        min = low
        max = high
        mean = samples.reduce(0, +) / Double(samples.count)
        if samples.count > 1 {
            let m = mean
            stdev = (samples.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(samples.count - 1)).squareRoot()
        } else {
            stdev = 0
        }
    }

    /// `min=… max=… average=… stdev=…` with two decimals.
    var text: String {
        String(format: "min=%.2f max=%.2f average=%.2f stdev=%.2f", min, max, mean, stdev)
    }
}

/// The figures of one side of one bench run.
public struct BumbleBenchReport: Equatable, Sendable {
    public var role: BumbleBenchRole
    public var scenario: BumbleBenchScenario
    /// SEQUENCE packets sent (`send`, `ping`) or received (`receive`, `pong`).
    public var packets: Int
    /// Octets per SEQUENCE packet, header included.
    public var packetSize: Int
    /// Octets of all those packets, headers included (Bumble counts the same way).
    public var bytes: Int
    /// `send`: RESET to ACK; `receive`: RESET to the last packet, seconds.
    public var seconds: Double
    /// The link's ATT MTU.
    public var mtu: Int
    /// Round-trip times, ms (`ping`).
    public var roundTrip: BenchStatistics? = nil
    /// Absolute arrival jitter around its mean, ms (`receive`, `pong`; 3 packets or more).
    public var jitter: BenchStatistics? = nil
    /// Sequence numbers that never arrived (`receive`, `pong`).
    public var missing = 0
    /// Packets that arrived after a later one (`receive`, `pong`).
    public var outOfOrder = 0
    /// ACKs out of order or for no packet sent (`ping`).
    public var unexpected = 0
    /// Packets that did not decode.
    public var invalid = 0

    /// Average speed over ``seconds``, octets per second.
    public var bytesPerSecond: Double { seconds > 0 ? Double(bytes) / seconds : 0 }

    /// True when nothing went missing, out of order or undecodable.
    public var isClean: Bool { missing == 0 && outOfOrder == 0 && unexpected == 0 && invalid == 0 }

    /// One line for people.
    public var line: String {
        var text = "\(role.rawValue) \(scenario.rawValue): "
        switch scenario {
        case .send:
            text += "\(packets) × \(packetSize) B = \(bytes) B in " + String(format: "%.3f s, average %.0f B/s", seconds, bytesPerSecond)
                + " (ACK received)"
        case .receive:
            text += "\(packets) packets, \(bytes) B in " + String(format: "%.3f s, average %.0f B/s", seconds, bytesPerSecond)
            if let jitter { text += "; jitter ms \(jitter.text)" }
        case .ping:
            text += "\(packets) × \(packetSize) B; RTT ms " + (roundTrip?.text ?? "none")
        case .pong:
            text += "answered \(packets) packets"
            if let jitter { text += "; jitter ms \(jitter.text)" }
        }
        text += "; MTU \(mtu)"
        var problems: [String] = []
        if missing > 0 { problems.append("\(missing) missing") }
        if outOfOrder > 0 { problems.append("\(outOfOrder) out of order") }
        if unexpected > 0 { problems.append("\(unexpected) unexpected ACKs") }
        if invalid > 0 { problems.append("\(invalid) undecodable") }
        text += problems.isEmpty ? "; all in order" : "; " + problems.joined(separator: ", ")
        return text
    }

    /// Over several runs of one side (`--repeat`, or a lingering receiver): min/max/average/stdev
    /// of the speed (send, receive) or of the average RTT (ping); nil for a single run.
    public static func summary(of reports: [BumbleBenchReport]) -> String? {
        guard reports.count > 1, let first = reports.first else { return nil }
        let side = "\(first.role.rawValue) \(first.scenario.rawValue), \(reports.count) runs"
        switch first.scenario {
        case .ping:
            return BenchStatistics(reports.compactMap { $0.roundTrip?.mean }).map { "\(side): average RTT ms \($0.text)" }
        case .send, .receive:
            return BenchStatistics(reports.map(\.bytesPerSecond)).map {
                "\(side): B/s " + String(format: "min=%.0f max=%.0f average=%.0f stdev=%.0f", $0.min, $0.max, $0.mean, $0.stdev)
            }
        case .pong:
            return "\(side): answered \(reports.map(\.packets).reduce(0, +)) packets"
        }
    }

    /// The record's fields, named as docs/json-output.md asks (lowerCamelCase, units in the name).
    private struct JSONForm: Encodable {
        let type = "bench-result"
        let role: String, scenario: String
        let packets: Int, packetSizeBytes: Int, bytes: Int
        let seconds: Double, bytesPerSecond: Double, mtu: Int
        let roundTripMilliseconds: BenchStatistics?, jitterMilliseconds: BenchStatistics?
        let missing: Int, outOfOrder: Int, unexpected: Int, invalid: Int
    }

    /// One `bench-result` record of the one JSON schema (docs/json-output.md); statistics that do
    /// not apply are left out.
    public var json: String {
        let form = JSONForm(
            role: role.rawValue, scenario: scenario.rawValue, packets: packets, packetSizeBytes: packetSize, bytes: bytes,
            seconds: (seconds * 1e6).rounded() / 1e6, bytesPerSecond: bytesPerSecond.rounded(), mtu: mtu,
            roundTripMilliseconds: roundTrip, jitterMilliseconds: jitter,
            missing: missing, outOfOrder: outOfOrder, unexpected: unexpected, invalid: invalid)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? String(decoding: encoder.encode(form), as: UTF8.self)) ?? "{}"
    }
}
