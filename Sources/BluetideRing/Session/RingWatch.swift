import Bluetide

/// A live watch of a ring, as `bluetide ring watch` runs it: the battery once, then a
/// measurement (a real-time heart-rate or SpO2 measurement, or the continuous heart-rate
/// stream) kept going for as long as the watch lasts, with every reading, battery change and
/// (when asked) step push reported as it comes.
///
/// The ring ends a measurement about a minute after it was started or last continued, so the
/// watch continues it every ``continueEvery`` readings (``continueStreamEvery`` for the stream,
/// as Gadgetbridge does). The watch does not close the ring: ``Ring/close()`` stops what it
/// started, so a measurement is never left running to drain the battery.
public struct RingWatch: Sendable {
    /// What the ring measures during the watch.
    public enum Measurement: Sendable, Hashable {
        /// Nothing (no LED): only what the ring pushes by itself (battery, step pushes).
        case none
        /// A real-time measurement (`69`): heart rate or SpO2, about one reading a second.
        case realTime(COLMIRealTimeType)
        /// The continuous heart-rate stream (`1E`), about one value a second.
        case continuousHeartRate
    }

    /// Why a watch ended.
    public enum Ending: Sendable, Hashable {
        /// `stopWhen` returned, with its reason (a signal's name, "end of --duration").
        case stopped(reason: String)
        /// The ring's events ended: the link was lost.
        case linkLost
    }

    /// Readings of a real-time measurement between two continues.
    public static let continueEvery = 25
    /// Readings of the continuous heart-rate stream between two continues.
    public static let continueStreamEvery = 30

    /// What the ring measures.
    public var measurement: Measurement
    /// Whether today's step pushes (`73 12`) are reported.
    public var includesActivity: Bool

    /// A watch of `measurement`, with step pushes when `includesActivity`.
    public init(measurement: Measurement, includesActivity: Bool = false) {
        self.measurement = measurement
        self.includesActivity = includesActivity
    }

    /// Reports the battery (when the ring answers), starts the measurement, then reports each
    /// event as it comes and keeps the measurement going until `stopWhen` returns or the ring's
    /// events end. `stopWhen` must return when its task is cancelled.
    /// - Throws: ``RingWatchError`` when the measurement could not be started.
    public func run(
        _ ring: Ring, stopWhen: @escaping @Sendable () async -> String, report: @escaping @Sendable (RingEvent) -> Void
    ) async throws(RingWatchError) -> Ending {
        if let battery = try? await ring.battery() { report(.battery(battery)) }
        do {
            switch measurement {
            case .none: break
            case let .realTime(type): try await ring.startMeasurement(type)
            case .continuousHeartRate: try await ring.startContinuousHeartRate()
            }
        } catch {
            throw RingWatchError(measurement: measurement, cause: error)
        }
        let measurement = measurement, includesActivity = includesActivity
        // Whichever ends first; both waits end when cancelled (AsyncStream iteration).
        return await withTaskGroup(of: Ending?.self) { group in
            group.addTask {
                let reason = await stopWhen()
                return Task.isCancelled ? nil : .stopped(reason: reason)
            }
            group.addTask {
                var sinceContinue = 0
                for await event in ring.events {
                    if case .activity = event, !includesActivity { continue }
                    report(event)
                    switch (event, measurement) {
                    case let (.reading, .realTime(type)):
                        sinceContinue += 1
                        if sinceContinue >= Self.continueEvery {
                            sinceContinue = 0
                            try? await ring.continueMeasurement(type)
                        }
                    case (.continuousHeartRate, .continuousHeartRate):
                        sinceContinue += 1
                        if sinceContinue >= Self.continueStreamEvery {
                            sinceContinue = 0
                            try? await ring.continueContinuousHeartRate()
                        }
                    default: break
                    }
                }
                return Task.isCancelled ? nil : .linkLost
            }
            var first: Ending?
            while first == nil, let next = await group.next() { first = next }
            group.cancelAll()
            return first ?? .stopped(reason: "stopped")
        }
    }
}

/// A ring watch's measurement did not start (the ring did not answer, or the link is gone).
public struct RingWatchError: Error, CustomStringConvertible {
    /// The measurement that was asked for.
    public var measurement: RingWatch.Measurement
    /// Why it did not start.
    public var cause: any Error

    public var description: String { "\(cause)" }
}
