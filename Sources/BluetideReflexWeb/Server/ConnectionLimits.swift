/// How long the dashboard keeps a connection that does nothing, and how many it holds.
public struct ConnectionLimits: Sendable, Hashable {
    /// Connections held at once (default 256). Past it, a connection that never sent a byte gives
    /// way to the new one; when none is silent, the new one is refused with `503`.
    public var maximumConnections: Int
    /// Seconds a new connection may stay silent before its first byte (default 10).
    public var firstByteTimeout: Double
    /// Seconds a connection may go with no byte either way before it is closed (default 60).
    /// Live pages stay open: the server pings their WebSocket every ``webSocketPingInterval``.
    public var idleTimeout: Double
    /// Seconds between the server's pings on a live page's WebSocket (default 20).
    public var webSocketPingInterval: Double
    /// Seconds from a request's first byte to the end of its header (default 10). A header that
    /// has not all arrived by then (a client trickling a byte at a time) is answered
    /// `408 Request Timeout` and the connection closed, so slow clients cannot hold the
    /// connections for ever while sending something now and then.
    public var headerTimeout: Double

    /// The defaults: 256 connections, 10 s to the first byte, 60 s idle, pings every 20 s, 10 s for a header.
    public init(maximumConnections: Int = 256, firstByteTimeout: Double = 10, idleTimeout: Double = 60,
                webSocketPingInterval: Double = 20, headerTimeout: Double = 10) {
        self.maximumConnections = maximumConnections
        self.firstByteTimeout = firstByteTimeout
        self.idleTimeout = idleTimeout
        self.webSocketPingInterval = webSocketPingInterval
        self.headerTimeout = headerTimeout
    }
}
