import BluetideBase

/// The application's authorisation of remote clients (``GATTPermissions/readAuthorized``,
/// ``GATTPermissions/writeAuthorized``): the server holds a request and reports
/// ``GATTServerEvent/authorizationRequested(_:)``; the answer comes in here and the held
/// request is answered through the link's bearer.
extension HostCore {
    /// Applies the application's answer about authorisation on a link (see
    /// ``GATTAuthorizationAnswer``); a request waiting for it is answered (or goes on to wait
    /// for another attribute). Ignored for a link that is not open.
    public mutating func authorize(_ answer: GATTAuthorizationAnswer, now: Duration, into outputs: inout HostOutputs) {
        let connection = answer.connection
        guard let mtu = links[connection]?.bearer.mtu else { return }
        let t = now.hostSeconds
        let (response, events) = server.authorize(answer, mtu: mtu, now: t)
        serve(response, events, on: connection, now: t, into: &outputs)
    }

    /// Refuses (0x08) the held requests whose authorisation timeout has passed.
    mutating func expireAuthorizations(now t: Double, into outputs: inout HostOutputs) {
        for (connection, response) in server.expireAuthorizations(now: t) {
            serve(response, [], on: connection, now: t, into: &outputs)
        }
    }

    /// Keeps what the server being replaced had authorised; refuses the requests it held.
    mutating func adoptAuthorizations(from previous: GATTServer, now t: Double, into outputs: inout HostOutputs) {
        for (connection, response) in server.adoptAuthorizations(from: previous) {
            serve(response, [], on: connection, now: t, into: &outputs)
        }
    }

    /// Sends a held request's response on its link and reports the server's events.
    private mutating func serve(
        _ response: ATTPDU?, _ events: [GATTServerEvent], on connection: UInt16, now t: Double, into outputs: inout HostOutputs
    ) {
        for event in events { outputs.events.append(.server(handle: connection, event)) }
        guard let response, let sent = links[connection]?.bearer.respond(response) else { return }
        handleBearerEvents(sent, on: connection, now: t, into: &outputs)
    }
}
