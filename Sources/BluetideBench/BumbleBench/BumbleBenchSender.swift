import BluetideBase

/// The originating side of a bench run (`send` or `ping`), without I/O: it makes the RESET and
/// SEQUENCE packets and interprets what comes back. Times are seconds on one monotonic clock.
struct BumbleBenchSender: Sendable {
    let settings: BumbleBenchSettings
    /// When the RESET went out (Bumble starts its clock there).
    private(set) var startTime: Double?
    /// SEQUENCE packets made so far.
    private(set) var packetsSent = 0
    /// Octets of SEQUENCE packets made so far, headers included.
    private(set) var bytesSent = 0
    /// When the run ended: the ACK of the last packet arrived.
    private(set) var finishedAt: Double?
    /// Round-trip times of the ACKed packets, seconds, in arrival order (`ping`).
    private(set) var roundTrips: [Double] = []
    /// ACKs that did not answer the next packet in order (`ping`), or answered none sent.
    private(set) var unexpectedAcks = 0
    /// Packets from the peer that did not decode.
    private(set) var invalidPackets = 0
    private var sendTimes: [Double] = []
    private var nextExpectedAck: UInt32 = 0

    init(settings: BumbleBenchSettings) {
        precondition(settings.scenario.originatesPackets, "a sender runs send or ping")
        self.settings = settings
    }

    /// The RESET that opens a run, sent at `time`.
    mutating func reset(at time: Double) -> [UInt8] {
        startTime = time
        return BumbleBenchPacket.reset.bytes
    }

    /// When SEQUENCE packet `index` is due with `--pace` (nil: as soon as the link takes it).
    func dueTime(of index: Int) -> Double? {
        guard settings.paceMilliseconds > 0, let startTime else { return nil }
        return startTime + Double(index) * settings.paceMilliseconds / 1000
    }

    /// True once every SEQUENCE packet was made.
    var hasSentAll: Bool { packetsSent >= settings.packetCount }

    /// The next SEQUENCE packet, sent at `time` (the last one carries the LAST flag).
    mutating func nextPacket(at time: Double) -> [UInt8] {
        let index = packetsSent
        let start = startTime ?? time
        let micros = UInt32(clamping: Int64(((time - start) * 1_000_000).rounded(.down)))
        let packet = BumbleBenchPacket.sequence(
            number: UInt32(truncatingIfNeeded: index), isLast: index == settings.packetCount - 1,
            timestampMicroseconds: micros, packetSize: settings.packetSize
        ).bytes
        sendTimes.append(time)
        packetsSent += 1
        bytesSent += packet.count
        return packet
    }

    /// Takes a packet from the peer, arrived at `time`; returns true when the run is over
    /// (`send`: the ACK came; `ping`: the ACK of the last packet came).
    mutating func receive(_ bytes: [UInt8], at time: Double) -> Bool {
        guard let packet = try? BumbleBenchPacket(bytes: bytes) else {
            invalidPackets += 1
            return false
        }
        guard case let .ack(number, isLast) = packet else { return false }
        switch settings.scenario {
        case .send:
            finishedAt = time
            return true
        default:
            if Int(number) < sendTimes.count {
                roundTrips.append(time - sendTimes[Int(number)])
                if number != nextExpectedAck { unexpectedAcks += 1 }
                nextExpectedAck = number &+ 1
            } else {
                unexpectedAcks += 1
            }
            if isLast {
                finishedAt = time
                return true
            }
            return false
        }
    }

    /// The figures of the run so far.
    func report(role: BumbleBenchRole, mtu: Int) -> BumbleBenchReport {
        let seconds = (finishedAt ?? startTime ?? 0) - (startTime ?? 0)
        return BumbleBenchReport(
            role: role, scenario: settings.scenario, packets: packetsSent, packetSize: settings.packetSize,
            bytes: bytesSent, seconds: max(seconds, 0), mtu: mtu,
            roundTrip: settings.scenario == .ping ? BenchStatistics(roundTrips.map { $0 * 1000 }) : nil,
            unexpected: unexpectedAcks, invalid: invalidPackets)
    }
}
