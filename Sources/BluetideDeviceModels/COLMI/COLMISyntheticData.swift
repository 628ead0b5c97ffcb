import BluetideProfiles

/// Deterministic synthetic health data for an emulated ring: every value is a pure function of
/// the seed, the day (days since 1970 on the ring's clock) and the time of day, so the same
/// history comes back on every request and the different commands agree with each other
/// (steps in the sport detail add up to the live totals, the HR log follows the same daily
/// curve as the real-time readings).
public struct COLMISyntheticData: Hashable, Sendable {
    /// Seed of the person's data.
    public let seed: UInt64

    /// Builds the model: `seed` fixes its randomness, `options` its rider and device settings.
    public init(seed: UInt64) { self.seed = seed }

    private func noise(_ values: Int...) -> Double {
        var g = SeededGenerator(seed: seed)
        for v in values { g = SeededGenerator(seed: g.next() ^ UInt64(bitPattern: Int64(v))) }
        return g.unit()
    }

    /// Whether the person sleeps at `minute` of `day` (about 23:00 to 06:30).
    public func isAsleep(day: Int, minute: Int) -> Bool {
        let sleep = sleepWindow(day: day)
        let next = sleepWindow(day: day + 1)
        return minute < sleep.wakeMinute || minute >= next.bedMinute
    }

    /// The night ending on `day`: bedtime (minute of the previous day) and wake-up (minute of `day`).
    public func sleepWindow(day: Int) -> (bedMinute: Int, wakeMinute: Int) {
        (bedMinute: 22 * 60 + 30 + Int(noise(day, 1) * 60), wakeMinute: 6 * 60 + Int(noise(day, 2) * 60))
    }

    /// Whether `minute` of `day` falls in the day's workout (an hour from 17:00 or 18:00).
    public func isWorkout(day: Int, minute: Int) -> Bool {
        let start = noise(day, 3) < 0.5 ? 17 * 60 : 18 * 60
        return minute >= start && minute < start + 60
    }

    /// Heart rate at `minute` of `day`, bpm.
    public func heartRate(day: Int, minute: Int) -> UInt8 {
        let jitter = noise(day, minute, 4) * 8 - 4
        let base: Double
        if isAsleep(day: day, minute: minute) {
            base = 54
        } else if isWorkout(day: day, minute: minute) {
            base = 128 + noise(day, 5) * 20
        } else {
            base = 72 + noise(day, minute / 60, 6) * 14
        }
        return UInt8(clamping: Int((base + jitter).rounded()))
    }

    /// Steps in quarter-hour `quarter` (0...95) of `day`.
    public func steps(day: Int, quarter: Int) -> UInt16 {
        let minute = quarter * 15
        if isAsleep(day: day, minute: minute) { return 0 }
        if isWorkout(day: day, minute: minute) { return UInt16(1400 + Int(noise(day, quarter, 7) * 400)) }
        let r = noise(day, quarter, 8)
        return r < 0.3 ? 0 : UInt16(40 + Int((r - 0.3) * 900))
    }

    /// Raw calories of a quarter (×10 under the new calorie protocol: 50 small calories a step).
    public static func caloriesRaw(steps: UInt16) -> UInt16 { UInt16(clamping: Int(steps) * 5) }
    /// Distance of a quarter, metres (0.72 m a step).
    public static func distanceMeters(steps: UInt16) -> UInt16 { UInt16(clamping: Int((Double(steps) * 0.72).rounded())) }

    /// SpO2 minimum and maximum in `hour` of `day`, percent.
    public func spo2(day: Int, hour: Int) -> (min: UInt8, max: UInt8) {
        let low = 94 + Int(noise(day, hour, 9) * 3)
        return (UInt8(low), UInt8(low + 1 + Int(noise(day, hour, 10) * 3)))
    }

    /// Stress index in half-hour `slot` (0...47) of `day`.
    public func stress(day: Int, slot: Int) -> UInt8 {
        let asleep = isAsleep(day: day, minute: slot * 30)
        return UInt8((asleep ? 10 : 25) + Int(noise(day, slot, 11) * (asleep ? 10 : 40)))
    }

    /// HRV in half-hour `slot` (0...47) of `day`, ms.
    public func hrv(day: Int, slot: Int) -> UInt8 {
        let asleep = isAsleep(day: day, minute: slot * 30)
        return UInt8((asleep ? 55 : 32) + Int(noise(day, slot, 12) * 20))
    }

    /// Skin temperature in half-hour `slot` of `day`, °C.
    public func temperature(day: Int, slot: Int) -> Double {
        (isAsleep(day: day, minute: slot * 30) ? 35.0 : 33.6) + noise(day, slot, 13) * 0.8
    }

    /// The night ending on `day` as sleep stages laid end to end from bedtime to wake-up.
    public func sleep(day: Int, daysAgo: UInt8) -> COLMISleepDay {
        let window = sleepWindow(day: day)
        var left = 24 * 60 - window.bedMinute + window.wakeMinute
        var periods: [COLMISleepPeriod] = []
        var i = 0
        let cycle: [COLMISleepStage] = [.light, .deep, .light, .rem]
        while left > 0 {
            let stage: COLMISleepStage = i > 0 && noise(day, i, 14) < 0.08 ? .awake : cycle[i % cycle.count]
            let length = min(left, 10 + Int(noise(day, i, 15) * 40))
            periods.append(COLMISleepPeriod(stage: stage, minutes: UInt8(length)))
            left -= length
            i += 1
        }
        return COLMISleepDay(
            daysAgo: daysAgo, startMinute: UInt16(window.bedMinute), endMinute: UInt16(window.wakeMinute), periods: periods)
    }
}
