import BluetideCore
import BluetideHCI

// What happens "in the air": advertising, scanning, connecting, ACL forwarding, disconnecting.
extension VirtualLink {
    /// Advertising intervals below this (20 ms, the spec minimum) are raised to it.
    static let minimumAdvertisingInterval: UInt16 = 0x0020

    /// Starts the timer that repeats the controller's advertising every interval until its
    /// advertising generation changes.
    func startAdvertisingTimer(_ id: Int) {
        guard let state = controllers[id] else { return }
        let generation = state.advertisingGeneration
        let units = max(state.advertisingParameters.intervalMin, Self.minimumAdvertisingInterval)
        let interval = Duration.microseconds(Int64(units) * 625)
        Task {
            while true {
                try? await Task.sleep(for: interval)
                guard self.advertisingTick(id, generation: generation) else { return }
            }
        }
    }

    /// One timer tick; false once the advertising it belongs to has stopped.
    func advertisingTick(_ id: Int, generation: Int) -> Bool {
        guard let state = controllers[id], state.advertising, state.advertisingGeneration == generation else { return false }
        advertisingEvent(id)
        return true
    }

    /// The address a controller advertises from, when it is advertising.
    func advertisingAddress(_ id: Int) -> BluetoothAddress? {
        guard let state = controllers[id], state.advertising else { return nil }
        return state.ownAddress(state.advertisingParameters.ownAddressType)
    }

    /// One advertising event of `advertiser`: a matching initiator connects, otherwise every
    /// scanning controller gets its reports.
    func advertisingEvent(_ advertiser: Int) {
        guard let state = controllers[advertiser], let address = advertisingAddress(advertiser) else { return }
        if state.advertisingParameters.advertisingType.isConnectable {
            for id in controllers.keys.sorted() where id != advertiser {
                guard let request = controllers[id]?.initiating, request.peerAddress == address else { continue }
                if isDirected(state.advertisingParameters.advertisingType),
                   controllers[id]?.ownAddress(request.ownAddressType) != state.advertisingParameters.peerAddress {
                    continue
                }
                establish(central: id, peripheral: advertiser, request: request, peripheralAddress: address)
                return
            }
        }
        for id in controllers.keys.sorted() where id != advertiser {
            deliverReports(from: advertiser, to: id)
        }
    }

    func isDirected(_ type: LEAdvertisingType) -> Bool {
        type == .connectableDirectedHighDuty || type == .connectableDirectedLowDuty
    }

    /// Reports `advertiser`'s advertising (and scan response, when actively scanning a
    /// scannable advertiser) to `scanner` if it is scanning.
    func deliverReports(from advertiser: Int, to scanner: Int) {
        guard let adv = controllers[advertiser], let scan = controllers[scanner], scan.scanning,
              let address = advertisingAddress(advertiser) else { return }
        let type = adv.advertisingParameters.advertisingType
        let reportType: LEAdvertisingReportType
        var data = adv.advertisingData
        switch type {
        case .connectableUndirected: reportType = .advInd
        case .scannableUndirected: reportType = .advScanInd
        case .nonConnectableUndirected: reportType = .advNonconnInd
        default:
            // Directed advertising is only seen by the device it is aimed at, and has no data.
            guard scan.ownAddress(scan.scanParameters.ownAddressType) == adv.advertisingParameters.peerAddress else { return }
            reportType = .advDirectInd
            data = []
        }
        sendReport(to: scanner, from: advertiser, type: reportType, address: address, data: data)
        if scan.scanParameters.active, type.isScannable {
            sendReport(to: scanner, from: advertiser, type: .scanResponse, address: address, data: adv.scanResponseData)
        }
    }

    private func sendReport(to scanner: Int, from advertiser: Int, type: LEAdvertisingReportType,
                            address: BluetoothAddress, data: [UInt8]) {
        guard let scan = controllers[scanner] else { return }
        let key = ReportKey(address: address, eventType: type.rawValue)
        if scan.filterDuplicates, scan.reportedThisScan.contains(key) { return }
        if airLoses() { return }
        if scan.filterDuplicates { controllers[scanner]?.reportedThisScan.insert(key) }
        let report = LEAdvertisingReport.Report(eventType: type, address: address, data: data, rssi: rssi(scanner, advertiser))
        deliverOverAir(scanner, LEMetaEvent.advertisingReport(LEAdvertisingReport(reports: [report])))
    }

