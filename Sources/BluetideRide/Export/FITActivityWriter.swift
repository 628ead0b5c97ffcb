import Foundation

/// A part of a ride written as one FIT lap: from `start` to `end` (ride seconds), with the
/// workout step it rode when there was one.
public struct RideLap: Sendable, Hashable {
    /// Ride seconds at the start of the lap.
    public var start: Double
    /// Ride seconds at its end.
    public var end: Double
    /// The workout step's index (0-based), when the lap is one.
    public var workoutStep: Int?
    /// The step's kind (`warmup`, `interval on`, …), which gives the lap's intensity.
    public var kind: String?

    /// A lap with these parts.
    public init(start: Double, end: Double, workoutStep: Int? = nil, kind: String? = nil) {
        self.start = start
        self.end = end
        self.workoutStep = workoutStep
        self.kind = kind
    }

    /// The laps of `workout` started at ride time `start`, each step one lap, cut to the ride's
    /// `end`; the ride before the workout and after it are laps of their own when they hold time.
    public static func laps(of workout: Workout, startingAt start: Double, rideEnd end: Double) -> [RideLap] {
        var laps: [RideLap] = []
        if start > 0 { laps.append(RideLap(start: 0, end: min(start, end))) }
        var at = start
        for (index, step) in workout.steps.enumerated() where at < end {
            let stepEnd = min(at + step.durationSeconds, end)
            laps.append(RideLap(start: at, end: stepEnd, workoutStep: index, kind: step.kind))
            at = stepEnd
        }
        if at < end { laps.append(RideLap(start: at, end: end)) }
        return laps.filter { $0.end > $0.start }
    }
}

/// Writes a ride as a FIT activity file, the format Garmin Connect, Strava, TrainingPeaks and
/// intervals.icu read first: file id, a device info message for Bluetide and for each device
/// of the ride, a timer start event, one record per sample (time, power, cadence, speed, heart
/// rate, distance), a lap per ``RideLap`` (a workout's steps) with its summaries, the timer
/// stop, a session and the activity. A missing value is the field's invalid value (readers show
/// none), never zero. Sport cycling, sub-sport indoor cycling. No I/O.
public enum FITActivityWriter {
    /// FIT global message numbers used here (from the FIT profile).
    enum Message {
        static let fileID: UInt16 = 0
        static let session: UInt16 = 18
        static let lap: UInt16 = 19
        static let record: UInt16 = 20
        static let event: UInt16 = 21
        static let deviceInfo: UInt16 = 23
        static let activity: UInt16 = 34
        static let fileCreator: UInt16 = 49
    }

    /// Profile enumeration values used here.
    enum Value {
        static let fileActivity = 4
        static let manufacturerDevelopment = 255
        static let sportCycling = 2
        static let subSportIndoorCycling = 6
        static let eventTimer = 0, eventSession = 8, eventLap = 9, eventActivity = 26
        static let eventTypeStart = 0, eventTypeStop = 1, eventTypeStopAll = 4
        static let lapTriggerManual = 0, lapTriggerTime = 1, lapTriggerSessionEnd = 7
        static let sessionTriggerActivityEnd = 0
        static let activityManual = 0
        static let sourceTypeBLE = 3, sourceTypeLocal = 5
        static let intensityActive = 0, intensityRest = 1, intensityWarmup = 2, intensityCooldown = 3
    }

    /// The FIT `ble_device_type` of a ride role.
    static func bleDeviceType(_ role: RideDeviceRole) -> Int {
        switch role {
        case .heartRate: 1
        case .power: 2
        case .speedCadence: 3
        case .ftmsTrainer, .fecTrainer: 7
        }
    }

    /// The FIT lap intensity of a workout step's kind.
    static func intensity(_ kind: String?) -> Int {
        switch kind?.lowercased() {
        case "warmup": Value.intensityWarmup
        case "cooldown": Value.intensityCooldown
        case "interval off", "rest", "recovery": Value.intensityRest
        default: Value.intensityActive
        }
    }

