import BluetideBase

/// Session totals and averages derived from a sequence of FE-C pages.
///
/// The trainer's counters are small and wrap: page 16 elapsed time (0.25 s, wraps at 64 s) and
/// distance (1 m, wraps at 256 m), page 25 event count (wraps at 256) and accumulated power
/// (wraps at 65536), page 26 counters. The accumulator sums modular deltas between consecutive
/// pages of the same number, so the raw bytes never need resetting. Totals start at 0 with the
/// first page seen (that page is the baseline).
///
/// Time is passed in (seconds on the caller's monotonic clock), never read. It is used to:
/// - count whole 64 s wraps of the elapsed-time byte missed during a gap (while IN USE);
/// - estimate 256 m distance wraps during a gap from the last speed;
/// - drop a page-25 power interval after a gap of 60 s or more (the 8-bit event count could
///   have wrapped unseen) and when time goes backwards (a new baseline is taken).
/// Intervals whose average power exceeds 4094 W (a 12-bit power can't) are treated as glitches
/// and dropped; repeated pages (no new events) change nothing.
public struct FECAccumulator: Sendable, Equatable, Encodable {
    /// Wheel circumference in metres, for page 26 speed.
    public var wheelCircumferenceMeters: Double

    /// Elapsed time in seconds since the first page 16.
    public private(set) var elapsedSeconds: Double = 0
    /// Distance in metres since the first page 16 (only while the trainer marks distance valid).
    public private(set) var distanceMeters: Double = 0
    /// Latest speed from page 16 in km/h, nil until seen or when the trainer marks it invalid.
    public private(set) var speedKmh: Double?
    /// Latest FE state.
    public private(set) var state: FEState?
    /// Latest instantaneous power (page 25), W.
    public private(set) var instantaneousPowerWatts: Int?
    /// Latest cadence (page 25), rpm.
    public private(set) var cadenceRpm: Int?
    /// Page 25 events counted into the session average.
    public private(set) var powerEventCount: Int = 0
    /// Sum of accumulated-power deltas over those events, W (divide by events for average W).
    public private(set) var powerSumWatts: Int = 0
    /// Average power of the latest page 25 interval, W.
    public private(set) var intervalAveragePowerWatts: Double?
    /// Latest page 26 torque, N·m.
    public private(set) var torqueNewtonMeters: Double?
    /// Latest page 26 angular velocity, rad/s.
    public private(set) var angularVelocityRadiansPerSecond: Double?
    /// Latest page 26 power (torque × angular velocity), W.
    public private(set) var torquePowerWatts: Double?
    /// Latest page 26 wheel speed (circumference × events / period), km/h.
    public private(set) var wheelSpeedKmh: Double?

    private var lastGeneral: GeneralBaseline?
    private var lastTrainer: TrainerBaseline?
    private var lastTorque: TorqueBaseline?

    private struct GeneralBaseline: Sendable, Equatable, Encodable {
        var elapsed: UInt8
        var distance: UInt8
        var state: FEState
        var time: Double
    }
    private struct TrainerBaseline: Sendable, Equatable, Encodable {
        var events: UInt8
        var accumulatedPower: UInt16
        var time: Double
    }
    private struct TorqueBaseline: Sendable, Equatable, Encodable {
        var events: UInt8
        var period: UInt16
        var torque: UInt16
        var time: Double
    }

    /// Event-weighted session average power from page 25, W; nil before two pages with events.
    public var averagePowerWatts: Double? {
        powerEventCount > 0 ? Double(powerSumWatts) / Double(powerEventCount) : nil
    }

    public init(wheelCircumferenceMeters: Double = 2.105) {
        self.wheelCircumferenceMeters = wheelCircumferenceMeters
    }

    /// Adds the page of a frame received at `time` seconds.
    @discardableResult
    public mutating func add(_ frame: FECFrame, at time: Double) -> FECDerivedValues {
        add(frame.page, at: time)
    }

    /// Adds one page received at `time` seconds and returns the session values after it.
    @discardableResult
    public mutating func add(_ page: FECPage, at time: Double) -> FECDerivedValues {
        switch page {
        case .generalData(let p): addGeneral(p, at: time)
        case .generalSettings(let p): state = p.state
        case .trainerData(let p): addTrainer(p, at: time)
        case .trainerTorqueData(let p): addTorque(p, at: time)
        default: break
        }
        return derived
    }

    /// A snapshot of the session values.
    public var derived: FECDerivedValues {
        FECDerivedValues(
            elapsedSeconds: elapsedSeconds, distanceMeters: distanceMeters, speedKmh: speedKmh,
            averagePowerWatts: averagePowerWatts, intervalAveragePowerWatts: intervalAveragePowerWatts,
            instantaneousPowerWatts: instantaneousPowerWatts, cadenceRpm: cadenceRpm,
            torqueNewtonMeters: torqueNewtonMeters, torquePowerWatts: torquePowerWatts, wheelSpeedKmh: wheelSpeedKmh,
            state: state?.name)
    }

