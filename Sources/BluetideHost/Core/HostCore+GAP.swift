import BluetideBase
import BluetideHCI

/// One connect request.
struct ConnectRequest: Sendable {
    var id: HostRequestID
    var address: BluetoothAddress
    var parameters: LEConnectionParameters
    var timeout: Double
}

/// The controller's one connection attempt (controllers allow one at a time).
enum ConnectAttempt: Sendable {
    /// No attempt.
    case idle
    /// LE Create Connection is out; the request times out at `deadline` (s).
    case connecting(ConnectRequest, deadline: Double)
    /// A timed-out attempt is being cancelled: its LE Connection Complete (status 0x02, or a
    /// connection that won the race with the cancel) must not be taken for the next attempt's
    /// answer. `deadline` (s) bounds the wait once the cancel was accepted; nil while the
    /// cancel command itself is out.
    case cancelling(deadline: Double?)
}

extension HostCore {
    // MARK: - Central role

    mutating func connect(_ request: ConnectRequest, now t: Double, into outputs: inout HostOutputs) {
        switch connectAttempt {
        case .connecting:
            finish(request.id, .failure(HostError.connectInProgress), into: &outputs)
        case .cancelling:
            queuedConnects.append(request)
        case .idle:
            startConnect(request, now: t, into: &outputs)
        }
    }

    private mutating func startConnect(_ request: ConnectRequest, now t: Double, into outputs: inout HostOutputs) {
        // The attempt is recorded before the command goes out: a controller may report the
        // connection right after its Command Status.
        connectAttempt = .connecting(request, deadline: t + request.timeout)
        HostLog.gap.debug("LE Create Connection: waiting for the device to answer", metadata: [
            "address": "\(request.address)", "timeout": "\((request.timeout * 10).rounded() / 10) s"])
        let command = LECreateConnection(
            peerAddress: request.address, ownAddressType: configuration.ownAddressType, connection: request.parameters)
        enqueue(LECreateConnection.opcode, command.parameterBytes, purpose: .createConnection(request.id), now: t, into: &outputs)
    }

    /// After a cancelled attempt settled: the first queued connect goes ahead, later ones find
    /// it in progress (as they would have without the cancel).
    mutating func startQueuedConnect(now t: Double, into outputs: inout HostOutputs) {
        guard case .idle = connectAttempt, !queuedConnects.isEmpty else { return }
        let queued = queuedConnects
        queuedConnects.removeAll()
        startConnect(queued[0], now: t, into: &outputs)
        for later in queued.dropFirst() { finish(later.id, .failure(HostError.connectInProgress), into: &outputs) }
    }

    mutating func expireConnectAttempt(now t: Double, into outputs: inout HostOutputs) {
        switch connectAttempt {
        case let .connecting(request, deadline) where t >= deadline:
            HostLog.gap.debug("no answer to LE Create Connection: cancelling the attempt", metadata: [
                "address": "\(request.address)", "timeout": "\((request.timeout * 10).rounded() / 10) s"])
            finish(request.id, .failure(HostError.connectTimedOut(request.address, seconds: request.timeout)), into: &outputs)
            // Ask the controller to stop, and wait (bounded) for the Connection Complete that ends it.
            connectAttempt = .cancelling(deadline: nil)
            enqueue(LECreateConnectionCancel.opcode, [], timeout: Self.cancelSettleTime, purpose: .cancelConnection, now: t, into: &outputs)
        case let .cancelling(deadline?) where t >= deadline:
            HostLog.gap.debug("the controller did not end the cancelled connection attempt; going on without it")
            // A controller that never answers the cancel (Bumble, with stale state) is tolerated.
            connectAttempt = .idle
            startQueuedConnect(now: t, into: &outputs)
        default:
            break
        }
    }

