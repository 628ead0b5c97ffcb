import BluetideBase
import BluetideHCI

// What happens "in the air": advertising, scanning, connecting, ACL forwarding, disconnecting.
extension LinkCore {
    /// Advertising intervals below this (20 ms, the spec minimum) are raised to it.
    static let minimumAdvertisingInterval: UInt32 = 0x0020
    /// Most advertising data carried by one extended report; longer data is split.
    static let extendedReportDataLimit = 229
    /// Packets waiting for a scanner's host beyond which its advertising reports are dropped.
    static let reportBacklogLimit: UInt64 = 64
    /// How long a scanner listens after LE Set Scan Enable before it reports anything: only
    /// advertising events from then on reach it. A real controller's first report comes
    /// milliseconds after Command Complete at the earliest (its radio starts, then it has to
    /// hear a whole PDU on the channel it listens to), and hosts count on that: Linux marks its
    /// discovery started only after handling Command Complete and drops reports that come
    /// before.
    static let scanWarmUp: Duration = .milliseconds(10)
    /// How long duplicate filtering suppresses a report after it was sent. A real controller's
    /// filter is a small table whose entries are overwritten and age out (controllers that
    /// never report a device again are the exception Linux keeps a quirk for, restarting their
    /// scans), so a host that missed a device's first report (Linux before its discovery is
    /// marked started) still sees it again during the scan.
    static let duplicateFilterMemory: Duration = .seconds(1)

    /// Schedules the set's next advertising event one interval from now; it only happens while
    /// the set keeps this generation (it was not stopped or restarted meanwhile).
    mutating func scheduleAdvertising(_ id: Int, set key: UInt8, generation: Int) {
        guard let set = controllers[id]?.sets[key] else { return }
        let units = min(max(set.intervalUnits, Self.minimumAdvertisingInterval), 0xFF_FFFF)
        schedule(.advertise(controller: id, set: key, generation: generation), after: .microseconds(Int64(units) * 625))
    }

    /// One timer tick; false once the advertising it belongs to has stopped.
    mutating func advertisingTick(_ id: Int, set key: UInt8, generation: Int) -> Bool {
        guard let set = controllers[id]?.sets[key], set.enabled, set.generation == generation else { return false }
        advertisingEvent(id, set: key)
        return true
    }

    /// Starts a set: a new generation, one advertising event now, then the timer.
    mutating func startAdvertising(_ id: Int, set key: UInt8) {
        guard controllers[id]?.sets[key] != nil else { return }
        let generation = (controllers[id]?.generationCounter ?? 0) &+ 1
        controllers[id]?.generationCounter = generation
        controllers[id]?.sets[key]?.generation = generation
        controllers[id]?.sets[key]?.enabled = true
        advertisingEvent(id, set: key)
        if controllers[id]?.sets[key]?.enabled == true { scheduleAdvertising(id, set: key, generation: generation) }
    }

    /// Stops a set (its scheduled repeat is dropped).
    mutating func stopAdvertising(_ id: Int, set key: UInt8) {
        controllers[id]?.sets[key]?.enabled = false
        timeline.removeAll { action in
            if case let .advertise(controller, set, _) = action { return controller == id && set == key }
            return false
        }
    }

    /// The address a set advertises from, when it is on.
    func advertisingAddress(_ id: Int, set key: UInt8) -> BluetoothAddress? {
        guard let state = controllers[id], state.sets[key]?.enabled == true else { return nil }
        return state.address(ofSet: key)
    }

    /// One advertising event of a set: a matching initiator connects, otherwise every
    /// scanning controller gets its reports.
    mutating func advertisingEvent(_ advertiser: Int, set key: UInt8) {
        guard let set = controllers[advertiser]?.sets[key], let address = advertisingAddress(advertiser, set: key) else { return }
        if set.isConnectable {
            for id in controllers.keys.sorted() where id != advertiser {
                guard let request = controllers[id]?.initiating, initiator(id, accepts: address, request: request) else { continue }
                if set.isDirected, controllers[id]?.ownAddress(request.ownAddressType) != set.peerAddress { continue }
                establish(central: id, peripheral: advertiser, set: key, request: request, peripheralAddress: address)
                return
            }
        }
        for id in controllers.keys.sorted() where id != advertiser {
            deliverReports(from: advertiser, set: key, to: id)
        }
    }

