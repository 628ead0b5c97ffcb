import BluetideBase
import BluetideHCI
import BluetideSupport

/// One open LE link: its L2CAP channels, its ATT bearer and the requests waiting on it.
struct HostLink: Sendable {
    var info: HostLinkInfo
    var router: L2CAPRouter
    var bearer: ATTBearer
    /// Our ATT requests in flight, by the bearer's transaction ID.
    var attRequests: [ATTTransactionID: HostRequestID] = [:]
    /// Disconnect requests waiting for the Disconnection Complete, each with its deadline (s).
    var disconnectRequests: [(request: HostRequestID, deadline: Double, timeout: Double)] = []
}

/// A sender waiting for the controller's ACL buffers; it gives up at `deadline` (seconds).
struct FlowWaiter: Sendable {
    let request: HostRequestID
    let deadline: Double
}

extension HostLinkInfo: CustomStringConvertible {
    /// `connection 0x40 to … (we are central)`.
    public var description: String { Self.describe(handle: handle, peer: peer, role: role) }

    static func describe(handle: UInt16, peer: BluetoothAddress, role: LinkRole) -> String {
        "connection 0x\(String(handle, radix: 16)) to \(peer) (\(role == .central ? "we are central" : "we are peripheral"))"
    }
}

extension HostCore {
    // MARK: - Incoming packets

    mutating func receive(_ packet: HCIPacket, now t: Double, into outputs: inout HostOutputs) {
        switch packet {
        case .event:
            receiveEvent(packet, now: t, into: &outputs)
        case let .acl(handle, boundary, _, data):
            // Data for a handle with no connection is dropped before reassembly, so a controller
            // cannot make the host keep partial PDUs for handles that will never complete.
            let handle = handle & 0x0FFF
            guard links.index(forKey: handle) != nil else { return }
            let output = reassembler.receive(handle: handle, boundary: boundary, data: data)
            for error in output.errors { HostLog.hci.debug("\(error)") }
            if let pdu = output.pdu { receivePDU(pdu.bytes, on: handle, now: t, into: &outputs) }
        default:
            HostLog.hci.debug("dropped an HCI packet a host does not take", metadata: ["packet": "\(packet)"])
        }
    }

    private mutating func receiveEvent(_ packet: HCIPacket, now t: Double, into outputs: inout HostOutputs) {
        // A known event with short parameters is dropped: a command it should have answered
        // fails at its timeout, naming the command.
        let decoded: HCIEvent?
        do {
            decoded = try HCIEvent(packet: packet)
        } catch {
            HostLog.hci.debug("dropped a malformed HCI event", metadata: ["error": "\(error)"])
            return
        }
        guard let event = decoded else { return }
        switch event {
        case .commandComplete, .commandStatus:
            apply(commands.handle(event, now: t), now: t, into: &outputs)
        case .numberOfCompletedPackets:
            flow?.handle(event, into: &outputs.packets)
            releaseFlowWaiters(into: &outputs)
        case let .disconnectionComplete(done) where done.status == .success:
            // Handles are 12 bits; BluetideHCI keeps the reserved top bits as sent.
            let handle = done.handle & 0x0FFF
            tearDown(handle, reason: done.reason, error: .disconnected(handle, reason: done.reason), into: &outputs)
        case .leMeta(let meta):
            receiveMeta(meta, now: t, into: &outputs)
        case .encryptionChange, .unknown:
            var actions = HostSecurity.Actions()
            security.receive(event, now: t, into: &actions)
            apply(actions, now: t, into: &outputs)
        default:
            break
        }
    }

