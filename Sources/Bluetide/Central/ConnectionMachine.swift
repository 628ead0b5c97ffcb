import BluetideBase
import BluetideSupport

/// The decisions of one ``Connection`` as a value without I/O, as ``HostCore`` is for the host:
/// connect attempts and the waits between them, the time limits of each attempt and of the
/// whole connect, the set-up of each new link, reconnecting after a link loss with back-off,
/// and giving up. It takes what happened and the time (`now`, on the connection's clock) and
/// returns what to do; ``ConnectionDriver`` does it (makes links, sleeps, sets links up,
/// restores subscriptions, tells the user) and feeds back what came of it.
///
/// At most one action of a batch waits for something (``Action/attempt(timeout:)``,
/// ``Action/wait(until:)``, ``Action/setUp(within:)``), always the last; its outcome is the
/// next input.
struct ConnectionMachine: Sendable, Equatable {
    typealias Instant = BluetideClock.Instant

    /// Where the connection is.
    enum Phase: Sendable, Equatable {
        /// Not started.
        case idle
        /// Connect attempt `attempt` (1-based) is making the first link.
        case connecting(attempt: Int)
        /// Waiting before connect attempt `attempt`.
        case waitingToConnect(attempt: Int)
        /// Setting the first link up (MTU exchange, service discovery).
        case settingUp
        /// The link is up.
        case connected
        /// Waiting (backing off) before reconnect attempt `attempt`.
        case waitingToReconnect(attempt: Int)
        /// Reconnect attempt `attempt` is making a link.
        case reconnecting(attempt: Int)
        /// Reconnect attempt `attempt` made a link and sets it up (subscriptions restored).
        case settingUpAgain(attempt: Int)
        /// Closed for good.
        case closed
    }

    /// What happened.
    enum Input: Sendable, Equatable {
        /// The user asked to connect.
        case connect
        /// The attempt asked for made a link.
        case linkUp
        /// The attempt asked for failed (timeout or refusal).
        case attemptFailed(BluetideError)
        /// The wait asked for is over.
        case waitOver
        /// The new link is set up.
        case setUpDone
        /// Setting the new link up failed.
        case setUpFailed(BluetideError)
        /// The current link went down with `reason`; `jitterSeed` seeds the back-off's jitter
        /// when the policy gives no seed of its own.
        case linkLost(DisconnectReason, jitterSeed: UInt64)
        /// The user asked to disconnect (no reconnection from now on).
        case disconnectRequested
        /// The user's disconnect took the link down with `reason`.
        case disconnectDone(DisconnectReason)
    }

    /// What to do.
    enum Action: Sendable, Equatable {
        /// Make a link to the device within `timeout`; the outcome is ``Input/linkUp`` or
        /// ``Input/attemptFailed(_:)``.
        case attempt(timeout: Duration)
        /// Sleep until `until`, then feed ``Input/waitOver``.
        case wait(until: Instant)
        /// Set the new link up (MTU, discovery, subscriptions restored) within `within`; the
        /// outcome is ``Input/setUpDone`` or ``Input/setUpFailed(_:)``.
        case setUp(within: Duration)
        /// Disconnect the link that was just made (it is not wanted any more).
        case dropLink
        /// Tell the user.
        case emit(ConnectionEvent)
        /// The connect call returns the connection.
        case connected
        /// The connect call fails with this error.
        case failConnect(BluetideError)
        /// Close for good: sequences end with the error (cleanly when nil), the slot is freed.
        case close(BluetideError?)
    }

    let address: BluetoothAddress
    let policy: ConnectionPolicy
    /// Time limit of each connect attempt.
    let attemptTimeout: Duration
    /// Time limit of the whole connect (every attempt, the waits and the set-up), if any.
    let total: Duration?
    private(set) var phase: Phase = .idle
    /// When the whole connect must be over (from ``total``).
    private var deadline: Instant?
    private var lastError: BluetideError?
    /// The back-off of the current outage: the wait before reconnect attempt 1, 2, …
    private(set) var delays: [Duration] = []
    /// The user asked to disconnect: a link loss now closes.
    private(set) var userDisconnected = false

    init(address: BluetoothAddress, policy: ConnectionPolicy, attemptTimeout: Duration, within total: Duration? = nil) {
        self.address = address
        self.policy = policy
        self.attemptTimeout = attemptTimeout
        self.total = total
    }

    /// Whether the link is up.
    var isConnected: Bool { phase == .connected }

    /// Whether the connection is closed for good.
    var isClosed: Bool { phase == .closed }

    /// What is left of ``total`` at `now` (nil without one).
    func left(at now: Instant) -> Duration? { deadline.map { now.duration(to: $0) } }

