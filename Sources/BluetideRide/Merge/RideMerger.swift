/// Merges the values of a ride's devices into ``RideSample``s: a state machine without I/O
/// (events and their times in, samples out), so a live ride and its replay give the same samples.
///
/// Each metric comes from the most specific device that has a fresh value: a power meter before
/// the trainer for power, a speed/cadence sensor before a power meter before the trainer for
/// speed and cadence, a strap before the trainer for heart rate. A value is fresh for
/// ``Configuration/staleAfterSeconds`` after it arrived and while its device is connected; after
/// that the metric is missing (nil), never zero. Distance integrates the chosen speed over time,
/// so a gap adds nothing and a switch of source causes no jump.
public struct RideMerger: Sendable {
    /// How values are judged.
    public struct Configuration: Sendable, Hashable {
        /// Wheel circumference, metres (CSC and power-meter speed).
        public var wheelCircumferenceMeters: Double
        /// Seconds after which a device's last value no longer counts.
        public var staleAfterSeconds: Double

        /// A configuration; 2.105 m is a 700x25c wheel.
        public init(wheelCircumferenceMeters: Double = 2.105, staleAfterSeconds: Double = 3) {
            self.wheelCircumferenceMeters = wheelCircumferenceMeters
            self.staleAfterSeconds = staleAfterSeconds
        }
    }

    private struct Held: Sendable {
        var value: Double
        var time: Double
    }

    private struct DeviceState: Sendable {
        var device: RideDevice
        var decoder: DeviceDecoder
        var connected = true
        var values: [RideMetric: Held] = [:]
    }

    /// The configuration in use.
    public let configuration: Configuration
    private var devices: [String: DeviceState] = [:]
    private var order: [String] = []
    private var distance = 0.0
    private var lastSpeed: (kmh: Double, time: Double, freshUntil: Double)?
    /// The trainer's target as last recorded (``RideEvent/target(_:time:)``), carried by samples.
    public private(set) var target: RideTarget?
    /// Values that did not decode (skipped).
    public private(set) var undecodableValues = 0

    /// A merger with `configuration`.
    public init(configuration: Configuration = Configuration()) { self.configuration = configuration }

    /// Which roles may give `metric`, most specific first.
    public static func preference(for metric: RideMetric) -> [RideDeviceRole] {
        switch metric {
        case .power: [.power, .fecTrainer, .ftmsTrainer]
        case .speed: [.speedCadence, .fecTrainer, .ftmsTrainer, .power]
        case .cadence: [.speedCadence, .power, .fecTrainer, .ftmsTrainer]
        case .heartRate: [.heartRate, .fecTrainer, .ftmsTrainer]
        }
    }

    private static func key(_ device: RideDevice) -> String { "\(device.role.rawValue)|\(device.address)" }

    private mutating func state(for device: RideDevice) -> String {
        let key = Self.key(device)
        if devices[key] == nil {
            devices[key] = DeviceState(
                device: device,
                decoder: DeviceDecoder(role: device.role, wheelCircumferenceMeters: configuration.wheelCircumferenceMeters))
            order.append(key)
        }
        return key
    }

    /// Takes one event and returns the sample it makes: every reading and tick makes one, a link
    /// change makes one (the departed device's values disappear at once); a reading that does not
    /// decode makes none, nor does a target (the samples after it carry it).
    public mutating func receive(_ event: RideEvent) -> RideSample? {
        switch event {
        case let .reading(reading):
            let key = state(for: reading.device)
            let metrics: DeviceMetrics
            do {
                metrics = try devices[key]!.decoder.decode(reading.bytes, characteristic: reading.characteristic, at: reading.time)
            } catch {
                undecodableValues += 1
                return nil
            }
            devices[key]!.connected = true
            for metric in RideMetric.allCases {
                if let value = metrics[metric], value.isFinite { devices[key]!.values[metric] = Held(value: value, time: reading.time) }
            }
            return sample(at: reading.time, trigger: .update)
        case let .link(device, connected, time):
            let key = state(for: device)
            devices[key]!.connected = connected
            if !connected { devices[key]!.values = [:] }
            return sample(at: time, trigger: .update)
        case let .tick(time):
            return sample(at: time, trigger: .tick)
        case let .target(target, _):
            self.target = target
            return nil
        }
    }

    /// The fresh value of `metric` and the device it came from, at `time`.
    public func current(_ metric: RideMetric, at time: Double) -> (value: Double, device: RideDevice, receivedAt: Double)? {
        for role in Self.preference(for: metric) {
            for key in order {
                guard let state = devices[key], state.device.role == role, state.connected,
                      let held = state.values[metric], time - held.time <= configuration.staleAfterSeconds else { continue }
                return (held.value, state.device, held.time)
            }
        }
        return nil
    }

    /// The sample at `time` (advancing the distance to it).
    public mutating func sample(at time: Double, trigger: RideSampleTrigger) -> RideSample {
        let speed = current(.speed, at: time)
        if let last = lastSpeed, time > last.time {
            // The speed held since the last sample, for as long as it stayed fresh.
            distance += last.kmh / 3.6 * max(0, min(time, last.freshUntil) - last.time)
        }
        if let speed {
            lastSpeed = (speed.value, time, speed.receivedAt + configuration.staleAfterSeconds)
        } else {
            lastSpeed = nil
        }
        var sample = RideSample(time: time, trigger: trigger, distanceMeters: distance)
        var sources: [RideMetric: String] = [:]
        if let speed {
            sample.speedKmh = speed.value
            sources[.speed] = speed.device.label
        }
        if let cadence = current(.cadence, at: time) {
            sample.cadenceRpm = cadence.value
            sources[.cadence] = cadence.device.label
        }
        if let power = current(.power, at: time) {
            sample.powerWatts = Int(power.value.rounded())
            sources[.power] = power.device.label
        }
        if let heartRate = current(.heartRate, at: time) {
            sample.heartRateBpm = Int(heartRate.value.rounded())
            sources[.heartRate] = heartRate.device.label
        }
        sample.sources = sources
        sample.target = target
        return sample
    }
}
