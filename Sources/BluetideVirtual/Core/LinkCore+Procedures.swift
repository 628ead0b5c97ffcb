import BluetideBase
import BluetideHCI

// What the link does when a scheduled action falls due, and the link-layer procedures that take
// connection intervals on a real radio.
extension LinkCore {
    /// Runs one action of the timeline that fell due.
    mutating func run(_ action: LinkAction) {
        switch action {
        case let .deliver(controller, packet, completes):
            if case let .acl(handle, _, _, _) = packet, controllers[controller]?.connections[handle] == nil { return }
            arrive(controller, packet, completes: completes)
        case let .completed(controller, handle):
            completePackets(controller, [.init(handle: handle, completedPackets: 1)])
        case let .advertise(controller, set, generation):
            guard advertisingTick(controller, set: set, generation: generation) else { return }
            scheduleAdvertising(controller, set: set, generation: generation)
        case let .procedure(connectionID, procedure):
            guard connections[connectionID] != nil else { return }  // the connection ended first
            finish(procedure, on: connectionID)
        }
    }

    /// One connection interval of a connection (1.25 ms units), at least 7.5 ms.
    func connectionInterval(_ connectionID: Int) -> Duration {
        let units = max(connections[connectionID]?.interval ?? 6, 6)
        return .microseconds(Int64(units) * 1250)
    }

    /// Starts a procedure: it ends one connection interval from now.
    mutating func startProcedure(_ procedure: LinkProcedure, on connectionID: Int) {
        schedule(.procedure(connection: connectionID, procedure), after: connectionInterval(connectionID))
    }

    private mutating func finish(_ procedure: LinkProcedure, on connectionID: Int) {
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

        case .keyRequest:
            requestKey(on: connectionID)

        case let .encryptionEnd(outcome):
            endEncryption(outcome, on: connectionID)
        }
    }
}
