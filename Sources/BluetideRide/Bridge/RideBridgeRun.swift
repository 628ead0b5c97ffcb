import BluetideSupport

/// A bridge from its start to its end, as one library call: what `bluetide ride bridge` does
/// between opening its devices and closing them, without a terminal, signals or sockets.
///
/// ``run(_:bridge:network:stopWhen:report:)`` starts the session, starts serving the
/// ``RideBridge``, then hands every sample to the bridge (and to the network bridge, DIRCON, when
/// given) and reports samples, notices and what the apps did, until ``duration`` passes (on
/// ``clock``), `stopWhen` returns or the samples end. It stops neither the session nor the
/// bridges: the caller owns them.
public struct RideBridgeRun: Sendable {
    /// How long to bridge, counted from when the bridge serves; nil: until a stop or the end of
    /// the samples.
    public var duration: Duration?
    /// The clock ``duration`` is counted on (a test's manual clock runs it in virtual time).
    public var clock: BluetideClock

    /// A run of `duration` on `clock`.
    public init(duration: Duration? = nil, clock: BluetideClock = .continuous) {
        self.duration = duration
        self.clock = clock
    }

    /// What happens while bridging (kinds interleave: they come from their own tasks).
    public enum Event: Sendable {
        /// The session started: its devices are known. The bridge does not serve yet.
        case started
        /// The bridge serves (its events are forwarded from here); samples flow next. A caller
        /// starts its network listener here.
        case serving
        /// A sample of the ride, handed to the bridges before it is reported.
        case sample(RideSample)
        /// What the session has to say (trainer confirmations, link changes).
        case notice(String)
        /// What an app did through a bridge (a write, its answer, a subscription).
        case bridge(RideBridgeEvent)
    }

    /// Bridges `session` (started here) through `bridge` and, when given, `network` (see the
    /// type's notes), reporting every event to `report`. `stopWhen`, when given, ends the run
    /// when it returns its reason; it must return when its task is cancelled. Returns why it
    /// ended (``RideRun/Ending``: the duration, the stop or the end of the samples).
    /// - Throws: ``RideBridgeRunError``.
    public func run(
        _ session: RideSession, bridge: RideBridge, network: DirconBridge? = nil, stopWhen: (@Sendable () async -> String)? = nil,
        report: @escaping @Sendable (Event) async -> Void
    ) async throws(RideBridgeRunError) -> RideRun.Ending {
        let samples: AsyncStream<RideSample>
        do { samples = try await session.start() } catch let error as RideError {
            throw .start(error.message)
        } catch {
            throw .start("\(error)")
        }
        await report(.started)
        do { try await bridge.start() } catch {
            throw .serve("\(error)")
        }
        let events = Task {
            await withTaskGroup(of: Void.self) { group in
                for stream in [bridge.events] + (network.map { [$0.events] } ?? []) {
                    group.addTask { for await event in stream { await report(.bridge(event)) } }
                }
            }
        }
        defer { events.cancel() }
        await report(.serving)
        let notices = Task {
            for await notice in session.notices { await report(.notice(notice)) }
        }
        defer { notices.cancel() }
        let outcome = await RideRun.race(duration: duration, clock: clock, stopWhen: stopWhen) {
            for await sample in samples {
                await bridge.publish(sample)
                await network?.publish(sample)
                await report(.sample(sample))
            }
            return Task.isCancelled ? nil : RideRun.Outcome(ending: .samplesEnded)
        }
        return outcome.ending
    }
}

/// Why a ``RideBridgeRun`` could not bridge.
public enum RideBridgeRunError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The session did not start (a device not found): why, in words.
    case start(String)
    /// The bridge could not serve (its services or advertising refused): why.
    case serve(String)

    public var description: String {
        switch self {
        case let .start(message): message
        case let .serve(message): "cannot serve the bridge: \(message)"
        }
    }
}