    /// The FIT file for the tick `samples` of a ride that started at `start`, read from
    /// `devices`, cut into `laps` (one lap for the whole ride when empty).
    public static func file(samples: [RideSample], start: Date, devices: [RideDevice] = [], laps: [RideLap] = [], softwareVersion: String? = nil) -> [UInt8] {
        let points = samples.filter { $0.trigger == .tick }.sorted { $0.time < $1.time }
        let rideEnd = points.last?.time ?? 0
        let laps = laps.isEmpty ? [RideLap(start: 0, end: rideEnd)] : laps
        let base = FITEncoder.timestamp(start)
        func time(_ seconds: Double) -> Int64 { base + Int64(seconds.rounded(.down)) }
        let endTime = time(rideEnd)

        var fit = FITEncoder()
        fit.append(FITMessage(Message.fileID, [
            FITField(0, .enumeration, Value.fileActivity),
            FITField(1, .uint16, Value.manufacturerDevelopment),
            FITField(2, .uint16, 0),
            FITField(3, .uint32z, Int64(max(1, base))),
            FITField(4, .uint32, base),
            FITField(8, string: "Bluetide"),
        ]))
        let version = softwareVersion.flatMap(Self.versionNumber)
        fit.append(FITMessage(Message.fileCreator, [FITField(0, .uint16, version)]))
        // Device 0 is the recorder (Bluetide), then each device of the ride in order.
        fit.append(FITMessage(Message.deviceInfo, [
            FITField(253, .uint32, base), FITField(0, .uint8, 0), FITField(2, .uint16, Value.manufacturerDevelopment),
            FITField(4, .uint16, 0), FITField(5, .uint16, version), FITField(25, .enumeration, Value.sourceTypeLocal),
            FITField(27, string: "Bluetide"),
        ]))
        for (index, device) in devices.prefix(254).enumerated() {
            fit.append(FITMessage(Message.deviceInfo, [
                FITField(253, .uint32, base), FITField(0, .uint8, index + 1), FITField(1, .uint8, bleDeviceType(device.role)),
                FITField(2, .uint16, Value.manufacturerDevelopment), FITField(25, .enumeration, Value.sourceTypeBLE),
                FITField(27, string: device.label), FITField(19, string: device.address),
            ]))
        }
        fit.append(event(base, Value.eventTimer, Value.eventTypeStart))

        var lapMessages: [FITMessage] = []
        var session = Tally(startDistance: 0)
        var index = 0
        for (lapIndex, lap) in laps.enumerated() {
            // A lap's distance runs from where the one before it ended.
            var tally = Tally(startDistance: index > 0 ? points[index - 1].distanceMeters : 0)
            // A sample stands for the second before it: it belongs to the lap its time ends in.
            while index < points.count, points[index].time <= lap.end || lapIndex == laps.count - 1 {
                let point = points[index]
                fit.append(record(point, timestamp: time(point.time)))
                tally.add(point)
                session.add(point)
                index += 1
            }
            let lapStart = time(lap.start), lapEnd = time(lap.end)
            var fields = [
                FITField(253, .uint32, lapEnd), FITField(254, .uint16, lapIndex),
                FITField(0, .enumeration, Value.eventLap), FITField(1, .enumeration, Value.eventTypeStop),
                FITField(2, .uint32, lapStart),
            ]
            fields += tally.summaryFields(elapsed: Double(lapEnd - lapStart), numbers: .lap)
            fields += [
                FITField(23, .enumeration, intensity(lap.kind)),
                FITField(24, .enumeration, lapIndex == laps.count - 1 ? Value.lapTriggerSessionEnd : (lap.workoutStep != nil ? Value.lapTriggerTime : Value.lapTriggerManual)),
                FITField(25, .enumeration, Value.sportCycling), FITField(39, .enumeration, Value.subSportIndoorCycling),
                FITField(71, .uint16, lap.workoutStep),
            ]
            let message = FITMessage(Message.lap, fields)
            fit.append(message)
            lapMessages.append(message)
        }
        fit.append(event(endTime, Value.eventTimer, Value.eventTypeStopAll))
        let elapsed = Double(endTime - base)
        var sessionFields = [
            FITField(253, .uint32, endTime), FITField(254, .uint16, 0),
            FITField(0, .enumeration, Value.eventSession), FITField(1, .enumeration, Value.eventTypeStop),
            FITField(2, .uint32, base), FITField(5, .enumeration, Value.sportCycling), FITField(6, .enumeration, Value.subSportIndoorCycling),
        ]
        sessionFields += session.summaryFields(elapsed: elapsed, numbers: .session)
        sessionFields += [
            FITField(25, .uint16, 0), FITField(26, .uint16, lapMessages.count),
            FITField(28, .enumeration, Value.sessionTriggerActivityEnd),
        ]
        fit.append(FITMessage(Message.session, sessionFields))
        fit.append(FITMessage(Message.activity, [
            FITField(253, .uint32, endTime), FITField(0, .uint32, Int64((elapsed * 1000).rounded())), FITField(1, .uint16, 1),
            FITField(2, .enumeration, Value.activityManual), FITField(3, .enumeration, Value.eventActivity),
            FITField(4, .enumeration, Value.eventTypeStop), FITField(5, .uint32, endTime),
        ]))
        return fit.file()
    }

    /// `0.4.1` → 4 (hundredths: major × 100 + minor), as FIT software versions are written.
    static func versionNumber(_ text: String) -> Int? {
        let parts = text.split(separator: ".").prefix(2).map { Int($0.prefix { $0.isNumber }) }
        guard let major = parts.first ?? nil else { return nil }
        return major * 100 + min(99, (parts.count > 1 ? parts[1] : 0) ?? 0)
    }