    private mutating func addGeneral(_ p: FECGeneralData, at time: Double) {
        state = p.state
        speedKmh = p.speedKmh
        defer {
            lastGeneral = GeneralBaseline(
                elapsed: p.elapsedTimeQuarterSeconds, distance: p.distanceTraveledMeters, state: p.state, time: time)
        }
        guard let last = lastGeneral, time >= last.time, time.isFinite else { return }
        let gap = time - last.time
        let ticks = Int(p.elapsedTimeQuarterSeconds &- last.elapsed)
        var seconds = Double(ticks) / 4
        let running = p.state == .inUse && last.state == .inUse
        if running, gap >= 64 {
            // Whole 64 s turns of the counter that the gap hides.
            seconds += ((gap - seconds) / 64).rounded() * 64
        }
        elapsedSeconds += seconds
        if p.distanceTraveledEnabled {
            var meters = Double(p.distanceTraveledMeters &- last.distance)
            if running, let speed = p.speedMetersPerSecond, speed * gap >= 128 {
                meters += max(0, ((speed * gap - meters) / 256).rounded()) * 256
            }
            distanceMeters += meters
        }
    }

    private mutating func addTrainer(_ p: FECTrainerData, at time: Double) {
        state = p.state
        instantaneousPowerWatts = p.power.map(Int.init)
        cadenceRpm = p.cadence.map(Int.init)
        defer { lastTrainer = TrainerBaseline(events: p.eventCount, accumulatedPower: p.accumulatedPowerWatts, time: time) }
        guard let last = lastTrainer, time >= last.time, time - last.time < 60, time.isFinite else { return }
        let events = Int(p.eventCount &- last.events)
        guard events > 0 else { return }
        let watts = Int(p.accumulatedPowerWatts &- last.accumulatedPower)
        let average = Double(watts) / Double(events)
        guard average <= 4094 else { return }
        powerEventCount += events
        powerSumWatts += watts
        intervalAveragePowerWatts = average
    }

    private mutating func addTorque(_ p: FECTrainerTorqueData, at time: Double) {
        state = p.state
        defer {
            lastTorque = TorqueBaseline(
                events: p.eventCount, period: p.accumulatedWheelPeriod2048ths,
                torque: p.accumulatedTorque32ndsNewtonMeter, time: time)
        }
        guard let last = lastTorque, time >= last.time, time - last.time < 60, time.isFinite else { return }
        let events = Double(p.eventCount &- last.events)
        let period = Double(p.accumulatedWheelPeriod2048ths &- last.period) / 2048
        let torque = Double(p.accumulatedTorque32ndsNewtonMeter &- last.torque) / 32
        guard events > 0, period > 0 else { return }
        let omega = 2 * Double.pi * events / period
        let newtonMeters = torque / events
        angularVelocityRadiansPerSecond = omega
        torqueNewtonMeters = newtonMeters
        torquePowerWatts = newtonMeters * omega
        wheelSpeedKmh = wheelCircumferenceMeters * events / period * 3.6
    }
}

/// Values an ``FECAccumulator`` derives across packets (JSON for `bluetide decode fec`).
public struct FECDerivedValues: Sendable, Equatable, Encodable, CustomStringConvertible {
    /// Session elapsed time, s.
    public var elapsedSeconds: Double
    /// Session distance, m.
    public var distanceMeters: Double
    /// Latest page 16 speed, km/h.
    public var speedKmh: Double?
    /// Session average power from page 25 accumulated power, W.
    public var averagePowerWatts: Double?
    /// Average power over the latest page 25 interval, W.
    public var intervalAveragePowerWatts: Double?
    /// Latest instantaneous power, W.
    public var instantaneousPowerWatts: Int?
    /// Latest cadence, rpm.
    public var cadenceRpm: Int?
    /// Latest page 26 torque, N·m.
    public var torqueNewtonMeters: Double?
    /// Latest page 26 power, W.
    public var torquePowerWatts: Double?
    /// Latest page 26 wheel speed, km/h.
    public var wheelSpeedKmh: Double?
    /// Latest FE state name.
    public var state: String?

    public var description: String {
        var parts = [
            "elapsed \(trainerFormat(elapsedSeconds, decimals: 2)) s", "distance \(trainerFormat(distanceMeters, decimals: 0)) m",
        ]
        if let speedKmh { parts.append("\(trainerFormat(speedKmh, decimals: 2)) km/h") }
        if let averagePowerWatts { parts.append("avg \(trainerFormat(averagePowerWatts, decimals: 1)) W") }
        if let torqueNewtonMeters { parts.append("torque \(trainerFormat(torqueNewtonMeters, decimals: 2)) N·m") }
        return parts.joined(separator: ", ")
    }
}
