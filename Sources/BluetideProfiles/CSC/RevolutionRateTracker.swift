/// Turns successive (revolution count, last event time) pairs into a revolution rate, following
/// the rules that keep real sensors honest (fitness spec §1.3). Used for CSC and Cycling Power
/// wheels and cranks alike; the counter width and the event-time tick differ per source.
///
/// Wall-clock time (seconds on the caller's monotonic clock) is passed in with every sample; the
/// tracker never reads a clock. Counts and times wrap: differences are taken modulo 2^bits and
/// modulo 2^16.
public struct RevolutionRateTracker: Sendable, Equatable {
    /// How a source counts and how patient the tracker is.
    public struct Configuration: Sendable, Equatable {
        /// Width of the revolution counter: 32 for wheels, 16 for cranks.
        public var counterBits: Int
        /// Event-time ticks per second: 1024 (CSC, cranks) or 2048 (Cycling Power wheel).
        public var ticksPerSecond: Double
        /// Rates above this (revolutions per second) are implausible: dropped and re-baselined.
        public var maximumRevolutionsPerSecond: Double
        /// A repeated packet holds the last rate for at least this many seconds, then reports 0.
        public var staleTimeoutSeconds: Double
        /// ... or for this many last revolution intervals, when that is longer (slow pedalling).
        public var staleIntervalFactor: Double
        /// More wall-clock time than this since the baseline means the 16-bit event time may
        /// have wrapped more than once: re-baseline without computing.
        public var longGapSeconds: Double

        public init(
            counterBits: Int, ticksPerSecond: Double, maximumRevolutionsPerSecond: Double,
            staleTimeoutSeconds: Double = 3, staleIntervalFactor: Double = 2.5, longGapSeconds: Double = 60
        ) {
            self.counterBits = counterBits
            self.ticksPerSecond = ticksPerSecond
            self.maximumRevolutionsPerSecond = maximumRevolutionsPerSecond
            self.staleTimeoutSeconds = staleTimeoutSeconds
            self.staleIntervalFactor = staleIntervalFactor
            self.longGapSeconds = longGapSeconds
        }

        /// Mask for counter differences (2^bits − 1).
        var counterMask: UInt64 {
            let bits = max(1, min(counterBits, 64))
            return bits == 64 ? .max : (UInt64(1) << UInt64(bits)) - 1
        }
    }

    /// What the tracker did with a sample.
    public enum Status: String, Sendable, Equatable, Encodable {
        /// First sample (or first after a long gap): stored as the baseline, nothing computed.
        case baseline
        /// A new event: a new rate was computed and the baseline moved.
        case measured
        /// Repeated packet (no new revolution, same time): last rate held, baseline kept.
        case heldStale
        /// Repeated packet after the staleness timeout: rate 0, baseline kept.
        case stoppedStale
        /// Time moved but the count did not: rate 0, time re-baselined.
        case noRevolutions
        /// Count moved but the time did not: inconsistent, skipped and re-baselined.
        case skippedInconsistent
        /// Too long since the baseline (event time may have wrapped twice): re-baselined.
        case rebaselinedAfterGap
        /// Implied rate above the plausible maximum (reset, backwards counter): dropped, re-baselined.
        case droppedImplausible
    }

    /// The tracker's answer for one sample.
    public struct Update: Sendable, Equatable, Encodable {
        /// What happened.
        public var status: Status
        /// Current rate in revolutions per second: new, held or 0; nil while none is known.
        public var revolutionsPerSecond: Double?
        /// Revolutions this sample adds to a distance total (only for ``Status/measured``).
        public var revolutionsCounted: UInt64
    }

    private struct Sample: Sendable, Equatable {
        var count: UInt64
        var ticks: UInt16
        var wallTime: Double
    }

    /// Source description and limits; may be changed between samples (e.g. a new circumference).
    public var configuration: Configuration
    private var baseline: Sample?
    private var lastRate: Double?
    private var lastRevolutionInterval: Double?

    public init(configuration: Configuration) { self.configuration = configuration }

    /// The rate currently reported (new, held or 0), as of the last sample.
    public private(set) var currentRevolutionsPerSecond: Double?

    /// Feeds one sample: cumulative `count`, last event time in ticks, and the local wall-clock
    /// time (seconds) at which the packet arrived.
    public mutating func update(count: UInt64, eventTime: UInt16, at wallTime: Double) -> Update {
        let mask = configuration.counterMask
        let sample = Sample(count: count & mask, ticks: eventTime, wallTime: wallTime)
        let update = process(sample, mask: mask)
        currentRevolutionsPerSecond = update.revolutionsPerSecond
        return update
    }