    /// Whether a pending connection request of `id` connects to `address`: the peer address
    /// given, or (initiator filter policy 1) any address on the Filter Accept List.
    func initiator(_ id: Int, accepts address: BluetoothAddress, request: LECreateConnection) -> Bool {
        if request.initiatorFilterPolicy == 0x01 { return controllers[id]?.acceptList.contains(address) == true }
        return request.peerAddress == address
    }

    /// Reports one set's advertising (and scan response, when actively scanning a scannable
    /// set) to `scanner` if it is scanning: legacy reports for legacy scanning (which only sees
    /// legacy PDUs), extended reports for extended scanning.
    mutating func deliverReports(from advertiser: Int, set key: UInt8, to scanner: Int) {
        guard let set = controllers[advertiser]?.sets[key], let scan = controllers[scanner], scan.scanning,
              now >= scan.scanStartedAt + Self.scanWarmUp,
              let address = advertisingAddress(advertiser, set: key) else { return }
        if set.isDirected, scan.ownAddress(scan.scanParameters.ownAddressType) != set.peerAddress { return }
        // Scanning filter policies 1 and 3 report only advertisers on the Filter Accept List.
        if scan.scanParameters.filterPolicy & 0x01 != 0, !scan.acceptList.contains(address) { return }
        let data = set.isDirected && set.isLegacy ? [] : set.data
        let rssi = rssi(scanner, advertiser)
        let active = scan.scanParameters.active && set.isScannable
        if !scan.extendedScanning {
            guard set.isLegacy else { return }
            sendLegacyReport(to: scanner, type: set.legacyReportType, address: address, data: data, rssi: rssi)
            if active { sendLegacyReport(to: scanner, type: .scanResponse, address: address, data: set.scanResponseData, rssi: rssi) }
            return
        }
        var type = LEExtendedAdvertisingEventType(rawValue: set.properties.rawValue & 0b111)
        if set.isLegacy { type.insert(.legacy) }
        sendExtendedReport(to: scanner, set: set, type: type, address: address, data: data, rssi: rssi)
        if active {
            type.insert(.scanResponse)
            sendExtendedReport(to: scanner, set: set, type: type, address: address, data: set.scanResponseData, rssi: rssi)
        }
    }

    /// Applies duplicate filtering (a report sent less than ``duplicateFilterMemory`` ago is
    /// suppressed), the scanner's backlog and packet loss; true when the report goes out. A
    /// host that stops reading its controller loses reports once ``reportBacklogLimit`` packets
    /// wait for it, as a real controller with full buffers drops them (nothing queues without
    /// bound); a report lost so is not counted as sent.
    private mutating func reportPasses(_ scanner: Int, _ key: ReportKey) -> Bool {
        guard let scan = controllers[scanner] else { return false }
        if scan.filterDuplicates, let sent = scan.reportedThisScan[key], now < sent + Self.duplicateFilterMemory { return false }
        if let backlog = deliveries[scanner]?.unread, backlog >= Self.reportBacklogLimit { return false }
        if airLoses() { return false }
        if scan.filterDuplicates { controllers[scanner]?.reportedThisScan[key] = now }
        return true
    }

    private mutating func sendLegacyReport(to scanner: Int, type: LEAdvertisingReportType, address: BluetoothAddress,
                                  data: [UInt8], rssi: Int8) {
        guard reportPasses(scanner, ReportKey(address: address, eventType: UInt16(type.rawValue))) else { return }
        let report = LEAdvertisingReport.Report(eventType: type, address: address, data: data, rssi: rssi)
        deliverOverAir(scanner, LEMetaEvent.advertisingReport(LEAdvertisingReport(reports: [report])))
    }

