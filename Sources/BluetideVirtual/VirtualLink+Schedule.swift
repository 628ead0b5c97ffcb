import BluetideCore
import BluetideHCI

// The link's driver: one timer task that sleeps until the schedule's next deadline and runs
// what fell due. No polling; a new earlier deadline replaces the sleeping timer.
extension VirtualLink {
    /// Schedules `action` after `delay` (zero: at the next turn of the timer, never inline).
    func schedule(_ action: LinkAction, after delay: Duration) {
        schedule(action, at: ContinuousClock.now + max(delay, .zero))
    }

    func schedule(_ action: LinkAction, at due: ContinuousClock.Instant) {
        timeline.add(action, at: due)
        armTimer()
    }

    /// Makes sure a timer task sleeps until the schedule's earliest deadline.
    func armTimer() {
        guard let deadline = timeline.nextDeadline else {
            timerTask?.cancel()
            timerTask = nil
            timerDeadline = nil
            return
        }
        if timerTask != nil, let current = timerDeadline, current <= deadline { return }
        timerTask?.cancel()
        timerGeneration &+= 1
        let generation = timerGeneration
        timerDeadline = deadline
        timerTask = Task { [weak self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            guard !Task.isCancelled else { return }
            await self?.timerFired(generation)
        }
    }

    private func timerFired(_ generation: UInt64) {
        guard generation == timerGeneration else { return }
        timerTask = nil
        timerDeadline = nil
        for action in timeline.takeDue(now: ContinuousClock.now) { run(action) }
        armTimer()
    }

    /// One connection interval of a connection (1.25 ms units), at least 7.5 ms.
    func connectionInterval(_ connectionID: Int) -> Duration {
        let units = max(connections[connectionID]?.interval ?? 6, 6)
        return .microseconds(Int64(units) * 1250)
    }

    /// Starts a procedure: it ends one connection interval from now.
    func startProcedure(_ procedure: LinkProcedure, on connectionID: Int) {
        schedule(.procedure(connection: connectionID, procedure), after: connectionInterval(connectionID))
    }

    private func run(_ action: LinkAction) {
        switch action {
        case let .deliver(controller, packet):
            if case let .acl(handle, _, _, _) = packet, controllers[controller]?.connections[handle] == nil { return }
            emit(controller, packet)
        case let .completed(controller, handle):
            completePacket(controller, handle: handle)
        case let .advertise(controller, set, generation):
            guard advertisingTick(controller, set: set, generation: generation) else { return }
            scheduleAdvertising(controller, set: set, generation: generation)
        case let .procedure(connectionID, procedure):
            guard connections[connectionID] != nil else { return }  // the connection ended first
            finish(procedure, on: connectionID)
        }
    }

    /// Returns one ACL buffer of `controller` to its host with Number Of Completed Packets.
    func completePacket(_ controller: Int, handle: UInt16) {
        guard let count = controllers[controller]?.aclInFlight[handle], count > 0 else { return }
        controllers[controller]?.aclInFlight[handle] = count > 1 ? count - 1 : nil
        emit(controller, HCIEvent.numberOfCompletedPackets(.init(entries: [.init(handle: handle, completedPackets: 1)])))
    }

    private func finish(_ procedure: LinkProcedure, on connectionID: Int) {
        guard let connection = connections[connectionID] else { return }
        switch procedure {
        case let .remoteFeatures(requester):
            guard let ends = connection.ends(from: requester) else { return }
            let features = controllers[ends.remote.controller]?.leFeatures ?? []
            emit(requester, LEMetaEvent.readRemoteFeaturesComplete(.init(handle: ends.local.handle, features: features)))

        case let .remoteVersion(requester):
            guard let ends = connection.ends(from: requester) else { return }
            let version = VirtualControllerProfile.version
            var parameters: [UInt8] = [HCIStatus.success.rawValue, UInt8(ends.local.handle & 0xFF), UInt8(ends.local.handle >> 8)]
            parameters.append(version.lmpVersion)
            parameters += [UInt8(version.companyIdentifier & 0xFF), UInt8(version.companyIdentifier >> 8)]
            parameters += [UInt8(version.lmpSubversion & 0xFF), UInt8(version.lmpSubversion >> 8)]
            emit(requester, .event(code: VirtualControllerProfile.readRemoteVersionCompleteCode, parameters: parameters))

        case let .connectionUpdate(interval, latency, timeout):
            connections[connectionID]?.interval = interval
            connections[connectionID]?.latency = latency
            connections[connectionID]?.supervisionTimeout = timeout
            for end in [connection.central, connection.peripheral] {
                emit(end.controller, LEMetaEvent.connectionUpdateComplete(.init(
                    handle: end.handle, interval: interval, latency: latency, supervisionTimeout: timeout)))
            }

        case let .phyUpdate(requester, tx, rx):
            guard let ends = connection.ends(from: requester) else { return }
            let changed = tx != ends.local.txPHY || rx != ends.remote.txPHY
            connections[connectionID]?.update(requester) { $0.txPHY = tx }
            connections[connectionID]?.update(ends.remote.controller) { $0.txPHY = rx }
            emit(requester, LEMetaEvent.phyUpdateComplete(.init(handle: ends.local.handle, txPHY: tx, rxPHY: rx)))
            if changed {
                emit(ends.remote.controller, LEMetaEvent.phyUpdateComplete(.init(handle: ends.remote.handle, txPHY: rx, rxPHY: tx)))
            }

        case let .dataLength(requester, octets):
            guard let ends = connection.ends(from: requester), octets != ends.local.txOctets else { return }
            connections[connectionID]?.update(requester) { $0.txOctets = octets }
            let localTime = VirtualControllerProfile.airTime(octets: octets)
            let remoteTime = VirtualControllerProfile.airTime(octets: ends.remote.txOctets)
            emit(requester, LEMetaEvent.dataLengthChange(.init(
                handle: ends.local.handle, maxTxOctets: octets, maxTxTime: localTime,
                maxRxOctets: ends.remote.txOctets, maxRxTime: remoteTime)))
            emit(ends.remote.controller, LEMetaEvent.dataLengthChange(.init(
                handle: ends.remote.handle, maxTxOctets: ends.remote.txOctets, maxTxTime: remoteTime,
                maxRxOctets: octets, maxRxTime: localTime)))
        }
    }
}
