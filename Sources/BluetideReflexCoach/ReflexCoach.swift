import Bluetide
import BluetideBase
import BluetideProfiles
import BluetideReflex
import BluetideSupport
import Foundation

/// The coach side of the reflex trainer over BLE: finds a trainer, writes a saved sequence,
/// starts it and stores each step's result under the athlete the moment it arrives.
///
/// Nothing received is ever lost: every ``PunchResponse`` is committed to the ``CoachStore``
/// before it is reported. The session is marked complete only when the device notified
/// `12 finished` and every step's result is stored; a stop, a device error, a link lost for good
/// (after the policy's reconnect attempts) or a cancelled run marks it incomplete and keeps what
/// arrived. Responses the device sent while the link was down are missed (BLE does not queue
/// notifications), so a session that finishes after a reconnect is complete only if none was.
public struct ReflexCoach: Sendable {
    /// The central used to scan and connect.
    public let central: Central
    /// Where athletes, sequences and results live.
    public let store: CoachStore
    /// Longest scan for a trainer (the spec's 30 s).
    public var scanTimeout: Duration = .seconds(30)
    /// How long to listen once per scan round before picking, so RSSI values settle.
    public var scanRound: Duration = .seconds(2)
    /// Advertised-name prefix a trainer must have (spec default `Reflex`).
    public var namePrefix: String = PunchUUID.namePrefix
    /// Connect retries and reconnection after link loss.
    public var policy: ConnectionPolicy = ConnectionPolicy(
        retry: .init(attempts: 3), reconnect: .init(maximumAttempts: 5, delay: .milliseconds(200), maximumDelay: .seconds(5)))
    /// When set, start with `03 n` (countdown of n seconds) instead of `01`.
    public var countdownSeconds: UInt8?
    /// Longest search for an athlete's heart-rate strap before the run goes on without it.
    public var strapScanTimeout: Duration = .seconds(10)
    /// Longest wait for a connected strap's first heart rate before the run starts anyway.
    public var strapFirstReadingLimit: Duration = .seconds(3)
    /// After `finished`, how long to wait for step results still in flight on punchResponse.
    public var finishGrace: Duration = .seconds(2)
    /// Longest silence from the trainer (no result, no status) while the link is up before the
    /// session ends incomplete; nil: the sequence's longest step time + the countdown + 10 s.
    public var quietTimeout: Duration?
    /// Source of the dates stored (session start and end).
    public var clock: @Sendable () -> Date = { Date() }
    /// At the end of a run that the trainer did not end itself: how long telling it `stop`, and
    /// then disconnecting, may each take before the session's end is stored anyway. A trainer or
    /// controller that stopped answering must not hold up the stored end (a stop signal leaves
    /// the process about two seconds in all).
    public var farewellLimit: Duration = .milliseconds(500)
    /// The clock the coach's own waits run on: the once-a-second silence check (``quietTimeout``),
    /// the ``finishGrace``, the ``farewellLimit`` and the strap's first reading. By default the
    /// central's clock (``Bluetooth/Configuration/clock``, the monotonic clock unless a test or
    /// simulation injected a ``ManualClock``), so a coach in a virtual world runs in its time.
    public var waitClock: BluetideClock

    /// A coach using `central` and `store` (waiting on the central's clock); adjust the other
    /// properties as needed.
    public init(central: Central, store: CoachStore) {
        self.central = central
        self.store = store
        self.waitClock = central.clock
    }

    /// The silence check's period: one tick of ``waitClock`` a second.
    public static let silenceTick: Duration = .seconds(1)

    /// The scan filter: Punch service advertised and name prefix.
    public var scanFilter: ScanFilter {
        ScanFilter(serviceUUIDs: [PunchUUID.service], name: .prefix(namePrefix))
    }

    /// Scans in rounds of ``scanRound`` until a trainer matching `choice` is seen or
    /// ``scanTimeout`` has passed; returns the strongest match (``Central/find(_:within:round:)``).
    public func findTrainer(_ choice: TrainerChoice = .strongest) async throws -> Advertisement {
        do {
            return try await central.find(trainerQuery(choice), within: scanTimeout, round: scanRound)
        } catch let notFound as DeviceNotFound {
            // The trainers seen (Punch service, name prefix) that were not the one chosen.
            let trainers = notFound.seenDevices.filter(scanFilter.matches).map { "\($0.name ?? "?") \($0.address.string)" }
            throw CoachError.trainerNotFound(choice, seconds: Self.seconds(scanTimeout), seen: Array(Set(trainers)).sorted())
        }
    }