    private mutating func receiveMeta(_ meta: LEMetaEvent, now t: Double, into outputs: inout HostOutputs) {
        switch meta {
        case let .connectionComplete(c):
            connectionCompleted(
                status: c.status, handle: c.handle, role: c.role, peer: c.peerAddress, interval: c.interval,
                latency: c.latency, timeout: c.supervisionTimeout, now: t, into: &outputs)
        case let .enhancedConnectionComplete(c):
            connectionCompleted(
                status: c.status, handle: c.handle, role: c.role, peer: c.peerAddress, interval: c.interval,
                latency: c.latency, timeout: c.supervisionTimeout, now: t, into: &outputs)
        case let .connectionUpdateComplete(update) where update.status == .success:
            links[update.handle & 0x0FFF]?.info.parameters = HostConnection.Parameters(
                intervalMilliseconds: Double(update.interval) * 1.25, latency: update.latency,
                supervisionTimeoutMilliseconds: Double(update.supervisionTimeout) * 10)
        case .advertisingReport, .extendedAdvertisingReport:
            guard !scanners.isEmpty else { return }
            for report in AdvertisementReport.reports(in: meta) { outputs.events.append(.advertisement(report)) }
        case .longTermKeyRequest:
            var actions = HostSecurity.Actions()
            security.receive(.leMeta(meta), now: t, into: &actions)
            apply(actions, now: t, into: &outputs)
        default:
            break
        }
    }

    // MARK: - Links

    /// Opens a link for a successful connection.
    mutating func openLink(_ info: HostLinkInfo, now t: Double, into outputs: inout HostOutputs) {
        if links[info.handle] != nil {
            // The controller reused an open handle, so the old link is gone (its Disconnection
            // Complete was lost): close it, or its waiters would hang on a link that no longer exists.
            tearDown(info.handle, reason: .unspecifiedError, error: .disconnected(info.handle, reason: .unspecifiedError), into: &outputs)
        }
        let bearer = ATTBearer(
            localMTU: configuration.localMTU, transactionTimeout: configuration.attTransactionTimeout, tracksSending: true)
        links[info.handle] = HostLink(info: info, router: L2CAPRouter(role: info.role), bearer: bearer)
        server.connect(info.handle)
        var actions = HostSecurity.Actions()
        security.linkOpened(info.handle, role: info.role, peer: info.peer, now: t, into: &actions)
        apply(actions, now: t, into: &outputs)
    }

