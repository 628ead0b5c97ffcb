import BluetideBase

/// Identifies one request (or indication) queued on an ``ATTBearer``, so its answer can be
/// matched by the owner.
public struct ATTTransactionID: Hashable, Sendable, CustomStringConvertible {
    /// Sequence number, unique per bearer.
    public let rawValue: UInt64
    /// Wraps a sequence number.
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// `#12` style text.
    public var description: String { "#\(rawValue)" }
}

/// Why a bearer could not complete a transaction.
public enum ATTBearerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No answer within the 30 s transaction timeout; the bearer is now closed.
    case timedOut
    /// The bearer is closed (an earlier timeout, or the link went down): nothing more is sent.
    case bearerClosed
    /// The PDU is longer than the current ATT MTU.
    case pduTooLong(length: Int, mtu: Int)
    /// The PDU is not of the kind the call expects (e.g. a response passed as a request).
    case wrongKind(ATTOpcode)
    /// The peer answered our request, but with a response we cannot use (longer than the MTU,
    /// or not decodable): the request fails saying what came, rather than timing out.
    case invalidResponse(ATTOpcode, length: Int, problem: String)
    /// The peer broke the request/response sequence: a response that answers no request of
    /// ours, or answers a different one. The bearer closes (as BlueZ does), since no later
    /// response could be trusted to answer the request it seems to; the text says what came.
    case protocolViolation(String)

    /// A sentence for logs and CLI output.
    public var description: String {
        switch self {
        case .timedOut: "ATT transaction timed out (30 s); the bearer is closed"
        case .bearerClosed: "ATT bearer closed"
        case let .pduTooLong(length, mtu): "ATT PDU of \(length) bytes exceeds the MTU of \(mtu)"
        case let .wrongKind(op): "ATT opcode \(op) cannot be sent this way"
        case let .invalidResponse(op, length, problem): "the device answered with \(op) of \(length) bytes, \(problem)"
        case let .protocolViolation(text): "protocol error: \(text)"
        }
    }
}

/// What an ``ATTBearer`` asks its owner to do or tells it.
public enum ATTBearerEvent: Equatable, Sendable {
    /// Send these bytes as one ATT PDU (L2CAP CID 0x0004).
    case send([UInt8])
    /// The answer to our request (a response or an Error Response).
    case response(ATTTransactionID, ATTPDU)
    /// Our request or indication failed without an answer.
    case failed(ATTTransactionID, ATTBearerError)
    /// The peer's client sent a request for our server; answer it with ``ATTBearer/respond(_:)``.
    case serverRequest(ATTPDU)
    /// The peer's client sent a command (Write Command, Signed Write Command) for our server.
    case serverCommand(ATTPDU)
    /// The peer's server notified a value.
    case notification(handle: UInt16, value: [UInt8])
    /// The peer's server indicated a value; the confirmation has already been queued in `send`.
    case indication(handle: UInt16, value: [UInt8])
    /// The peer confirmed our indication.
    case indicationConfirmed(ATTTransactionID)
    /// The effective ATT MTU changed (octets).
    case mtuChanged(Int)
    /// An incoming PDU was not acted on.
    case ignored([UInt8], reason: ATTIgnoreReason)
    /// The bearer closed after a transaction timeout; no further PDU is sent or accepted.
    case closed(ATTBearerError)
}

/// Why an incoming PDU was dropped.
public enum ATTIgnoreReason: Equatable, Sendable {
    /// It could not be decoded.
    case malformed(DecodingError)
    /// It is longer than the ATT MTU.
    case tooLong(mtu: Int)
    /// A response or confirmation that answers nothing outstanding.
    case unexpected
    /// A request while the previous one has not been answered yet.
    case requestWhileBusy
    /// A command, notification or other PDU we do not handle.
    case unsupported
    /// The bearer is closed.
    case closed
}

/// The ATT bearer of one connection, in both roles at once (Core Vol 3 Part F 3.3): at most one
/// outstanding request per direction (further ones are queued), responses matched to requests,
/// one outstanding indication, the 30 s transaction timeout and the MTU exchange.
///
/// Pure state machine: bytes and time (`now`, seconds on any monotonic clock) come in, events
/// come out. Exchange MTU requests and unknown requests are answered here; every other request
/// is handed to the owner as ``ATTBearerEvent/serverRequest(_:)``.
public struct ATTBearer: Sendable {
    /// The default ATT MTU on LE (octets).
    public static let defaultMTU = 23
    /// The largest ATT MTU Bluetide offers (octets): a 512-octet value plus the 5-octet Prepare Write header.
    public static let maximumMTU = 517