    /// Forgets everything (e.g. after a reconnection or a Set Cumulative Value).
    public mutating func reset() {
        baseline = nil
        lastRate = nil
        lastRevolutionInterval = nil
        currentRevolutionsPerSecond = nil
    }

    private mutating func process(_ sample: Sample, mask: UInt64) -> Update {
        // Rule 1: the first sample is only a baseline.
        guard let previous = baseline else {
            baseline = sample
            return Update(status: .baseline, revolutionsPerSecond: nil, revolutionsCounted: 0)
        }
        let dRev = (sample.count &- previous.count) & mask
        let dTick = sample.ticks &- previous.ticks
        let elapsed = sample.wallTime - previous.wallTime

        // Rule 2: a repeated packet. Keep the baseline; hold, then 0 after the timeout.
        if dRev == 0 && dTick == 0 {
            var timeout = configuration.staleTimeoutSeconds
            if let interval = lastRevolutionInterval {
                timeout = max(timeout, configuration.staleIntervalFactor * interval)
            }
            timeout = min(timeout, configuration.longGapSeconds)
            if elapsed > timeout {
                return Update(status: .stoppedStale, revolutionsPerSecond: 0, revolutionsCounted: 0)
            }
            return Update(status: .heldStale, revolutionsPerSecond: lastRate, revolutionsCounted: 0)
        }

        // Rule 5: after a long gap the 16-bit time may have wrapped more than once.
        if elapsed > configuration.longGapSeconds {
            baseline = sample
            lastRate = nil
            lastRevolutionInterval = nil
            return Update(status: .rebaselinedAfterGap, revolutionsPerSecond: nil, revolutionsCounted: 0)
        }

        // Rule 3: revolutions without time: inconsistent.
        if dTick == 0 {
            baseline = sample
            return Update(status: .skippedInconsistent, revolutionsPerSecond: lastRate, revolutionsCounted: 0)
        }

        // Rule 4: time without revolutions (some emulators): rate 0, re-baseline the time.
        if dRev == 0 {
            baseline = sample
            lastRate = 0
            return Update(status: .noRevolutions, revolutionsPerSecond: 0, revolutionsCounted: 0)
        }

        let seconds = Double(dTick) / configuration.ticksPerSecond
        let rate = Double(dRev) / seconds
        // Rule 6: an implausible jump (sensor reset, counter going backwards).
        guard rate <= configuration.maximumRevolutionsPerSecond else {
            baseline = sample
            return Update(status: .droppedImplausible, revolutionsPerSecond: lastRate, revolutionsCounted: 0)
        }
        baseline = sample
        lastRate = rate
        lastRevolutionInterval = seconds / Double(dRev)
        return Update(status: .measured, revolutionsPerSecond: rate, revolutionsCounted: dRev)
    }
}

/// Speed, cadence and distance derived from successive wheel and crank data.
public struct CyclingMotion: Equatable, Sendable, Encodable {
    /// Speed in metres per second; nil when this packet had no wheel data or no rate is known yet.
    public var speedMetresPerSecond: Double?
    /// Speed in kilometres per hour (metres per second × 3.6).
    public var speedKilometresPerHour: Double?
    /// Cadence in crank revolutions per minute; nil when unknown or absent from this packet.
    public var cadenceRPM: Double?
    /// Distance covered since the calculator started, metres.
    public var distanceMetres: Double
    /// What the wheel tracker did with this packet (nil when it had no wheel data).
    public var wheelStatus: RevolutionRateTracker.Status?
    /// What the crank tracker did with this packet (nil when it had no crank data).
    public var crankStatus: RevolutionRateTracker.Status?

    /// One line, e.g. `13.73 km/h, 90 rpm, 4.21 m`; absent values are left out.
    public var summary: String {
        var parts: [String] = []
        if let speedKilometresPerHour { parts.append(FitnessFormat.fixed(speedKilometresPerHour, 2) + " km/h") }
        if let cadenceRPM { parts.append(FitnessFormat.fixed(cadenceRPM, 0) + " rpm") }
        parts.append(FitnessFormat.fixed(distanceMetres, 2) + " m")
        return parts.joined(separator: ", ")
    }
}

/// Derives speed (from wheel data and a circumference), cadence (from crank data) and distance
/// from successive measurements. Shared by ``CSCCalculator`` (wheel time 1/1024 s) and
/// ``CyclingPowerCalculator`` (wheel time 1/2048 s).
public struct CyclingMotionCalculator: Sendable, Equatable {
    /// Wheel circumference in metres (CSC and CP carry none; 2.096 m for 700x23c, 2.105 m for 700x25c).
    public var wheelCircumferenceMetres: Double
    /// Speeds above this are implausible (km/h).
    public var maximumSpeedKilometresPerHour: Double
    /// Wheel revolution tracker (32-bit count).
    public private(set) var wheel: RevolutionRateTracker
    /// Crank revolution tracker (16-bit count, 1/1024 s).
    public private(set) var crank: RevolutionRateTracker
    /// Distance covered since start or ``resetDistance()``, metres.
    public private(set) var distanceMetres: Double = 0