    func deliverOverAir(_ id: Int, _ event: LEMetaEvent) {
        deliverOverAir(id, HCIEvent.leMeta(event).packet)
    }

    /// Looks for an advertiser matching the initiator's pending request and connects to it.
    func tryConnect(_ initiator: Int) {
        guard let request = controllers[initiator]?.initiating else { return }
        for id in controllers.keys.sorted() where id != initiator {
            if advertisingAddress(id) == request.peerAddress {
                advertisingEvent(id)
                return
            }
        }
    }

    /// Creates the connection: handles on both sides, advertising stops, both hosts get
    /// (Enhanced) LE Connection Complete with the same parameters.
    func establish(central: Int, peripheral: Int, request: LECreateConnection, peripheralAddress: BluetoothAddress) {
        guard let c = controllers[central], let p = controllers[peripheral] else { return }
        let centralAddress = c.ownAddress(request.ownAddressType) ?? c.publicAddress
        let connectionID = nextConnectionNumber()
        let connection = LinkConnection(
            central: .init(controller: central, handle: c.freeHandle(), address: centralAddress),
            peripheral: .init(controller: peripheral, handle: p.freeHandle(), address: peripheralAddress),
            interval: request.connection.intervalMin, latency: request.connection.maxLatency,
            supervisionTimeout: request.connection.supervisionTimeout)
        connections[connectionID] = connection
        controllers[central]?.connections[connection.central.handle] = connectionID
        controllers[central]?.initiating = nil
        controllers[peripheral]?.connections[connection.peripheral.handle] = connectionID
        controllers[peripheral]?.advertising = false
        controllers[peripheral]?.advertisingGeneration += 1
        emitConnectionComplete(central, status: .success, handle: connection.central.handle, role: .central,
                               peer: peripheralAddress, connection: connection)
        emitConnectionComplete(peripheral, status: .success, handle: connection.peripheral.handle, role: .peripheral,
                               peer: centralAddress, connection: connection)
    }

    /// Sends LE Enhanced Connection Complete when the host unmasked it (LE mask bit 9), else
    /// LE Connection Complete, as a real controller does.
    func emitConnectionComplete(_ id: Int, status: HCIStatus, handle: UInt16, role: HCIRole, peer: BluetoothAddress,
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
    func endConnection(_ connectionID: Int, reasonForInitiator: HCIStatus?, reasonForPeer: HCIStatus, initiator: Int) {
        guard let connection = connections.removeValue(forKey: connectionID),
              let ends = connection.ends(from: initiator) else { return }
        for end in [ends.local, ends.remote] {
            controllers[end.controller]?.connections[end.handle] = nil
            controllers[end.controller]?.delayed.removeAll { item in
                if case let .acl(handle, _, _, _) = item.packet { return handle == end.handle }
                return false
            }
        }
        if let reasonForInitiator {
            emit(ends.local.controller, HCIEvent.disconnectionComplete(.init(handle: ends.local.handle, reason: reasonForInitiator)))
        }
        emit(ends.remote.controller, HCIEvent.disconnectionComplete(.init(handle: ends.remote.handle, reason: reasonForPeer)))
    }

    /// Takes one ACL packet from a host: Number Of Completed Packets back at once, the data to
    /// the other end of the connection (split to the controller buffer size). ACL for an unknown
    /// handle is dropped without a completion, like real controllers do.
    func handleACL(_ id: Int, handle: UInt16, boundary: ACLBoundary, data: [UInt8]) {
        guard let connectionID = controllers[id]?.connections[handle],
              let ends = connections[connectionID]?.ends(from: id) else { return }
        emit(id, HCIEvent.numberOfCompletedPackets(.init(entries: [.init(handle: handle, completedPackets: 1)])))
        if airLoses() { return }
        let size = Int(VirtualControllerProfile.aclDataPacketLength)
        var start = true
        var offset = 0
        repeat {
            let chunk = Array(data[offset..<min(offset + size, data.count)])
            let flag: ACLBoundary = start && boundary.startsPDU ? .firstFlushable : .continuing
            deliverOverAir(ends.remote.controller, .acl(handle: ends.remote.handle, boundary: flag, broadcast: 0, data: chunk))
            start = false
            offset += size
        } while offset < data.count
    }
}