    /// The MTU we offer and accept (octets, 23...517).
    public let localMTU: Int
    /// The transaction timeout, seconds.
    public let transactionTimeout: Double
    /// The effective ATT MTU (octets): 23 until an exchange, then the smaller of both sides.
    public private(set) var mtu: Int = ATTBearer.defaultMTU
    /// True once an MTU exchange has completed (it happens at most once per connection).
    public private(set) var mtuExchanged = false
    /// Set when the bearer closed (timeout or link loss): nothing more is sent.
    public private(set) var closedReason: ATTBearerError?

    private struct Pending: Sendable {
        var id: ATTTransactionID
        var pdu: ATTPDU
        var deadline: Double
        /// Whether the request's bytes have left this host (see ``tracksSending``): a response
        /// read before then cannot be its answer.
        var sent: Bool
    }

    /// Whether the owner reports when its outputs have been written (``outputsSent()``). When
    /// it does, a response that comes before the outstanding request has left (one read in
    /// the same batch as the answer that released the request: a second answer to an earlier
    /// request) is a protocol violation; otherwise every request counts as sent at once.
    public let tracksSending: Bool

    private var nextID: UInt64 = 1
    private var requestQueue: [(ATTTransactionID, ATTPDU)] = []
    private var outstandingRequest: Pending?
    private var indicationQueue: [(ATTTransactionID, ATTPDU)] = []
    private var outstandingIndication: Pending?
    private var serverRequestInProgress: ATTOpcode?
    /// The receive MTU our Exchange MTU Request offered; the effective MTU is the smaller of it
    /// and the server's, which is what the peer computes too.
    private var offeredMTU: Int?

    /// - Parameters:
    ///   - localMTU: our receive MTU, clamped to 23...517.
    ///   - transactionTimeout: seconds to wait for a response or confirmation (30 in the spec).
    ///   - tracksSending: the owner calls ``outputsSent()`` once the PDUs it was given are written.
    public init(localMTU: Int = ATTBearer.maximumMTU, transactionTimeout: Double = 30, tracksSending: Bool = false) {
        self.localMTU = min(max(localMTU, Self.defaultMTU), Self.maximumMTU)
        self.transactionTimeout = transactionTimeout
        self.tracksSending = tracksSending
    }

    /// The PDUs handed out so far have been written to the link: the outstanding request can
    /// now be answered.
    public mutating func outputsSent() {
        if outstandingRequest?.sent == false { outstandingRequest?.sent = true }
    }

    /// True once the bearer has closed.
    public var isClosed: Bool { closedReason != nil }

    /// The earliest time (seconds) at which ``tick(now:)`` has something to time out.
    public var nextDeadline: Double? {
        switch (outstandingRequest?.deadline, outstandingIndication?.deadline) {
        case let (request?, indication?): min(request, indication)
        case let (request?, nil): request
        case let (nil, indication?): indication
        case (nil, nil): nil
        }
    }

    /// Number of our requests waiting behind the outstanding one.
    public var queuedRequestCount: Int { requestQueue.count }

    private mutating func allocateID() -> ATTTransactionID {
        defer { nextID &+= 1 }
        return ATTTransactionID(rawValue: nextID)
    }

    // MARK: Client side

    /// Queues a request to the peer's server. It is sent at once when nothing is outstanding.
    ///
    /// An Exchange MTU Request offers at most ``localMTU`` (a larger offer is lowered to it): the
    /// peer takes the offer as our receive MTU, so offering more than we accept would let it
    /// send PDUs this bearer drops as too long.
    public mutating func enqueue(request: ATTPDU, now: Double) -> (ATTTransactionID, [ATTBearerEvent]) {
        var request = request
        if case let .exchangeMTURequest(clientMTU) = request {
            let offer = min(max(Int(clientMTU), Self.defaultMTU), localMTU)
            request = .exchangeMTURequest(clientMTU: UInt16(offer))
            offeredMTU = offer
        }
        let id = allocateID()
        if let closedReason { return (id, [.failed(id, closedReason == .timedOut ? .bearerClosed : closedReason)]) }
        guard request.opcode.kind == .request else { return (id, [.failed(id, .wrongKind(request.opcode))]) }
        let length = request.bytes.count
        guard length <= mtu else { return (id, [.failed(id, .pduTooLong(length: length, mtu: mtu))]) }
        requestQueue.append((id, request))
        return (id, pumpRequests(now: now))
    }

