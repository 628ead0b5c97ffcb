/// Glue between one connection's ``ATTBearer`` and the local ``GATTServer``, so the stack owner
/// only moves bytes: requests and commands are answered by the server, confirmed indications
/// release the next queued one.
extension ATTBearer {
    /// What ``receive(_:now:server:connection:)`` produced.
    public struct ServedEvents: Equatable, Sendable {
        /// Bearer events left for the owner: `send` bytes, client-side responses, notifications,
        /// indications, failures, MTU changes, ignored PDUs, closure. Server requests and
        /// commands have already been handled and do not appear here.
        public var bearer: [ATTBearerEvent] = []
        /// What the server reports to the application (writes, subscription changes).
        public var server: [GATTServerEvent] = []
    }

    /// Handles one incoming ATT PDU with `server` answering requests and commands for
    /// `connection` (the HCI connection handle). A request the server holds for the
    /// application's authorisation stays unanswered here; its response comes later through
    /// ``respond(_:)``.
    public mutating func receive(_ bytes: [UInt8], now: Double, server: inout GATTServer, connection: UInt16) -> ServedEvents {
        var out = ServedEvents()
        for event in receive(bytes, now: now) {
            switch event {
            case let .serverRequest(pdu):
                let (response, events) = server.handle(pdu, from: connection, mtu: mtu, now: now)
                out.server += events
                if let response { out.bearer += respond(response) }
            case let .serverCommand(pdu):
                out.server += server.handle(pdu, from: connection, mtu: mtu, now: now).events
            case .indicationConfirmed:
                out.bearer.append(event)
                for push in server.indicationConfirmed(by: connection) { out.bearer += send(push, now: now) }
            default:
                out.bearer.append(event)
            }
        }
        return out
    }

    /// Sends a server push (from ``GATTServer/notify(valueHandle:value:)`` or
    /// ``GATTServer/indicate(valueHandle:value:)``) on this bearer. A closed bearer sends nothing.
    public mutating func send(_ push: GATTServerPush, now: Double) -> [ATTBearerEvent] {
        switch push.kind {
        case .notification: return (try? notify(handle: push.handle, value: push.value)) ?? []
        case .indication: return indicate(handle: push.handle, value: push.value, now: now).1
        }
    }
}
