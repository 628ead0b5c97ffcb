import Foundation
import BluetideSupport

/// How a central connects and keeps a connection: retries of a failing connect, reconnection
/// after link loss, time limits and the MTU asked for.
public struct ConnectionPolicy: Sendable, Equatable {
    /// Retrying a connect that fails (timeout or refusal) before it succeeded once.
    public struct Retry: Sendable, Equatable {
        /// Total connect attempts, at least 1 (1 = no retry).
        public var attempts: Int
        /// Wait between attempts.
        public var delay: Duration

        /// `attempts` tries, `delay` apart.
        public init(attempts: Int = 1, delay: Duration = .milliseconds(500)) {
            self.attempts = max(attempts, 1)
            self.delay = delay
        }

        /// One attempt only.
        public static let never = Retry(attempts: 1)
    }

    /// Reconnecting after the link is lost (never after ``Connection/disconnect()``).
    public struct Reconnect: Sendable, Equatable {
        /// Whether to reconnect at all.
        public var isEnabled: Bool
        /// Attempts before giving up (each attempt is one connect with ``attemptTimeout``).
        public var maximumAttempts: Int
        /// Wait before the first attempt.
        public var delay: Duration
        /// Each further wait is the previous one times this (≥ 1; 2 doubles it).
        public var backoffMultiplier: Double
        /// Upper bound of a wait.
        public var maximumDelay: Duration
        /// Random spread of each wait, as a fraction (0.2 = ±20 %), so many clients do not
        /// reconnect in lock step.
        public var jitter: Double
        /// Time limit of one reconnect attempt.
        public var attemptTimeout: Duration
        /// Seed of the jitter's random numbers (SplitMix64), so a run can be repeated exactly;
        /// nil draws a fresh seed for each outage.
        public var jitterSeed: UInt64?

        /// A reconnect configuration; see each property.
        public init(
            isEnabled: Bool = true, maximumAttempts: Int = 10, delay: Duration = .milliseconds(200),
            backoffMultiplier: Double = 2, maximumDelay: Duration = .seconds(30), jitter: Double = 0.2,
            attemptTimeout: Duration = .seconds(5), jitterSeed: UInt64? = nil
        ) {
            self.isEnabled = isEnabled
            self.maximumAttempts = max(maximumAttempts, 1)
            self.delay = delay
            self.backoffMultiplier = max(backoffMultiplier, 1)
            self.maximumDelay = maximumDelay
            self.jitter = min(max(jitter, 0), 1)
            self.attemptTimeout = attemptTimeout
            self.jitterSeed = jitterSeed
        }

        /// No reconnection: a lost link closes the connection.
        public static let disabled = Reconnect(isEnabled: false)

        /// The wait before attempt `attempt` (1-based) without jitter:
        /// `delay × backoffMultiplier^(attempt − 1)`, capped at ``maximumDelay``.
        public func nominalDelay(beforeAttempt attempt: Int) -> Duration {
            let factor = pow(backoffMultiplier, Double(max(attempt - 1, 0)))
            let seconds = min(delay.seconds * factor, maximumDelay.seconds)
            return .milliseconds(Int64((seconds * 1000).rounded()))
        }

        /// The wait before attempt `attempt` with jitter applied; `unit` is a number in 0…1
        /// (random in use, fixed in tests).
        public func delay(beforeAttempt attempt: Int, unit: Double) -> Duration {
            let nominal = nominalDelay(beforeAttempt: attempt).seconds
            let spread = nominal * jitter * (min(max(unit, 0), 1) * 2 - 1)
            return .milliseconds(Int64((max(nominal + spread, 0) * 1000).rounded()))
        }

        /// The waits before attempts 1…``maximumAttempts``, jittered by numbers drawn from a
        /// SplitMix64 generator seeded with `seed`: the same seed gives the same schedule.
        public func delays(seed: UInt64) -> [Duration] {
            var generator = SplitMix64(seed: seed)
            return (1...maximumAttempts).map { delay(beforeAttempt: $0, unit: generator.unit()) }
        }
    }

    /// Connect retries.
    public var retry: Retry
    /// Reconnection after link loss.
    public var reconnect: Reconnect
    /// Time limit of each operation on the connection (read, write, subscribe, …).
    public var operationTimeout: Duration
    /// Time limit of setting a link up after each connect and reconnect: the MTU exchange and
    /// the service discovery (many transactions), then each subscription restored.
    public var setupTimeout: Duration
    /// The ATT MTU to ask for right after connecting (23…517, octets), or nil to keep 23 until
    /// ``Connection/requestMTU(_:)``.
    public var preferredMTU: Int?

    /// A policy; see each property.
    public init(
        retry: Retry = .never, reconnect: Reconnect = .disabled, operationTimeout: Duration = .seconds(10),
        setupTimeout: Duration = .seconds(10), preferredMTU: Int? = 517
    ) {
        self.retry = retry
        self.reconnect = reconnect
        self.operationTimeout = operationTimeout
        self.setupTimeout = setupTimeout
        self.preferredMTU = preferredMTU.map { min(max($0, 23), 517) }
    }

    /// One connect attempt, no reconnection, 10 s per operation and per set-up, MTU 517 asked for.
    public static let `default` = ConnectionPolicy()

    /// Three connect attempts 0.5 s apart and up to 10 reconnect attempts after link loss
    /// (0.2 s doubling up to 30 s, ±20 %).
    public static let resilient = ConnectionPolicy(retry: Retry(attempts: 3), reconnect: Reconnect())
}

/// What happened to a connection, in order.
public enum ConnectionEvent: Sendable, Equatable, CustomStringConvertible {
    /// The link is up (the first event of every ``Connection/events`` sequence while connected).
    case connected
    /// The link went down, with the HCI reason (0x08 timeout, 0x13 remote closed, 0x16 we closed).
    case disconnected(reason: DisconnectReason)
    /// Reconnect attempt `attempt` (1-based) is starting.
    case reconnecting(attempt: Int)
    /// The link is back; services were rediscovered and subscriptions restored.
    case reconnected
    /// Reconnecting gave up; the connection is closed for good.
    case failed(BluetideError)

    /// The event in words.
    public var description: String {
        switch self {
        case .connected: "connected"
        case let .disconnected(reason): "disconnected (\(reason))"
        case let .reconnecting(attempt): "reconnecting (attempt \(attempt))"
        case .reconnected: "reconnected"
        case let .failed(error): "failed: \(error)"
        }
    }
}