    /// Builds an Exchange MTU Request offering ``localMTU``.
    public mutating func exchangeMTU(now: Double) -> (ATTTransactionID, [ATTBearerEvent]) {
        enqueue(request: .exchangeMTURequest(clientMTU: UInt16(localMTU)), now: now)
    }

    /// Sends a command (Write Command or Signed Write Command) at once; commands have no answer.
    public func send(command: ATTPDU) throws(ATTBearerError) -> [ATTBearerEvent] {
        if closedReason != nil { throw .bearerClosed }
        guard command.opcode.kind == .command else { throw .wrongKind(command.opcode) }
        let bytes = command.bytes
        guard bytes.count <= mtu else { throw .pduTooLong(length: bytes.count, mtu: mtu) }
        return [.send(bytes)]
    }

    private mutating func pumpRequests(now: Double) -> [ATTBearerEvent] {
        guard outstandingRequest == nil, !requestQueue.isEmpty else { return [] }
        let (id, pdu) = requestQueue.removeFirst()
        outstandingRequest = Pending(id: id, pdu: pdu, deadline: now + transactionTimeout, sent: !tracksSending)
        return [.send(pdu.bytes)]
    }

    // MARK: Server side

    /// Answers the request handed over in ``ATTBearerEvent/serverRequest(_:)``. Value responses
    /// longer than the MTU are cut to it; other responses are sent as built.
    public mutating func respond(_ response: ATTPDU) -> [ATTBearerEvent] {
        guard closedReason == nil, serverRequestInProgress != nil else { return [] }
        serverRequestInProgress = nil
        var bytes = response.bytes
        switch response {
        case .readResponse, .readBlobResponse, .readMultipleResponse:
            if bytes.count > mtu { bytes = Array(bytes.prefix(mtu)) }
        default: break
        }
        return [.send(bytes)]
    }

    /// Sends a notification, the value cut to MTU − 3 octets.
    public func notify(handle: UInt16, value: [UInt8]) throws(ATTBearerError) -> [ATTBearerEvent] {
        if closedReason != nil { throw .bearerClosed }
        return [.send(ATTPDU.handleValueNotification(handle: handle, value: Array(value.prefix(mtu - 3))).bytes)]
    }

    /// Queues an indication (value cut to MTU − 3 octets); one is outstanding at a time until
    /// the peer confirms it.
    public mutating func indicate(handle: UInt16, value: [UInt8], now: Double) -> (ATTTransactionID, [ATTBearerEvent]) {
        let id = allocateID()
        if closedReason != nil { return (id, [.failed(id, .bearerClosed)]) }
        indicationQueue.append((id, .handleValueIndication(handle: handle, value: Array(value.prefix(mtu - 3)))))
        return (id, pumpIndications(now: now))
    }

    private mutating func pumpIndications(now: Double) -> [ATTBearerEvent] {
        guard outstandingIndication == nil, !indicationQueue.isEmpty else { return [] }
        let (id, pdu) = indicationQueue.removeFirst()
        outstandingIndication = Pending(id: id, pdu: pdu, deadline: now + transactionTimeout, sent: true)
        return [.send(pdu.bytes)]
    }

    // MARK: Incoming