    /// The trainer `choice` means: a Punch service, the name prefix, and the name (any case) or address chosen.
    public func trainerQuery(_ choice: TrainerChoice) -> DeviceQuery {
        var query = DeviceQuery(namePrefix: namePrefix, services: [PunchUUID.service])
        switch choice {
        case .strongest: break
        case let .name(name):
            query.name = name
            query.ignoresNameCase = true
        case let .address(text):
            query.address = try? BluetoothAddress(text, type: .random)
            // Text that is no address (not made by TrainerChoice(parsing:)) matches no device:
            // no advertisement is that strong.
            if query.address == nil { query.minimumRSSI = .max }
        }
        return query
    }

    /// Runs the saved sequence `sequenceName` for `athleteID` on the trainer picked by `choice`,
    /// reporting progress. The sequence throws before a session exists (no trainer, refused
    /// sequences); once ``CoachEvent/sessionStarted(id:)`` was reported it always ends with
    /// ``CoachEvent/ended(_:)``. A request on `stop` ends the run with its reason: the device is
    /// sent `02 stop`, the session is stored as incomplete with the reason, and `ended` is still
    /// reported (keep iterating until it arrives). Ending the iteration early cancels the run the
    /// same way, without anyone to tell; ``RunStop/waitUntilEnded()`` then says when the
    /// session's end is stored.
    public func run(athleteID: Int64, sequenceName: String, choice: TrainerChoice = .strongest,
                    stop: RunStop = RunStop()) -> AsyncThrowingStream<CoachEvent, any Error> {
        stream(stop: stop) { emit in
            try await perform(athleteID: athleteID, sequenceName: sequenceName, choice: choice, stop: stop, emit: emit)
        }
    }

    /// Runs like ``run(athleteID:sequenceName:choice:stop:)`` on `trainer`, found by an earlier
    /// scan (no scan of its own: several runs at once share one scan, see ``GymSession/findTrainers(count:)``).
    /// With `program`, that program runs under the name `sequenceName` instead of the saved one
    /// (a colour chase's targets); with `recording`, results go there instead of one session of
    /// `athleteID`. With `strap` (or a strap paired to the athlete in the store), its heart
    /// rate is stored beside each step; a strap that cannot be found leaves it out.
    public func run(athleteID: Int64, sequenceName: String, trainer: Advertisement, program: PunchProgram? = nil,
                    recording: RunRecording? = nil, strap: TrainerChoice? = nil, stop: RunStop = RunStop()) -> AsyncThrowingStream<CoachEvent, any Error> {
        stream(stop: stop) { emit in
            try await perform(athleteID: athleteID, sequenceName: sequenceName, choice: .address(trainer.address.string), trainer: trainer,
                              program: program, recording: recording, strap: strap, stop: stop, emit: emit)
        }
    }

    /// The run's events as a stream; a stop request or the consumer leaving cancels the run.
    private func stream(stop: RunStop, _ body: @escaping @Sendable (@Sendable (CoachEvent) -> Void) async throws -> Void)
        -> AsyncThrowingStream<CoachEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<CoachEvent, any Error>.makeStream(bufferingPolicy: .unbounded)
        let task = Task {
            do {
                try await body { continuation.yield($0) }
                stop.markEnded()
                continuation.finish()
            } catch {
                stop.markEnded()
                if let reason = stop.reason, !Self.isStorageFailure(error) {
                    continuation.finish(throwing: CoachError.stopped(reason))
                } else {
                    continuation.finish(throwing: error)
                }
            }
        }
        stop.onRequest { _ in task.cancel() }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// What the session loop reacts to, from the three sources merged.
    enum Input: Sendable {
        case response([UInt8])
        case responsesEnded(String?)
        case control([UInt8])
        case link(ConnectionEvent)
        case graceOver
        /// Once a second, for the silence check.
        case tick
    }

    /// An input and when it arrived on the coach's clock: the silence check compares arrival
    /// times, so a run whose loop falls behind (a starved machine) is not judged silent while
    /// the trainer's words wait in the queue behind a tick.
    struct Arrival: Sendable {
        let input: Input
        let at: BluetideClock.Instant
    }

    /// The pumps' end of the run's input queue: stamps each input with its arrival time.
    struct InputSink: Sendable {
        let continuation: AsyncStream<Arrival>.Continuation
        let clock: BluetideClock
        func yield(_ input: Input) { continuation.yield(Arrival(input: input, at: clock.now)) }
    }

    /// The silence after which a run is given up (see ``quietTimeout``).
    func quietLimit(for program: PunchProgram) -> Duration {
        if let quietTimeout { return quietTimeout }
        let longestStep = Int(program.timeSequence.milliseconds.max() ?? 0)
        return .milliseconds(longestStep) + .seconds(Int(countdownSeconds ?? 0)) + .seconds(10)
    }

