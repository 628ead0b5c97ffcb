import BluetideBase

/// Speed, cadence and distance from Cycling Power Measurements (wheel time 1/2048 s, crank 1/1024 s).
public struct CyclingPowerCalculator: Sendable, Equatable {
    /// The shared wheel/crank logic (``CyclingMotionCalculator`` with 2048 wheel ticks per second).
    public var motion: CyclingMotionCalculator

    /// - Parameter wheelCircumferenceMetres: wheel circumference in metres (e.g. 2.105).
    public init(wheelCircumferenceMetres: Double = 2.105, staleTimeoutSeconds: Double = 3) {
        motion = CyclingMotionCalculator(
            wheelCircumferenceMetres: wheelCircumferenceMetres, wheelTicksPerSecond: 2048,
            staleTimeoutSeconds: staleTimeoutSeconds)
    }

    /// Feeds one measurement received at `wallTime` (seconds on the caller's monotonic clock).
    public mutating func update(_ measurement: CyclingPowerMeasurement, at wallTime: Double) -> CyclingMotion {
        motion.update(wheel: measurement.wheel, crank: measurement.crank, at: wallTime)
    }

    /// Distance covered so far, metres.
    public var distanceMetres: Double { motion.distanceMetres }
}