    /// Handles one input at `now` and returns what to do, in order.
    mutating func handle(_ input: Input, now: Instant) -> [Action] {
        switch (phase, input) {
        case (.closed, .linkUp):
            // Made while the connection closed: not wanted.
            return [.dropLink]
        case (.closed, _):
            return []
        case (_, .disconnectRequested):
            userDisconnected = true
            if phase == .connected { return [] }  // the driver takes the link down first
            phase = .closed
            return [.close(nil)]
        case let (.connected, .disconnectDone(reason)):
            phase = .closed
            return [.emit(.disconnected(reason: reason)), .close(nil)]

        // The first link.
        case (.idle, .connect):
            deadline = total.map { now.advanced(by: $0) }
            return attempt(1, now: now)
        case let (.connecting(attempt), .attemptFailed(error)):
            lastError = error
            guard attempt < policy.retry.attempts else { return giveUpConnecting() }
            if let left = left(at: now), left <= policy.retry.delay { return giveUpConnecting() }
            phase = .waitingToConnect(attempt: attempt + 1)
            return [.wait(until: now.advanced(by: policy.retry.delay))]
        case let (.waitingToConnect(attempt), .waitOver):
            return self.attempt(attempt, now: now)
        case (.connecting, .linkUp):
            phase = .settingUp
            let limit = left(at: now).map { min(max($0, .zero), policy.setupTimeout) } ?? policy.setupTimeout
            return [.setUp(within: limit)]
        case (.settingUp, .setUpDone):
            phase = .connected
            return [.emit(.connected), .connected]
        case let (.settingUp, .setUpFailed(error)):
            phase = .closed
            return [.dropLink, .failConnect(error)]

        // Link loss and reconnection.
        case let (.connected, .linkLost(reason, seed)):
            let lost = ConnectionEvent.disconnected(reason: reason)
            if userDisconnected {
                phase = .closed
                return [.emit(lost), .close(nil)]
            }
            guard policy.reconnect.isEnabled else {
                phase = .closed
                return [.emit(lost), .close(.disconnected(reason: reason))]
            }
            delays = policy.reconnect.delays(seed: policy.reconnect.jitterSeed ?? seed)
            lastError = nil
            return [.emit(lost)] + backOff(before: 1, now: now)
        case let (.waitingToReconnect(attempt), .waitOver):
            phase = .reconnecting(attempt: attempt)
            return [.attempt(timeout: policy.reconnect.attemptTimeout)]
        case let (.reconnecting(attempt), .linkUp):
            phase = .settingUpAgain(attempt: attempt)
            return [.setUp(within: policy.setupTimeout)]
        case (.settingUpAgain, .setUpDone):
            phase = .connected
            return [.emit(.reconnected)]
        case let (.reconnecting(attempt), .attemptFailed(error)):
            return reconnectFailed(attempt, error, now: now)
        case let (.settingUpAgain(attempt), .setUpFailed(error)):
            return [.dropLink] + reconnectFailed(attempt, error, now: now)

        default:
            // An outcome that does not belong to the phase (a stale link's loss, a late answer).
            return []
        }
    }

    /// Connect attempt `attempt`, limited by what is left of the whole connect.
    private mutating func attempt(_ attempt: Int, now: Instant) -> [Action] {
        var limit = attemptTimeout
        if let left = left(at: now) {
            guard left > .zero else { return giveUpConnecting() }
            limit = min(limit, left)
        }
        phase = .connecting(attempt: attempt)
        return [.attempt(timeout: limit)]
    }

    /// The connect fails with the last attempt's error; an attempt cut short by the whole
    /// connect's limit timed out at what was left, so the limit named is ``total``.
    private mutating func giveUpConnecting() -> [Action] {
        phase = .closed
        let error = lastError ?? .connectTimedOut(address, seconds: (total ?? attemptTimeout).inSeconds)
        if let total, case .connectTimedOut = error { return [.failConnect(.connectTimedOut(address, seconds: total.inSeconds))] }
        return [.failConnect(error)]
    }

    /// Announces reconnect attempt `attempt` and waits its back-off.
    private mutating func backOff(before attempt: Int, now: Instant) -> [Action] {
        phase = .waitingToReconnect(attempt: attempt)
        return [.emit(.reconnecting(attempt: attempt)), .wait(until: now.advanced(by: delays[attempt - 1]))]
    }

    /// Reconnect attempt `attempt` failed: the next one, or give up after the last.
    private mutating func reconnectFailed(_ attempt: Int, _ error: BluetideError, now: Instant) -> [Action] {
        lastError = error
        guard attempt >= policy.reconnect.maximumAttempts else { return backOff(before: attempt + 1, now: now) }
        phase = .closed
        let failure = BluetideError.reconnectFailed(attempts: policy.reconnect.maximumAttempts, lastError: "\(error)")
        return [.emit(.failed(failure)), .close(failure)]
    }
}