    static func event(_ timestamp: Int64, _ event: Int, _ type: Int) -> FITMessage {
        FITMessage(Message.event, [
            FITField(253, .uint32, timestamp), FITField(0, .enumeration, event), FITField(1, .enumeration, type),
            FITField(4, .uint8, 0),
        ])
    }

    /// A record message: timestamp, heart rate, cadence, distance (cm), speed (mm/s), power.
    static func record(_ sample: RideSample, timestamp: Int64) -> FITMessage {
        FITMessage(Message.record, [
            FITField(253, .uint32, timestamp),
            FITField(3, .uint8, sample.heartRateBpm.flatMap { $0 > 0 ? $0 : nil }),
            FITField(4, .uint8, sample.cadenceRpm.map { Int($0.rounded()) }),
            FITField(5, .uint32, Int64((sample.distanceMeters * 100).rounded())),
            FITField(6, .uint16, sample.speedKmh.map { Int(($0 / 3.6 * 1000).rounded()) }),
            FITField(7, .uint16, sample.powerWatts.map { max(0, $0) }),
        ])
    }

    /// Where the summary fields sit in a lap and in a session (the profile numbers them apart).
    struct SummaryNumbers {
        var elapsed: UInt8, timer: UInt8, distance: UInt8, calories: UInt8, avgSpeed: UInt8, maxSpeed: UInt8
        var avgHeartRate: UInt8, maxHeartRate: UInt8, avgCadence: UInt8, maxCadence: UInt8, avgPower: UInt8, maxPower: UInt8
        var totalWork: UInt8

        static let lap = SummaryNumbers(
            elapsed: 7, timer: 8, distance: 9, calories: 11, avgSpeed: 13, maxSpeed: 14, avgHeartRate: 15, maxHeartRate: 16,
            avgCadence: 17, maxCadence: 18, avgPower: 19, maxPower: 20, totalWork: 41)
        static let session = SummaryNumbers(
            elapsed: 7, timer: 8, distance: 9, calories: 11, avgSpeed: 14, maxSpeed: 15, avgHeartRate: 16, maxHeartRate: 17,
            avgCadence: 18, maxCadence: 19, avgPower: 20, maxPower: 21, totalWork: 48)
    }

    /// The values of a lap or a session, summed over its records as FIT readers sum them: the
    /// averages of the values present (a gap counts for nothing), maxima, the distance ridden in
    /// it and the work done (power × the seconds it stands for, at most 3 s a sample).
    struct Tally {
        /// Distance when the lap or session started, metres.
        var startDistance: Double
        var lastDistance: Double?
        var lastTime: Double?
        var joules = 0.0
        var speeds: [Double] = [], cadences: [Double] = [], powers: [Int] = [], heartRates: [Int] = []

        mutating func add(_ sample: RideSample) {
            lastDistance = sample.distanceMeters
            let seconds = min(max(sample.time - (lastTime ?? (sample.time - 1)), 0), 3)
            lastTime = sample.time
            if let watts = sample.powerWatts {
                powers.append(max(0, watts))
                joules += Double(max(0, watts)) * seconds
            }
            if let kmh = sample.speedKmh { speeds.append(kmh / 3.6) }
            if let rpm = sample.cadenceRpm, rpm.isFinite { cadences.append(rpm) }
            if let bpm = sample.heartRateBpm, bpm > 0 { heartRates.append(bpm) }
        }

        static func mean(_ values: [Int]) -> Int? {
            values.isEmpty ? nil : Int((Double(values.reduce(0, +)) / Double(values.count)).rounded())
        }

        func summaryFields(elapsed: Double, numbers n: SummaryNumbers) -> [FITField] {
            let millis = Int64((max(0, elapsed) * 1000).rounded())
            let distance = (lastDistance ?? startDistance) - startDistance
            let averageSpeed = speeds.isEmpty ? nil : speeds.reduce(0, +) / Double(speeds.count)
            return [
                FITField(n.elapsed, .uint32, millis), FITField(n.timer, .uint32, millis),
                FITField(n.distance, .uint32, Int64((max(0, distance) * 100).rounded())),
                FITField(n.calories, .uint16, Int((joules / 1000).rounded())),
                FITField(n.avgSpeed, .uint16, averageSpeed.map { Int(($0 * 1000).rounded()) }),
                FITField(n.maxSpeed, .uint16, speeds.max().map { Int(($0 * 1000).rounded()) }),
                FITField(n.avgHeartRate, .uint8, Self.mean(heartRates)), FITField(n.maxHeartRate, .uint8, heartRates.max()),
                FITField(n.avgCadence, .uint8, cadences.isEmpty ? nil : Int((cadences.reduce(0, +) / Double(cadences.count)).rounded())),
                FITField(n.maxCadence, .uint8, cadences.max().map { Int($0.rounded()) }),
                FITField(n.avgPower, .uint16, Self.mean(powers)), FITField(n.maxPower, .uint16, powers.max()),
                FITField(n.totalWork, .uint32, Int64(joules.rounded())),
            ]
        }
    }
}