    private mutating func sendExtendedReport(to scanner: Int, set: AdvertisingSet, type: LEExtendedAdvertisingEventType,
                                    address: BluetoothAddress, data: [UInt8], rssi: Int8) {
        guard reportPasses(scanner, ReportKey(address: address, eventType: type.rawValue)) else { return }
        // Long data goes out in several reports; all but the last say "incomplete, more to come".
        var offset = 0
        repeat {
            let end = min(offset + Self.extendedReportDataLimit, data.count)
            var fragmentType = type
            if end < data.count { fragmentType.insert(LEExtendedAdvertisingEventType(rawValue: 0b01 << 5)) }
            let report = LEExtendedAdvertisingReport.Report(
                eventType: fragmentType, addressType: LEAddressType(address.type), address: address,
                primaryPHY: set.isLegacy ? .le1M : set.primaryPHY,
                secondaryPHY: set.isLegacy ? LEPHY(rawValue: 0) : set.secondaryPHY,
                advertisingSID: set.isLegacy ? 0xFF : set.sid, txPower: 127, rssi: rssi,
                directAddressType: LEAddressType(set.peerAddress.type),
                directAddress: set.isDirected ? set.peerAddress : BluetoothAddress(value: 0),
                data: Array(data[offset..<end]))
            deliverOverAir(scanner, LEMetaEvent.extendedAdvertisingReport(LEExtendedAdvertisingReport(reports: [report])))
            offset = end
        } while offset < data.count
    }

    mutating func deliverOverAir(_ id: Int, _ event: LEMetaEvent) {
        deliverOverAir(id, HCIEvent.leMeta(event).packet)
    }

    /// Looks for an advertising set matching the initiator's pending request and connects to it.
    mutating func tryConnect(_ initiator: Int) {
        guard let request = controllers[initiator]?.initiating else { return }
        for id in controllers.keys.sorted() where id != initiator {
            for key in (controllers[id]?.sets.keys.sorted() ?? []) {
                guard let address = advertisingAddress(id, set: key), self.initiator(initiator, accepts: address, request: request) else { continue }
                advertisingEvent(id, set: key)
                if controllers[initiator]?.initiating == nil { return }
            }
        }
    }

    /// Creates the connection: handles on both sides, the set stops advertising, both hosts get
    /// (Enhanced) LE Connection Complete with the same parameters; an extended set's host also
    /// gets LE Advertising Set Terminated.
    mutating func establish(central: Int, peripheral: Int, set key: UInt8, request: LECreateConnection, peripheralAddress: BluetoothAddress) {
        guard let c = controllers[central], let p = controllers[peripheral] else { return }
        let centralAddress = c.ownAddress(request.ownAddressType) ?? c.publicAddress
        let connectionID = takeConnectionNumber()
        let connection = LinkConnection(
            central: .init(controller: central, handle: c.freeHandle(), address: centralAddress),
            peripheral: .init(controller: peripheral, handle: p.freeHandle(), address: peripheralAddress),
            interval: request.connection.intervalMin, latency: request.connection.maxLatency,
            supervisionTimeout: request.connection.supervisionTimeout)
        connections[connectionID] = connection
        controllers[central]?.connections[connection.central.handle] = connectionID
        controllers[central]?.initiating = nil
        controllers[peripheral]?.connections[connection.peripheral.handle] = connectionID
        stopAdvertising(peripheral, set: key)
        emitConnectionComplete(central, status: .success, handle: connection.central.handle, role: .central,
                               peer: peripheralAddress, connection: connection)
        emitConnectionComplete(peripheral, status: .success, handle: connection.peripheral.handle, role: .peripheral,
                               peer: centralAddress, connection: connection)
        if key != ControllerState.legacySet {
            emit(peripheral, LEMetaEvent.advertisingSetTerminated(.init(
                advertisingHandle: key, connectionHandle: connection.peripheral.handle)))
        }
    }

    /// Sends LE Enhanced Connection Complete when the host unmasked it (LE mask bit 9), else
    /// LE Connection Complete, as a real controller does.
    mutating func emitConnectionComplete(_ id: Int, status: HCIStatus, handle: UInt16, role: HCIRole, peer: BluetoothAddress,
                                connection: LinkConnection?) {
        guard let state = controllers[id] else { return }
        let interval = connection?.interval ?? 0
        let latency = connection?.latency ?? 0
        let timeout = connection?.supervisionTimeout ?? 0
        if state.leEventMask & (1 << 9) != 0 {
            emit(id, LEMetaEvent.enhancedConnectionComplete(LEEnhancedConnectionComplete(
                status: status, handle: handle, role: role, peerAddressType: LEAddressType(peer.type), peerAddress: peer,
                interval: interval, latency: latency, supervisionTimeout: timeout)))
        } else {
            emit(id, LEMetaEvent.connectionComplete(LEConnectionComplete(
                status: status, handle: handle, role: role, peerAddress: peer,
                interval: interval, latency: latency, supervisionTimeout: timeout)))
        }
    }