    mutating func cancelAnswered(succeeded: Bool, now t: Double, into outputs: inout HostOutputs) {
        guard case .cancelling = connectAttempt else { return }
        if succeeded {
            connectAttempt = .cancelling(deadline: t + Self.cancelSettleTime)
        } else {
            connectAttempt = .idle
            startQueuedConnect(now: t, into: &outputs)
        }
    }

    mutating func connectionCompleted(
        status: HCIStatus, handle: UInt16, role: HCIRole, peer: BluetoothAddress, interval: UInt16, latency: UInt16,
        timeout: UInt16, now t: Double, into outputs: inout HostOutputs
    ) {
        let handle = handle & 0x0FFF
        guard role == .central || role == .peripheral else {
            // Neither central nor peripheral: a controller fault nobody could use. Ask the
            // controller to drop the link rather than surface it (or let it answer a connect).
            if status == .success { enqueueBackground(HCIDisconnect(handle: handle, reason: .remoteUserTerminated), now: t, into: &outputs) }
            return
        }
        let isCentral = role == .central
        let info = HostLinkInfo(
            handle: handle, peer: peer, role: isCentral ? .central : .peripheral,
            parameters: HostConnection.Parameters(
                intervalMilliseconds: Double(interval) * 1.25, latency: latency,
                supervisionTimeoutMilliseconds: Double(timeout) * 10))
        guard isCentral else {
            guard status == .success else { return }
            openLink(info, now: t, into: &outputs)
            outputs.events.append(.linkOpened(info))
            return
        }
        switch connectAttempt {
        case .cancelling:
            // The end of a cancelled attempt (status 0x02), or a connection that won the race
            // with the cancel: nobody waits for it.
            connectAttempt = .idle
            if status == .success { enqueueBackground(HCIDisconnect(handle: handle, reason: .remoteUserTerminated), now: t, into: &outputs) }
            startQueuedConnect(now: t, into: &outputs)
        case let .connecting(request, _):
            connectAttempt = .idle
            guard status == .success else {
                return finish(request.id, .failure(HostError.connectFailed(request.address, status: status)), into: &outputs)
            }
            openLink(info, now: t, into: &outputs)
            outputs.events.append(.linkOpened(info))
            finish(request.id, .success(.link(info)), into: &outputs)
        case .idle:
            guard status == .success else { return }
            // A connection that completed after its attempt timed out: nobody wants it.
            openLink(info, now: t, into: &outputs)
            enqueueBackground(HCIDisconnect(handle: handle, reason: .remoteUserTerminated), now: t, into: &outputs)
        }
    }

    // MARK: - Scanning

    mutating func startScan(_ request: HostRequestID, scanner: Int, active: Bool, now t: Double, into outputs: inout HostOutputs) {
        scanners.insert(scanner)
        guard !scanning else { return finish(request, .success(.done), into: &outputs) }
        scanning = true
        startProcedure(request, [
            CommandStep(LESetScanParameters(active: active, ownAddressType: configuration.ownAddressType)),
            CommandStep(LESetScanEnable(enable: true, filterDuplicates: false)),
        ], scanner: scanner, now: t, into: &outputs)
    }

    /// Several scans share one controller scan; it stops when the last one ends.
    mutating func stopScan(_ scanner: Int, now t: Double, into outputs: inout HostOutputs) {
        guard scanners.remove(scanner) != nil, scanners.isEmpty, scanning else { return }
        scanning = false
        enqueueBackground(LESetScanEnable(enable: false), now: t, into: &outputs)
    }

    // MARK: - Peripheral role

    mutating func startAdvertising(
        _ request: HostRequestID, data: [UInt8], scanResponse: [UInt8], intervalUnits: UInt16, now t: Double,
        into outputs: inout HostOutputs
    ) {
        startProcedure(request, [
            CommandStep(LESetAdvertisingEnable(enable: false), tolerant: true),
            CommandStep(LESetAdvertisingParameters(
                intervalMin: intervalUnits, intervalMax: intervalUnits, ownAddressType: configuration.ownAddressType)),
            CommandStep(LESetAdvertisingData(data: data)),
            // Always set: controllers keep the previous scan response, which would otherwise go on
            // answering scans after advertising without one.
            CommandStep(LESetScanResponseData(data: scanResponse)),
            CommandStep(LESetAdvertisingEnable(enable: true)),
        ], scanner: nil, now: t, into: &outputs)
    }

