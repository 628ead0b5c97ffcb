import Bluetide

/// How a ``SerialLink`` connects and keeps its connection, with the HM-10 article's defaults:
/// 3 reconnect tries 1 s apart, and a failed connect retried.
public struct SerialLinkOptions: Sendable, Equatable {
    /// Reconnect attempts after the link is lost (0: none, the link closes).
    public var reconnectTries: Int
    /// Wait before each reconnect attempt and between connect retries.
    public var reconnectInterval: Duration
    /// Extra connect attempts after a first one fails (0: one attempt only).
    public var connectRetries: Int
    /// Time limit of one connect attempt.
    public var connectTimeout: Duration
    /// Most bytes held for the device while its link is down; more is refused with
    /// ``SerialLinkError/linkDown(device:queued:offered:limit:)``.
    public var outageBufferLimit: Int
    /// The service and characteristics to use; nil finds Nordic UART or HM-10 by itself.
    public var profile: SerialProfile?
    /// How often to read the link's RSSI and report it as ``SerialStatus/rssi(_:)``; nil: never.
    public var rssiInterval: Duration?
    /// ATT MTU to ask for (Nordic UART then writes MTU − 3 bytes at a time); nil keeps 23.
    public var preferredMTU: Int?
    /// Most received bytes held for the reader of ``SerialLink/bytes`` (at least 1024): past
    /// half of it the link stops writing until the reader catches up; a full buffer drops what
    /// the device sends on its own.
    public var receiveBufferLimit: Int
    /// Send with Write Requests (each answered by the device before the next) even when the
    /// characteristic takes Write Commands: slower, but the device acknowledges every chunk.
    /// Ignored when the characteristic takes only Write Commands.
    public var writeWithResponse: Bool

    /// Options; see each property.
    public init(
        reconnectTries: Int = 3, reconnectInterval: Duration = .seconds(1), connectRetries: Int = 3,
        connectTimeout: Duration = .seconds(10), outageBufferLimit: Int = 16_384, profile: SerialProfile? = nil,
        rssiInterval: Duration? = nil, preferredMTU: Int? = 247, receiveBufferLimit: Int = 65_536, writeWithResponse: Bool = false
    ) {
        self.writeWithResponse = writeWithResponse
        self.receiveBufferLimit = max(receiveBufferLimit, 1024)
        self.reconnectTries = max(reconnectTries, 0)
        self.reconnectInterval = reconnectInterval
        self.connectRetries = max(connectRetries, 0)
        self.connectTimeout = connectTimeout
        self.outageBufferLimit = max(outageBufferLimit, 0)
        self.profile = profile
        self.rssiInterval = rssiInterval
        self.preferredMTU = preferredMTU
    }

    /// Longest a lost link may stay down before the link gives up by itself, whatever the
    /// connection layer is doing: every reconnect try with its wait, its connect time limit and
    /// the set-up after it (MTU exchange, discovery and subscribing, 10 s each at most), plus a
    /// second. With the defaults (3 tries, 1 s, 10 s): 64 s. So a device that is gone for good
    /// always ends in ``SerialStatus/gaveUp(reason:)``, never in an endless "reconnecting".
    public var outageLimit: Duration {
        let setup = connectionPolicy.setupTimeout
        return (reconnectInterval + connectTimeout + setup) * max(reconnectTries, 1) + .seconds(1)
    }

    /// The connection policy these options mean: fixed intervals (no back-off, no jitter), as
    /// the article describes them.
    public var connectionPolicy: ConnectionPolicy {
        ConnectionPolicy(
            retry: .init(attempts: connectRetries + 1, delay: reconnectInterval),
            reconnect: reconnectTries == 0 ? .disabled : .init(
                isEnabled: true, maximumAttempts: reconnectTries, delay: reconnectInterval, backoffMultiplier: 1,
                maximumDelay: reconnectInterval, jitter: 0, attemptTimeout: connectTimeout),
            preferredMTU: preferredMTU)
    }
}