    /// Ends a connection. The initiator's host gets Disconnection Complete with
    /// `reasonForInitiator` (none when nil: its host is gone or was reset), the peer's host
    /// with `reasonForPeer`.
    mutating func endConnection(_ connectionID: Int, reasonForInitiator: HCIStatus?, reasonForPeer: HCIStatus, initiator: Int) {
        guard let connection = connections.removeValue(forKey: connectionID),
              let ends = connection.ends(from: initiator) else { return }
        let endsOfThisConnection = [SentPacket(sender: ends.local.controller, handle: ends.local.handle),
                                    SentPacket(sender: ends.remote.controller, handle: ends.remote.handle)]
        for end in [ends.local, ends.remote] {
            controllers[end.controller]?.connections[end.handle] = nil
            // Buffers of a closed connection are free without completions (the host frees them
            // on Disconnection Complete); its data still in the air never arrives.
            let freed = controllers[end.controller]?.aclInFlight.removeValue(forKey: end.handle) ?? 0
            controllers[end.controller]?.aclInFlightTotal -= freed
            deliveries[end.controller]?.forget { endsOfThisConnection.contains($0) }
            timeline.removeAll { action in
                switch action {
                case let .deliver(controller, .acl(handle, _, _, _), _): controller == end.controller && handle == end.handle
                case let .completed(controller, handle): controller == end.controller && handle == end.handle
                default: false
                }
            }
        }
        if let reasonForInitiator {
            emit(ends.local.controller, HCIEvent.disconnectionComplete(.init(handle: ends.local.handle, reason: reasonForInitiator)))
        }
        emit(ends.remote.controller, HCIEvent.disconnectionComplete(.init(handle: ends.remote.handle, reason: reasonForPeer)))
    }

    /// Takes one ACL packet from a host: the data goes to the other end of the connection (split
    /// to the controller buffer size, after the link's latency), and Number Of Completed Packets
    /// goes back to the sender once the peer's host has taken it, so a completion always means
    /// delivered and the sender's buffer credits pace it at the receiver's speed. A host that
    /// sends beyond its credits gets Data Buffer Overflow and the packet is dropped. ACL for an
    /// unknown handle is dropped without a completion, like real controllers do. A packet lost
    /// in the air is completed when it would have arrived.
    mutating func handleACL(_ id: Int, handle: UInt16, boundary: ACLBoundary, data: [UInt8]) {
        // In-place accesses: a read through the dictionary's getter copies a controller's (or a
        // connection's) whole state, and `controllers[id]?.x += 1` allocates a frame for it.
        guard let connectionID = controllers.inPlace(id, { $0.connections[handle] }) ?? nil,
              let ends = connections.inPlace(connectionID, { $0.ends(from: id) }) ?? nil,
              let inFlight = controllers.inPlace(id, { $0.aclInFlightTotal }) else { return }
        guard inFlight < Int(VirtualControllerProfile.totalNumACLDataPackets) else {
            emit(id, .event(code: VirtualControllerProfile.dataBufferOverflowCode, parameters: [0x01]))  // link type ACL
            return
        }
        controllers.inPlace(id) { state in
            state.aclInFlight[handle, default: 0] += 1
            state.aclInFlightTotal += 1
        }
        let sent = SentPacket(sender: id, handle: handle)
        guard !airLoses() else {
            let due = max(now + latency, lastDeliveryDue(to: ends.remote.controller) ?? now)
            if due > now {
                timeline.add(.completed(controller: id, handle: handle), at: due)
            } else {
                completePackets(id, [.init(handle: handle, completedPackets: 1)])
            }
            return
        }
        let size = Int(VirtualControllerProfile.aclDataPacketLength)
        let flag: ACLBoundary = boundary.startsPDU ? .firstFlushable : .continuing
        let remote = ends.remote
        guard data.count > size else {
            // The common case: one fragment, the host's bytes passed on without a copy.
            deliverOverAir(remote.controller, .acl(handle: remote.handle, boundary: flag, broadcast: 0, data: data), completes: sent)
            return
        }
        var offset = 0
        while offset < data.count {
            let end = min(offset + size, data.count)
            deliverOverAir(remote.controller, .acl(
                handle: remote.handle, boundary: offset == 0 ? flag : .continuing, broadcast: 0,
                data: Array(data[offset..<end])), completes: end == data.count ? sent : nil)
            offset = end
        }
    }
}