    // MARK: - Local GATT server

    /// Replaces the local server's services (GAP and GATT are kept). Open links stay up; their
    /// subscriptions are cleared and clients that subscribed to Service Changed are told.
    public mutating func setServices(_ services: [GATTServiceDefinition], now: Duration, into outputs: inout HostOutputs) {
        replaceServer(with: GATTServer(
            deviceName: configuration.deviceName, appearance: configuration.appearance, services: services), now: now, into: &outputs)
    }

    /// Replaces the local server's whole database with `database` as laid out by the caller
    /// (``GATTDatabase/init(placing:)``: no GAP or GATT service of the host's is added). Open
    /// links are treated as by ``setServices(_:now:into:)``.
    public mutating func setDatabase(_ database: GATTDatabase, now: Duration, into outputs: inout HostOutputs) {
        replaceServer(with: GATTServer(database: database), now: now, into: &outputs)
    }

    private mutating func replaceServer(with replacement: GATTServer, now: Duration, into outputs: inout HostOutputs) {
        var fresh = replacement
        fresh.localMTU = configuration.localMTU
        let previous = server
        let handles = links.keys.sorted()
        for handle in handles { fresh.connect(handle) }
        // Keep who asked for Service Changed indications, so they can be told.
        if let changed = previous.database.valueHandle(of: .serviceChanged, in: .genericAttribute),
           let newChanged = fresh.database.valueHandle(of: .serviceChanged, in: .genericAttribute),
           let cccd = fresh.database.attributes(in: newChanged &+ 1, newChanged &+ 2)
               .first(where: { $0.type == .clientCharacteristicConfiguration })?.handle {
            for handle in handles where previous.configuration(of: changed, for: handle).contains(.indication) {
                _ = fresh.handle(.writeRequest(handle: cccd, value: [0x02, 0x00]), from: handle, mtu: links[handle]?.bearer.mtu ?? 23)
            }
        }
        server = fresh
        adoptAuthorizations(from: previous, now: now.hostSeconds, into: &outputs)
        push(server.indicateServiceChanged(), now: now.hostSeconds, into: &outputs)
    }

    /// Sets a local value and notifies (or indicates to) every subscribed client. Returns how
    /// many clients it went to.
    @discardableResult
    public mutating func updateValue(_ value: [UInt8], at handle: UInt16, now: Duration, into outputs: inout HostOutputs) -> Int {
        server.setValue(value, at: handle)
        var pushes = server.notify(valueHandle: handle, value: value)
        pushes += server.indicate(valueHandle: handle, value: value)
        push(pushes, now: now.hostSeconds, into: &outputs)
        return Set(pushes.map(\.connection)).count
    }

    /// Sends `value` as a notification of `handle` on every open link, subscribed or not, and
    /// stores it: what a device does that notifies on an attribute without a CCCD (a clone of
    /// one). Returns how many links it went to.
    @discardableResult
    public mutating func notifyEveryLink(_ value: [UInt8], at handle: UInt16, now: Duration, into outputs: inout HostOutputs) -> Int {
        server.setValue(value, at: handle)
        let pushes = links.keys.sorted().map { GATTServerPush(connection: $0, kind: .notification, handle: handle, value: value) }
        push(pushes, now: now.hostSeconds, into: &outputs)
        return pushes.count
    }

    private mutating func push(_ pushes: [GATTServerPush], now t: Double, into outputs: inout HostOutputs) {
        for push in pushes {
            guard let events = links[push.connection]?.bearer.send(push, now: t) else { continue }
            handleBearerEvents(events, on: push.connection, now: t, into: &outputs)
        }
    }
}
