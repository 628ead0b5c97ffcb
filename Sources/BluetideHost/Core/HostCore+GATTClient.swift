import BluetideBase
import BluetideSupport

/// The GATT client procedures of every link, run inside the core: one at a time per link (the
/// bearer's one request slot), the others waiting in the order they came. A running procedure
/// always has exactly one ATT request out, registered with the link like any request under the
/// procedure's own ID; its answer comes back through ``HostCore/finish(_:_:into:)`` and is
/// handed to the procedure at the end of the round.
struct GATTClientProcedures: Sendable {
    /// The procedure holding a link's request slot.
    struct Running: Sendable {
        let id: HostRequestID
        var procedure: AnyGATTProcedure
        /// Its caller gave up: it was answered already; it runs on to its end (a long write
        /// cancels the server's queue) and holds the slot until then, but answers no one.
        var abandoned = false
    }

    /// One link's procedures.
    struct LinkProcedures: Sendable {
        var running: Running?
        var waiting: [(id: HostRequestID, request: GATTProcedureRequest)] = []
    }

    var links: [UInt16: LinkProcedures] = [:]
    /// The link of each running procedure.
    var runningOn: [HostRequestID: UInt16] = [:]
    /// Answers to running procedures' requests that came this round, in order.
    var arrived: [(id: HostRequestID, result: Result<HostReply, any Error>)] = []

    /// Whether `request` names a running procedure (its answers are the procedure's).
    func isRunning(_ request: HostRequestID) -> Bool { !runningOn.isEmpty && runningOn[request] != nil }
}

extension HostCore {
    // MARK: - Inputs

    /// Queues a procedure on a link; it starts at once when the link has none running.
    mutating func submitGATTProcedure(
        _ id: HostRequestID, _ request: GATTProcedureRequest, on handle: UInt16, now t: Double, into outputs: inout HostOutputs
    ) {
        guard links[handle] != nil else {
            // A procedure that needs no request (an empty handle range) ends as it would on a link.
            var procedure = request.procedure(mtu: ATTBearer.defaultMTU)
            if case let .finished(result) = procedure.start() { return finish(id, result.map(HostReply.gatt), into: &outputs) }
            return finish(id, .failure(HostError.noSuchConnection(handle)), into: &outputs)
        }
        gattClient.links[handle, default: GATTClientProcedures.LinkProcedures()].waiting.append((id, request))
        if gattClient.links[handle]?.running == nil { startNextGATTProcedure(on: handle, now: t, into: &outputs) }
    }

    /// The caller of a procedure gave up: a waiting one is dropped, a running one runs on
    /// without answering anyone. Either way it fails with `CancellationError` now.
    mutating func cancelGATTProcedure(_ id: HostRequestID, into outputs: inout HostOutputs) {
        if let handle = gattClient.runningOn[id] {
            guard gattClient.links[handle]?.running?.abandoned == false else { return }
            gattClient.links[handle]?.running?.abandoned = true
            // Straight out: through `finish` the answer would go to the procedure.
            return outputs.events.append(.finished(id, .failure(CancellationError())))
        }
        for (handle, procedures) in gattClient.links {
            guard let index = procedures.waiting.firstIndex(where: { $0.id == id }) else { continue }
            gattClient.links[handle]?.waiting.remove(at: index)
            return finish(id, .failure(CancellationError()), into: &outputs)
        }
    }

    // MARK: - The round's answers