    /// The whole run; `emit` gets each event in order.
    func perform(athleteID: Int64, sequenceName: String, choice: TrainerChoice, trainer found: Advertisement? = nil,
                 program override: PunchProgram? = nil, recording custom: RunRecording? = nil, strap strapChoice: TrainerChoice? = nil,
                 stop: RunStop = RunStop(),
                 emit: @Sendable (CoachEvent) -> Void) async throws {
        guard try store.athlete(id: athleteID) != nil else { throw CoachError.athleteNotFound(athleteID) }
        let program: PunchProgram
        let programName: String
        if let override {
            program = override
            programName = sequenceName
        } else {
            guard let saved = try store.sequence(named: sequenceName) else {
                throw CoachError.sequence(CoachStoreError.sequenceNotFound(sequenceName).description)
            }
            do { program = try saved.program() } catch {
                throw CoachError.sequence(CoachStoreError.invalidSequence(name: sequenceName, error).description)
            }
            programName = saved.name
        }
        let recording = custom ?? RunRecording.session(of: athleteID, in: store)

        let trainer: Advertisement
        if let found {
            trainer = found
        } else {
            emit(.scanning(seconds: Self.seconds(scanTimeout)))
            trainer = try await findTrainer(choice)
        }
        emit(.found(trainer))
        let connection = try await central.connect(to: trainer, policy: policy)
        emit(.connected(address: trainer.address.string))
        // The athlete's strap: a failure to find or connect it never stops the run.
        let feed = HeartRateFeed(clock: waitClock)
        var strapConnection: Connection?
        let pairedStrap = (try? store.strap(athleteID: athleteID)).flatMap { $0 }.map { TrainerChoice(parsing: $0) }
        if let strap = strapChoice ?? pairedStrap {
            do {
                let (link, name) = try await connectStrap(strap, feed: feed)
                strapConnection = link
                emit(.strap("heart-rate strap \(name) connected"))
            } catch {
                emit(.strap("heart-rate strap not connected (\(error)); the run goes on without heart rate"))
            }
        }
        defer {
            if let strapConnection { Task { [farewellLimit, waitClock] in
                _ = try? await withTimeLimit(farewellLimit, clock: waitClock, onTimeout: { CancellationError() }) {
                    await strapConnection.disconnect()
                }
            } }
        }

        let (inputs, continuation) = AsyncStream<Arrival>.makeStream(bufferingPolicy: .unbounded)
        let sink = InputSink(continuation: continuation, clock: waitClock)
        var pumps: [Task<Void, Never>] = []
        defer { for pump in pumps { pump.cancel() } }
        let sessionID: Int64
        do {
            let responses = try await connection.notifications(of: PunchUUID.response)
            let statuses = try await connection.notifications(of: PunchUUID.control)
            let events = connection.events
            pumps.append(Task {
                do {
                    for try await bytes in responses { sink.yield(.response(bytes)) }
                    sink.yield(.responsesEnded(nil))
                } catch {
                    sink.yield(.responsesEnded("\(error)"))
                }
            })
            pumps.append(Task {
                do { for try await bytes in statuses { sink.yield(.control(bytes)) } } catch {}
            })
            pumps.append(Task { for await event in events { sink.yield(.link(event)) } })
            pumps.append(Task { [waitClock] in
                while !Task.isCancelled {
                    try? await waitClock.sleep(for: Self.silenceTick)
                    sink.yield(.tick)
                }
            })

            do {
                try await PunchTrainerCommands.load(program, on: connection)
            } catch {
                throw CoachError.device("the trainer refused the sequences: \(error)")
            }
            emit(.sequencesWritten(steps: program.sequence.count))
            sessionID = try recording.start(RunRecording.Start(
                program: program, sequenceName: programName, started: clock(), deviceName: trainer.name,
                deviceAddress: trainer.address.string))
            emit(.sessionStarted(id: sessionID))
        } catch {
            await connection.disconnect()
            throw error
        }

        var stored: Set<Int> = []
        var finishedAfter: Int?
        var reason = "cancelled"
        var complete = false
        let quiet = quietLimit(for: program)
        var lastHeard = waitClock.now
        var linkUp = true
        do {
            try await PunchTrainerCommands.start(on: connection, countdownSeconds: countdownSeconds)
            // Silence counts from the start command's answer, not from before it was sent.
            lastHeard = waitClock.now
            loop: for await arrival in inputs {
                let input = arrival.input
                if case .tick = input {} else { lastHeard = max(lastHeard, arrival.at) }
                switch input {
                case .tick:
                    // Only while the link is up: the reconnect policy bounds an outage itself.
                    // Measured to the tick's arrival, not to when the loop got to it.
                    if linkUp, lastHeard.duration(to: arrival.at) > quiet {
                        reason = "no word from the trainer for \(Self.seconds(quiet)) s"
                        complete = false
                        break loop
                    }
                case let .response(bytes):
                    let response: PunchResponse
                    do { response = try PunchResponse(exactly: bytes) } catch {
                        emit(.undecodable(bytes: bytes, error: "\(error)"))
                        continue
                    }
                    let (record, step) = try recording.append(response, feed.current)
                    stored.insert(step)
                    emit(.step(response, stored: record))
                    if let done = finishedAfter, stored.count >= done {
                        reason = "finished"; complete = stored.count == program.sequence.count
                        break loop
                    }
                case let .responsesEnded(error):
                    reason = error.map { "link lost: \($0)" } ?? "the trainer's responses ended"
                    break loop
                case let .control(bytes):
                    guard let status = try? PunchControlStatus(exactly: bytes) else { continue }
                    emit(.status(status))
                    switch status {
                    case let .finished(stepsDone):
                        finishedAfter = Int(stepsDone)
                        if stored.count >= Int(stepsDone) {
                            reason = "finished"; complete = stored.count == program.sequence.count
                            break loop
                        }
                        let grace = finishGrace
                        pumps.append(Task { [waitClock] in
                            try? await waitClock.sleep(for: grace)
                            sink.yield(.graceOver)
                        })
                    case .stopped:
                        reason = "stopped by the trainer"
                        break loop
                    case let .error(code):
                        reason = "trainer error \(code.rawValue): \(code)"
                        break loop
                    case .armed, .running:
                        break
                    }
                case let .link(event):
                    if event == .connected { continue }
                    emit(.link(event))
                    switch event {
                    case let .failed(error):
                        reason = "link lost: \(error)"
                        break loop
                    case .disconnected:
                        linkUp = false
                    case .reconnected:
                        linkUp = true
                        // Notifications sent while the link was down are gone, but punchResponse
                        // still holds the latest result: keep it, and if it was the last step the
                        // trainer finished during the outage (its `finished` was missed too).
                        guard let bytes = try? await connection.read(PunchUUID.response),
                              let response = try? PunchResponse(exactly: bytes), let step = response.step,
                              Int(step) < program.sequence.count
                        else { continue }
                        if !stored.contains(Int(step)) {
                            let (record, step) = try recording.append(response, feed.current)
                            stored.insert(step)
                            emit(.step(response, stored: record))
                        }
                        if Int(step) == program.sequence.count - 1 {
                            reason = "finished (while the link was down)"
                            complete = stored.count == program.sequence.count
                            break loop
                        }
                    default:
                        break
                    }
                case .graceOver:
                    reason = "finished, but \(program.sequence.count - stored.count) step results never arrived"
                    complete = stored.count == program.sequence.count
                    break loop
                }
            }
        } catch {
            reason = Task.isCancelled ? "cancelled" : "\(error)"
        }
        let cancelled = Task.isCancelled || (!complete && reason == "cancelled")
        if cancelled, let requested = stop.reason { reason = "stopped: \(requested)" }
        // Any ending the trainer did not report itself (a stop, a storage failure, silence) tells
        // it to stop, so the next run does not hear this program's steps.
        let trainerEnded = reason.hasPrefix("finished") || reason.hasPrefix("stopped by the trainer")
            || reason.hasPrefix("trainer error") || reason.hasPrefix("link lost")
        if cancelled || !trainerEnded {
            // A fresh task: the run's own task is cancelled, and the stop must still go out.
            // Bounded: a silent trainer or controller must not hold up the stored end.
            await Task { [farewellLimit, waitClock] in
                _ = try? await withTimeLimit(farewellLimit, clock: waitClock, onTimeout: { CancellationError() }) {
                    try await connection.write(PunchControlCommand.stop, to: PunchUUID.control)
                }
            }.value
        }
        // The link goes first: a storage failure below must never leave the trainer connected
        // (the next run would find "connection already exists").
        await Task { [farewellLimit, waitClock] in
            _ = try? await withTimeLimit(farewellLimit, clock: waitClock, onTimeout: { CancellationError() }) { await connection.disconnect() }
        }.value
        do {
            try recording.finish(clock(), complete, reason)
        } catch {
            throw CoachError.storage("\(error) (the run ended: \(reason); \(stored.count) of \(program.sequence.count) step results were stored)")
        }
        // A stop on request, or from the trainer's own button, is no failure; any other end
        // short of a complete session is.
        let requested = cancelled && stop.reason != nil
        let failure = complete || requested || reason.hasPrefix("stopped by the trainer") ? nil : reason
        emit(.ended(CoachSessionOutcome(
            sessionID: sessionID, complete: complete, stepsStored: stored.count, stepCount: program.sequence.count, reason: reason,
            failure: failure)))
    }

    static func isStorageFailure(_ error: any Error) -> Bool {
        if error is CoachStoreError { return true }
        if case .storage = error as? CoachError { return true }
        return false
    }

    static func seconds(_ duration: Duration) -> Double { duration.inSeconds }
}