    /// - Parameters:
    ///   - wheelCircumferenceMetres: wheel circumference, metres (positive).
    ///   - wheelTicksPerSecond: 1024 for CSC, 2048 for Cycling Power.
    ///   - maximumSpeedKilometresPerHour / maximumCadenceRPM: plausibility limits (120 km/h, 250 rpm).
    ///   - staleTimeoutSeconds: how long a repeated packet holds the last rate before 0.
    ///   - longGapSeconds: wall-clock gap after which the next sample only re-baselines.
    public init(
        wheelCircumferenceMetres: Double = 2.105, wheelTicksPerSecond: Double = 1024,
        maximumSpeedKilometresPerHour: Double = 120, maximumCadenceRPM: Double = 250,
        staleTimeoutSeconds: Double = 3, longGapSeconds: Double = 60
    ) {
        self.wheelCircumferenceMetres = wheelCircumferenceMetres
        self.maximumSpeedKilometresPerHour = maximumSpeedKilometresPerHour
        wheel = RevolutionRateTracker(configuration: .init(
            counterBits: 32, ticksPerSecond: wheelTicksPerSecond,
            maximumRevolutionsPerSecond: maximumSpeedKilometresPerHour / 3.6 / wheelCircumferenceMetres,
            staleTimeoutSeconds: staleTimeoutSeconds, longGapSeconds: longGapSeconds))
        crank = RevolutionRateTracker(configuration: .init(
            counterBits: 16, ticksPerSecond: 1024, maximumRevolutionsPerSecond: maximumCadenceRPM / 60,
            staleTimeoutSeconds: staleTimeoutSeconds, longGapSeconds: longGapSeconds))
    }

    /// Feeds one packet's wheel and crank data, received at `wallTime` (seconds, monotonic).
    public mutating func update(
        wheel wheelData: WheelRevolutionData?, crank crankData: CrankRevolutionData?, at wallTime: Double
    ) -> CyclingMotion {
        var motion = CyclingMotion(distanceMetres: distanceMetres)
        if let wheelData {
            // The limit follows the circumference, which the user may change between packets.
            wheel.configuration.maximumRevolutionsPerSecond =
                maximumSpeedKilometresPerHour / 3.6 / wheelCircumferenceMetres
            let update = wheel.update(
                count: UInt64(wheelData.cumulativeRevolutions), eventTime: wheelData.lastEventTimeTicks, at: wallTime)
            distanceMetres += Double(update.revolutionsCounted) * wheelCircumferenceMetres
            motion.distanceMetres = distanceMetres
            motion.wheelStatus = update.status
            if let rate = update.revolutionsPerSecond {
                motion.speedMetresPerSecond = rate * wheelCircumferenceMetres
                motion.speedKilometresPerHour = rate * wheelCircumferenceMetres * 3.6
            }
        }
        if let crankData {
            let update = crank.update(
                count: UInt64(crankData.cumulativeRevolutions), eventTime: crankData.lastEventTimeTicks, at: wallTime)
            motion.crankStatus = update.status
            motion.cadenceRPM = update.revolutionsPerSecond.map { $0 * 60 }
        }
        return motion
    }

    /// Sets the distance back to 0 (rates and baselines are kept).
    public mutating func resetDistance() { distanceMetres = 0 }
}

/// Speed, cadence and distance from CSC Measurements (wheel and crank time in 1/1024 s).
public struct CSCCalculator: Sendable, Equatable {
    /// The shared wheel/crank logic.
    public var motion: CyclingMotionCalculator

    /// - Parameter wheelCircumferenceMetres: wheel circumference in metres (e.g. 2.105).
    public init(wheelCircumferenceMetres: Double = 2.105, staleTimeoutSeconds: Double = 3) {
        motion = CyclingMotionCalculator(
            wheelCircumferenceMetres: wheelCircumferenceMetres, wheelTicksPerSecond: 1024,
            staleTimeoutSeconds: staleTimeoutSeconds)
    }

    /// Feeds one measurement received at `wallTime` (seconds on the caller's monotonic clock).
    public mutating func update(_ measurement: CSCMeasurement, at wallTime: Double) -> CyclingMotion {
        motion.update(wheel: measurement.wheel, crank: measurement.crank, at: wallTime)
    }

    /// Distance covered so far, metres.
    public var distanceMetres: Double { motion.distanceMetres }
}
