import BluetideBase

/// The answering side of a bench run (`receive` or `pong`), without I/O: counts what arrives,
/// measures speed and jitter, and says which ACK to send back. Times are seconds on one
/// monotonic clock.
struct BumbleBenchReceiver: Sendable {
    /// `receive` or `pong`.
    let scenario: BumbleBenchScenario
    /// When the run started: the RESET (or, without one, the receiver's creation).
    private(set) var startTime: Double
    /// When the last SEQUENCE packet arrived.
    private(set) var lastArrival: Double?
    /// SEQUENCE packets received in this run.
    private(set) var packets = 0
    /// Their octets, headers included.
    private(set) var bytes = 0
    /// Sequence numbers skipped (packets that never came, or came late).
    private(set) var missing = 0
    /// Packets that arrived after a later one.
    private(set) var outOfOrder = 0
    /// Packets that did not decode.
    private(set) var invalidPackets = 0
    /// Size of the last SEQUENCE packet, octets.
    private(set) var packetSize = 0
    /// Jitter samples, seconds: arrival time minus the time the sender's timestamp predicts
    /// from the first packet (Bumble's definition).
    private(set) var jitter: [Double] = []
    private var expected: UInt32 = 0
    private var first: (arrival: Double, timestamp: UInt32)?

    init(scenario: BumbleBenchScenario, at time: Double) {
        precondition(!scenario.originatesPackets, "a receiver runs receive or pong")
        self.scenario = scenario
        self.startTime = time
    }

    /// What one packet caused.
    struct Outcome: Equatable, Sendable {
        /// A packet to send back (an ACK), if any.
        var reply: [UInt8]?
        /// True when this packet ended the run (it carried the LAST flag).
        var runEnded = false
        /// True when it was a RESET (a new run started).
        var wasReset = false
    }

    /// Takes a packet that arrived at `time`.
    mutating func receive(_ data: [UInt8], at time: Double) -> Outcome {
        guard let packet = try? BumbleBenchPacket(bytes: data) else {
            invalidPackets += 1
            return Outcome()
        }
        switch packet {
        case .reset:
            self = BumbleBenchReceiver(scenario: scenario, at: time)
            return Outcome(wasReset: true)
        case .ack:
            return Outcome()
        case let .sequence(number, isLast, timestamp, _):
            packets += 1
            bytes += data.count
            packetSize = data.count
            lastArrival = time
            if number > expected {
                missing += Int(number - expected)
            } else if number < expected {
                outOfOrder += 1
            }
            expected = max(expected, number &+ 1)
            if let first {
                let predicted = first.arrival + Double(Int64(timestamp) - Int64(first.timestamp)) / 1_000_000
                jitter.append(time - predicted)
            } else {
                first = (time, timestamp)
                jitter.append(0)
            }
            let ack = BumbleBenchPacket.ack(number: number, isLast: isLast).bytes
            switch scenario {
            case .pong: return Outcome(reply: ack, runEnded: isLast)
            default: return Outcome(reply: isLast ? ack : nil, runEnded: isLast)
            }
        }
    }

    /// The figures of the run so far.
    func report(role: BumbleBenchRole, mtu: Int) -> BumbleBenchReport {
        let seconds = (lastArrival ?? startTime) - startTime
        // Bumble reports jitter around its mean, so a constant offset does not count.
        let mean = jitter.isEmpty ? 0 : jitter.reduce(0, +) / Double(jitter.count)
        let adjusted = jitter.map { abs($0 - mean) * 1000 }
        return BumbleBenchReport(
            role: role, scenario: scenario, packets: packets, packetSize: packetSize, bytes: bytes,
            seconds: max(seconds, 0), mtu: mtu, jitter: jitter.count >= 3 ? BenchStatistics(adjusted) : nil,
            missing: missing, outOfOrder: outOfOrder, invalid: invalidPackets)
    }
}