    /// Hands the answers that came this round to their procedures, sends what they ask next,
    /// and starts the next procedure of a link whose procedure ended. Called at the end of
    /// every round that had answers.
    mutating func settleGATTProcedures(now t: Double, into outputs: inout HostOutputs) {
        // Why each link that closed this round did: the first failure that came on it. A link
        // can close and a new one open on the same handle in one round (a lost Disconnection
        // Complete): the old link's procedures must not go on on the new one.
        var closed: [UInt16: any Error] = [:]
        while !gattClient.arrived.isEmpty {
            let (id, result) = gattClient.arrived.removeFirst()
            guard let handle = gattClient.runningOn[id], let abandoned = gattClient.links[handle]?.running?.abandoned else { continue }
            if closed[handle] == nil, case let .failure(error) = result, links[handle] == nil || Self.says(error, closed: handle) {
                closed[handle] = error
            }
            // The procedure is changed where it is kept: a copy would make it copy its arrays.
            let step = gattClient.links.inPlace(handle) { procedures -> GATTProcedureStep<GATTProcedureResult>? in
                switch result {
                case let .success(.att(response)) where !abandoned:
                    procedures.running?.procedure.handle(response: response)
                case .success:
                    procedures.running?.procedure.handle(failure: abandoned ? CancellationError() : HostError.malformed("ATT: no response"))
                case let .failure(error):
                    procedures.running?.procedure.handle(failure: error)
                }
            } ?? nil
            guard let step else { continue }
            switch step {
            case let .send(pdu):
                if closed[handle] == nil {
                    attRequest(id, pdu, on: handle, now: t, into: &outputs)
                } else {
                    gattClient.arrived.append((id, .failure(HostError.noSuchConnection(handle))))
                }
            case let .finished(outcome):
                endGATTProcedure(id, abandoned: abandoned, on: handle, outcome, into: &outputs)
                if case let .failure(error) = outcome, let text = Self.violation(error), let index = links.index(forKey: handle) {
                    // A response that did not fit its request (a duplicate of an earlier one, a
                    // made-up range): later responses on this bearer cannot be trusted to answer
                    // the requests they seem to, so it closes as for an unmatched response.
                    let events = links.values[index].bearer.close(violation: text)
                    handleBearerEvents(events, on: handle, now: t, into: &outputs)
                }
                if let error = closed[handle] ?? (links[handle] == nil ? HostError.noSuchConnection(handle) : nil) {
                    // The link is gone: the procedures waiting on it fail as the running one did.
                    failGATTProcedures(waitingOn: handle, error, into: &outputs)
                    continue
                }
                startNextGATTProcedure(on: handle, now: t, into: &outputs)
            }
        }
    }

    // MARK: - Starting and ending

    /// Starts the link's next waiting procedure; procedures that need no request end at once
    /// and the next one starts.
    private mutating func startNextGATTProcedure(on handle: UInt16, now t: Double, into outputs: inout HostOutputs) {
        while let link = links[handle], var procedures = gattClient.links[handle], procedures.running == nil {
            guard !procedures.waiting.isEmpty else {
                gattClient.links[handle] = nil
                return
            }
            let (id, request) = procedures.waiting.removeFirst()
            var running = GATTClientProcedures.Running(id: id, procedure: request.procedure(mtu: link.bearer.mtu))
            let step = running.procedure.start()
            switch step {
            case let .finished(outcome):
                gattClient.links[handle] = procedures
                finish(id, outcome.map(HostReply.gatt), into: &outputs)
            case let .send(pdu):
                procedures.running = running
                gattClient.links[handle] = procedures
                gattClient.runningOn[id] = handle
                attRequest(id, pdu, on: handle, now: t, into: &outputs)
            }
        }
    }

    private mutating func endGATTProcedure(
        _ id: HostRequestID, abandoned: Bool, on handle: UInt16, _ outcome: Result<GATTProcedureResult, any Error>,
        into outputs: inout HostOutputs
    ) {
        gattClient.runningOn[id] = nil
        gattClient.links[handle]?.running = nil
        if !abandoned { finish(id, outcome.map(HostReply.gatt), into: &outputs) }
    }

    /// What a procedure's failure says the peer did wrong, when it is a protocol violation.
    private static func violation(_ error: any Error) -> String? {
        switch error as? GATTClientError {
        case let .protocolViolation(text)?: text
        case let .unexpectedResponse(pdu, request)?: "the device answered \(request.aName) with \(pdu.opcode.aName) that does not fit it"
        default: nil
        }
    }

    /// Whether `error` says link `handle` closed.
    private static func says(_ error: any Error, closed handle: UInt16) -> Bool {
        if case let .disconnected(closed, _)? = error as? HostError { closed == handle } else { false }
    }

    private mutating func failGATTProcedures(waitingOn handle: UInt16, _ error: any Error, into outputs: inout HostOutputs) {
        guard let procedures = gattClient.links.removeValue(forKey: handle) else { return }
        for waiting in procedures.waiting { finish(waiting.id, .failure(error), into: &outputs) }
    }
}