    /// Handles one incoming ATT PDU (the payload of an L2CAP frame on CID 0x0004).
    public mutating func receive(_ bytes: [UInt8], now: Double) -> [ATTBearerEvent] {
        guard closedReason == nil else { return [.ignored(bytes, reason: .closed)] }
        guard let first = bytes.first else {
            return [.ignored(bytes, reason: .malformed(.truncated("ATT opcode", needed: 1, present: 0, at: 0)))]
        }
        let opcode = ATTOpcode(first)
        if bytes.count > mtu {
            if opcode.kind == .request { return [.send(ATTPDU.errorResponse(requestOpcode: opcode, handle: 0, error: .invalidPDU).bytes)] }
            if let failed = failRequest(answeredBy: opcode, bytes, "longer than the ATT MTU of \(mtu)", now: now) { return failed }
            if opcode.kind == .response { return violated(by: opcode, bytes, now: now) }
            return [.ignored(bytes, reason: .tooLong(mtu: mtu))]
        }
        let pdu: ATTPDU
        do {
            pdu = try ATTPDU(bytes: bytes)
        } catch {
            if opcode.kind == .request {
                return [.send(ATTPDU.errorResponse(requestOpcode: opcode, handle: 0, error: .invalidPDU).bytes)]
            }
            if let failed = failRequest(answeredBy: opcode, bytes, "which does not decode: \(error)", now: now) { return failed }
            if opcode.kind == .response { return violated(by: opcode, bytes, now: now) }
            return [.ignored(bytes, reason: .malformed(error))]
        }
        switch opcode.kind {
        case .request: return receiveRequest(pdu, bytes)
        case .command:
            switch pdu {
            case .writeCommand, .signedWriteCommand: return [.serverCommand(pdu)]
            default: return [.ignored(bytes, reason: .unsupported)]
            }
        case .response: return receiveResponse(pdu, bytes, now: now)
        case .notification:
            switch pdu {
            case let .handleValueNotification(handle, value): return [.notification(handle: handle, value: value)]
            case let .multipleHandleValueNotification(entries): return entries.map { .notification(handle: $0.handle, value: $0.value) }
            default: return [.ignored(bytes, reason: .unsupported)]
            }
        case .indication:
            if case let .handleValueIndication(handle, value) = pdu {
                return [.indication(handle: handle, value: value), .send(ATTPDU.handleValueConfirmation.bytes)]
            }
            return [.ignored(bytes, reason: .unsupported)]
        case .confirmation:
            guard let pending = outstandingIndication else { return [.ignored(bytes, reason: .unexpected)] }
            outstandingIndication = nil
            return [.indicationConfirmed(pending.id)] + pumpIndications(now: now)
        }
    }

    private mutating func receiveRequest(_ pdu: ATTPDU, _ bytes: [UInt8]) -> [ATTBearerEvent] {
        if case let .exchangeMTURequest(clientMTU) = pdu {
            var events: [ATTBearerEvent] = [.send(ATTPDU.exchangeMTUResponse(serverMTU: UInt16(localMTU)).bytes)]
            if !mtuExchanged {
                mtuExchanged = true
                let new = min(localMTU, max(Self.defaultMTU, Int(clientMTU)))
                if new != mtu {
                    mtu = new
                    events.append(.mtuChanged(new))
                }
            }
            return events
        }
        if case let .unknown(opcode, _) = pdu {
            return [.send(ATTPDU.errorResponse(requestOpcode: opcode, handle: 0, error: .requestNotSupported).bytes)]
        }
        if serverRequestInProgress != nil { return [.ignored(bytes, reason: .requestWhileBusy)] }
        serverRequestInProgress = pdu.opcode
        return [.serverRequest(pdu)]
    }

    /// A response (or Error Response) to our outstanding request that cannot be used: the
    /// request fails with what came, and the next queued request goes out. Nil when `opcode`
    /// answers no outstanding request (then the PDU is only ignored).
    private mutating func failRequest(answeredBy opcode: ATTOpcode, _ bytes: [UInt8], _ problem: String, now: Double) -> [ATTBearerEvent]? {
        guard opcode.kind == .response, let pending = outstandingRequest,
              opcode == .errorResponse || pending.pdu.opcode.responseOpcode == opcode else { return nil }
        outstandingRequest = nil
        return [.failed(pending.id, .invalidResponse(opcode, length: bytes.count, problem: problem))] + pumpRequests(now: now)
    }