    /// Closes a link: its requests fail with `error`, its disconnect requests finish with
    /// `reason`, its buffers and partial PDUs are dropped.
    mutating func tearDown(_ handle: UInt16, reason: HCIStatus, error: HostError, into outputs: inout HostOutputs) {
        guard var link = links.removeValue(forKey: handle) else { return }
        _ = link.bearer.close()
        outputs.events.append(.linkClosed(handle: handle, reason: reason, error: error))
        for request in link.attRequests.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            finish(request.value, .failure(error), into: &outputs)
        }
        for request in link.disconnectRequests { finish(request.request, .success(.disconnected(reason)), into: &outputs) }
        server.disconnect(handle)
        reassembler.disconnected(handle)
        if flow != nil {
            flow!.disconnected(handle)
            outputs.packets.append(contentsOf: flow!.sendQueued())
        }
        for waiter in flowWaiters.removeValue(forKey: handle) ?? [] { finish(waiter.request, .failure(error), into: &outputs) }
        releaseFlowWaiters(into: &outputs)
        var actions = HostSecurity.Actions()
        security.linkClosed(handle, error: error, into: &actions)
        apply(actions, now: 0, into: &outputs)
    }

    // MARK: - L2CAP and ATT

    private mutating func receivePDU(_ pdu: [UInt8], on handle: UInt16, now t: Double, into outputs: inout HostOutputs) {
        // The link is reached in place (`links[handle]?.…` copies or moves the whole link, with a
        // heap-allocated accessor frame, per PDU).
        guard let routing = links.inPlace(handle, { $0.router.receive(pdu) }) else { return }
        if let dropped = routing.dropped {
            HostLog.l2cap.debug("dropped an L2CAP PDU", metadata: ["handle": "\(handle)", "reason": "\(dropped)", "pdu": "\(pdu.logHex)"])
        }
        for frame in routing.outgoing { sendFrame(frame, on: handle, into: &outputs) }
        for event in routing.signalingEvents {
            if case let .connectionParameterUpdateRequested(p, accepted: true) = event {
                enqueueBackground(LEConnectionUpdate(
                    handle: handle,
                    connection: LEConnectionParameters(
                        intervalMin: p.intervalMin, intervalMax: p.intervalMax, maxLatency: p.peripheralLatency,
                        supervisionTimeout: p.supervisionTimeout)), now: t, into: &outputs)
            }
        }
        if let smp = routing.smp {
            var actions = HostSecurity.Actions()
            security.receiveSMP(smp, on: handle, now: t, into: &actions)
            apply(actions, now: t, into: &outputs)
        }
        guard let att = routing.att, let index = links.index(forKey: handle) else { return }
        let served = links.values[index].bearer.receive(att, now: t, server: &server, connection: handle)
        for event in served.server { outputs.events.append(.server(handle: handle, event)) }
        handleBearerEvents(served.bearer, on: handle, now: t, into: &outputs)
    }

    /// Fragments a frame for the controller; what credits allow goes out now, the rest waits.
    mutating func sendFrame(_ frame: L2CAPFrame, on handle: UInt16, into outputs: inout HostOutputs) {
        flow?.send(frame.bytes, on: handle, into: &outputs.packets)
    }

    mutating func handleBearerEvents(_ events: [ATTBearerEvent], on handle: UInt16, now t: Double, into outputs: inout HostOutputs) {
        for event in events {
            switch event {
            case let .send(bytes):
                sendFrame(L2CAPRouter.attFrame(bytes), on: handle, into: &outputs)
                attAwaitsSending = true
            case let .response(id, pdu):
                if let request = links[handle]?.attRequests.removeValue(forKey: id) {
                    finish(request, .success(.att(pdu)), into: &outputs)
                }
            case let .failed(id, error):
                if let request = links[handle]?.attRequests.removeValue(forKey: id) {
                    finish(request, .failure(error), into: &outputs)
                }
            case let .notification(valueHandle, value):
                outputs.events.append(.notification(handle: handle, valueHandle: valueHandle, value: value))
            case let .indication(valueHandle, value):
                outputs.events.append(.indication(handle: handle, valueHandle: valueHandle, value: value))
            case let .closed(error):
                guard let requests = links[handle]?.attRequests, !requests.isEmpty else { continue }
                links[handle]?.attRequests.removeAll()
                for request in requests.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                    finish(request.value, .failure(error), into: &outputs)
                }
            case let .ignored(bytes, reason):
                HostLog.att.debug("dropped an ATT PDU", metadata: ["handle": "\(handle)", "reason": "\(reason)", "pdu": "\(bytes.logHex)"])
            default:
                break
            }
        }
    }

    mutating func attRequest(_ request: HostRequestID, _ pdu: ATTPDU, on handle: UInt16, now t: Double, into outputs: inout HostOutputs) {
        guard links[handle] != nil else {
            return finish(request, .failure(HostError.noSuchConnection(handle)), into: &outputs)
        }
        let (id, events) = links[handle]!.bearer.enqueue(request: pdu, now: t)
        links[handle]!.attRequests[id] = request
        handleBearerEvents(events, on: handle, now: t, into: &outputs)
    }

    /// Sends an ATT command (Write Command) on a link at once. Throws when the link is not
    /// open, the bearer is closed or the PDU does not fit the MTU.
    public mutating func sendATTCommand(_ pdu: ATTPDU, on handle: UInt16, now: Duration, into outputs: inout HostOutputs) throws {
        if let stopped { throw stopped }
        guard let link = links[handle] else { throw HostError.noSuchConnection(handle) }
        let events = try link.bearer.send(command: pdu)
        handleBearerEvents(events, on: handle, now: now.hostSeconds, into: &outputs)
    }

    /// Sends a Write Command (`value` to attribute `attribute`) on a link at once — the data
    /// path of a sender: the L2CAP frame is written in one pre-sized buffer and fragmented
    /// straight into `outputs`, with no event arrays. Throws ``GATTClientError/valueTooLong(length:maximum:)``
    /// when the value exceeds MTU − 3, ``ATTBearerError/bearerClosed`` on a closed bearer.
    public mutating func sendWriteCommand(
        _ value: [UInt8], to attribute: UInt16, on handle: UInt16, into outputs: inout HostOutputs
    ) throws {
        if let stopped { throw stopped }
        guard let (isClosed, mtu) = links.inPlace(handle, { ($0.bearer.isClosed, $0.bearer.mtu) }) else {
            throw HostError.noSuchConnection(handle)
        }
        guard !isClosed else { throw ATTBearerError.bearerClosed }
        let maximum = mtu - 3
        guard value.count <= maximum else { throw GATTClientError.valueTooLong(length: value.count, maximum: maximum) }
        var frame = ByteWriter(capacity: L2CAPFrame.headerSize + 3 + value.count)
        frame.write(UInt16(3 + value.count))
        frame.write(L2CAPChannelID.att.rawValue)
        frame.write(ATTOpcode.writeCommand.rawValue)
        frame.write(attribute)
        frame.write(bytes: value)
        flow?.send(frame.bytes, on: handle, into: &outputs.packets)
    }

    // MARK: - Flow control back-pressure

    mutating func waitForBuffers(_ request: HostRequestID, on handle: UInt16, now t: Double, into outputs: inout HostOutputs) {
        guard links[handle] != nil else {
            return finish(request, .failure(HostError.noSuchConnection(handle)), into: &outputs)
        }
        guard let flow, flow.queuedFragments(on: handle) > Self.backlogLimit else {
            return finish(request, .success(.done), into: &outputs)
        }
        flowWaiters[handle, default: []].append(FlowWaiter(request: request, deadline: t + configuration.attTransactionTimeout))
    }

    /// Whether a sender on `handle` may go on without waiting for buffers.
    public func hasRoomForData(on handle: UInt16) -> Bool {
        guard let flow else { return true }
        return flow.queuedFragments(on: handle) <= Self.backlogLimit
    }

    mutating func releaseFlowWaiters(into outputs: inout HostOutputs) {
        guard !flowWaiters.isEmpty, let flow else { return }
        for handle in flowWaiters.keys.sorted() where flow.queuedFragments(on: handle) <= Self.backlogLimit {
            for waiter in flowWaiters.removeValue(forKey: handle) ?? [] { finish(waiter.request, .success(.done), into: &outputs) }
        }
    }

    /// Fails senders that waited longer than the ATT transaction timeout: a controller that
    /// stops returning ACL buffers (no Number Of Completed Packets) must not hang them.
    mutating func expireFlowWaiters(now t: Double, into outputs: inout HostOutputs) {
        for handle in flowWaiters.keys.sorted() {
            guard let waiters = flowWaiters[handle], waiters.contains(where: { $0.deadline <= t }) else { continue }
            let kept = waiters.filter { $0.deadline > t }
            flowWaiters[handle] = kept.isEmpty ? nil : kept
            let error = HostError.timedOut(
                "waiting for the controller's ACL buffers on connection 0x\(String(handle, radix: 16)) "
                    + "(no Number Of Completed Packets)", seconds: configuration.attTransactionTimeout)
            for waiter in waiters where waiter.deadline <= t { finish(waiter.request, .failure(error), into: &outputs) }
        }
    }

    // MARK: - Disconnect

    mutating func disconnect(
        _ request: HostRequestID, handle: UInt16, reason: HCIStatus, timeout: Double, now t: Double,
        into outputs: inout HostOutputs
    ) {
        guard links[handle] != nil else { return finish(request, .success(.done), into: &outputs) }
        let command = HCIDisconnect(handle: handle, reason: reason)
        enqueue(HCIDisconnect.opcode, command.parameterBytes, timeout: timeout,
                purpose: .disconnect(request, handle: handle, timeout: timeout), now: t, into: &outputs)
    }

    mutating func disconnectAnswered(
        _ request: HostRequestID, handle: UInt16, timeout: Double, _ result: Result<HCICommandResponse, HostError>,
        now t: Double, into outputs: inout HostOutputs
    ) {
        if case let .failure(error) = result { return finish(request, .failure(error), into: &outputs) }
        // Already closed (its Disconnection Complete came first): the connection holds the reason.
        guard links[handle] != nil else { return finish(request, .success(.done), into: &outputs) }
        links[handle]!.disconnectRequests.append((request, t + timeout, timeout))
    }

    mutating func expireDisconnectRequests(on handle: UInt16, now t: Double, into outputs: inout HostOutputs) {
        guard let link = links[handle], link.disconnectRequests.contains(where: { $0.deadline <= t }) else { return }
        links[handle]!.disconnectRequests.removeAll { $0.deadline <= t }
        for request in link.disconnectRequests where request.deadline <= t {
            finish(request.request, .failure(HostError.timedOut("disconnect of \(link.info)", seconds: request.timeout)), into: &outputs)
        }
    }
}