    private mutating func receiveResponse(_ pdu: ATTPDU, _ bytes: [UInt8], now: Double) -> [ATTBearerEvent] {
        guard let pending = outstandingRequest else { return violated(by: pdu.opcode, bytes, now: now) }
        let matches: Bool
        if case let .errorResponse(requestOpcode, _, _) = pdu {
            matches = requestOpcode == pending.pdu.opcode
        } else {
            matches = pending.pdu.opcode.responseOpcode == pdu.opcode
        }
        guard matches else { return violated(by: pdu.opcode, bytes, now: now) }
        guard pending.sent else {
            return close(violation: "the device sent \(pdu.opcode.aName) before our \(pending.pdu.opcode.name) had left: a second answer to an earlier request")
        }
        outstandingRequest = nil
        var events: [ATTBearerEvent] = []
        if case let .exchangeMTUResponse(serverMTU) = pdu, !mtuExchanged {
            mtuExchanged = true
            let new = min(offeredMTU ?? localMTU, max(Self.defaultMTU, Int(serverMTU)))
            if new != mtu {
                mtu = new
                events.append(.mtuChanged(new))
            }
        }
        events.append(.response(pending.id, pdu))
        return events + pumpRequests(now: now)
    }

    /// A response (`opcode`, in `bytes`) that answers nothing outstanding, or not the request
    /// that is: the outstanding request fails and the bearer closes with
    /// ``ATTBearerError/protocolViolation(_:)`` saying what came.
    private mutating func violated(by opcode: ATTOpcode, _ bytes: [UInt8], now: Double) -> [ATTBearerEvent] {
        var what = opcode.name
        if opcode == .errorResponse, bytes.count >= 2 { what += " for \(ATTOpcode(bytes[1]).aName)" }
        let text = if let pending = outstandingRequest {
            "the device answered \(pending.pdu.opcode.aName) with \(ATTOpcode.article(what)) \(what)"
        } else {
            "the device sent \(ATTOpcode.article(what)) \(what) that answers no request"
        }
        return close(violation: text)
    }

    /// Closes the bearer because the peer broke the protocol (``ATTBearerError/protocolViolation(_:)``
    /// with `text`): every transaction fails with it and nothing more is sent or accepted. The
    /// GATT client calls this too when a response does not fit the request it answers (handles
    /// outside the range asked for, backwards ranges).
    public mutating func close(violation text: String) -> [ATTBearerEvent] {
        guard closedReason == nil else { return [] }
        let error = ATTBearerError.protocolViolation(text)
        var events: [ATTBearerEvent] = []
        if let r = outstandingRequest { events.append(.failed(r.id, error)) }
        if let i = outstandingIndication { events.append(.failed(i.id, error)) }
        outstandingRequest = nil
        outstandingIndication = nil
        events += failQueued(error)
        closedReason = error
        events.append(.closed(error))
        return events
    }

    // MARK: Time and teardown

    /// Times out a request or indication whose 30 s have passed. After a timeout the bearer is
    /// closed (Core Vol 3 Part F 3.3.3): every queued transaction fails and nothing more is sent.
    public mutating func tick(now: Double) -> [ATTBearerEvent] {
        guard closedReason == nil else { return [] }
        let expired = [outstandingRequest, outstandingIndication].compactMap { $0 }.filter { $0.deadline <= now }
        guard !expired.isEmpty else { return [] }
        var events: [ATTBearerEvent] = []
        for p in expired { events.append(.failed(p.id, .timedOut)) }
        if let r = outstandingRequest, r.deadline > now { events.append(.failed(r.id, .bearerClosed)) }
        if let i = outstandingIndication, i.deadline > now { events.append(.failed(i.id, .bearerClosed)) }
        outstandingRequest = nil
        outstandingIndication = nil
        events += failQueued(.bearerClosed)
        closedReason = .timedOut
        events.append(.closed(.timedOut))
        return events
    }

    /// Closes the bearer because the link went down: every transaction fails with `bearerClosed`.
    public mutating func close() -> [ATTBearerEvent] {
        guard closedReason == nil else { return [] }
        var events: [ATTBearerEvent] = []
        if let r = outstandingRequest { events.append(.failed(r.id, .bearerClosed)) }
        if let i = outstandingIndication { events.append(.failed(i.id, .bearerClosed)) }
        outstandingRequest = nil
        outstandingIndication = nil
        events += failQueued(.bearerClosed)
        closedReason = .bearerClosed
        return events
    }

    private mutating func failQueued(_ error: ATTBearerError) -> [ATTBearerEvent] {
        let events = (requestQueue + indicationQueue).map { ATTBearerEvent.failed($0.0, error) }
        requestQueue = []
        indicationQueue = []
        return events
    }
}
