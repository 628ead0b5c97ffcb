import BluetideBase
import BluetideHCI

// How a virtual controller answers its host's HCI commands.
extension LinkCore {
    /// Handles one host-to-controller packet of controller `id`.
    mutating func handleFromHost(_ id: Int, _ packet: HCIPacket) {
        guard isAttached(id) else { return }
        switch packet {
        case let .command(opcode, parameters):
            handleCommand(id, opcode: opcode, parameters: parameters)
        case let .acl(handle, boundary, _, data):
            handleACL(id, handle: handle, boundary: boundary, data: data)
        case .event, .sco, .iso:
            break  // not something a host sends to an LE controller
        }
    }

    // MARK: Replies

    mutating func complete<C: HCICommand>(_ id: Int, _ command: C.Type, _ value: C.ReturnParameters) {
        emit(id, HCIEvent.commandComplete(HCICommandComplete(command, returning: value)))
    }

    mutating func complete(_ id: Int, _ opcode: HCIOpcode, _ status: HCIStatus = .success) {
        emit(id, HCIEvent.commandComplete(HCICommandComplete(opcode: opcode, status: status)))
    }

    mutating func commandStatus(_ id: Int, _ opcode: HCIOpcode, _ status: HCIStatus) {
        emit(id, HCIEvent.commandStatus(HCICommandStatus(status: status, opcode: opcode)))
    }

    /// Decodes a command's parameters; on failure answers 0x12 invalid parameters and returns nil.
    private mutating func decode<C: HCICommand>(_ type: C.Type, _ id: Int, _ parameters: [UInt8]) -> C? {
        do {
            return try C(parameters: parameters)
        } catch {
            switch C.completion {
            case .commandComplete: complete(id, C.opcode, .invalidParameters)
            case .commandStatus: commandStatus(id, C.opcode, .invalidParameters)
            }
            return nil
        }
    }

    /// The connection and both ends for a handle of controller `id`.
    func connection(_ id: Int, _ handle: UInt16) -> (id: Int, local: LinkConnection.End, remote: LinkConnection.End)? {
        guard let connectionID = controllers[id]?.connections[handle],
              let ends = connections[connectionID]?.ends(from: id) else { return nil }
        return (connectionID, ends.local, ends.remote)
    }

    // MARK: Commands

    private mutating func handleCommand(_ id: Int, opcode: HCIOpcode, parameters: [UInt8]) {
        guard let state = controllers[id] else { return }
        if !state.leFeatures.contains(.extendedAdvertising), VirtualControllerProfile.extendedOpcodes.contains(opcode) {
            return commandStatus(id, opcode, .unknownCommand)
        }
        if !state.leFeatures.contains(.encryption), VirtualControllerProfile.encryptionOpcodes.contains(opcode) {
            return commandStatus(id, opcode, .unknownCommand)
        }
        switch opcode {
        case HCIReset.opcode:
            clearState(of: id)
            complete(id, HCIReset.self, HCIStatusReturn())

        case HCISetEventMask.opcode:
            guard let command = decode(HCISetEventMask.self, id, parameters) else { return }
            controllers[id]?.eventMask = command.mask
            complete(id, opcode)

        case LESetEventMask.opcode:
            guard let command = decode(LESetEventMask.self, id, parameters) else { return }
            controllers[id]?.leEventMask = command.mask
            complete(id, opcode)

        case HCIReadLocalVersionInformation.opcode:
            complete(id, HCIReadLocalVersionInformation.self, VirtualControllerProfile.version)

        case HCIReadLocalSupportedCommands.opcode:
            complete(id, HCIReadLocalSupportedCommands.self, .init(commands: VirtualControllerProfile.supportedCommands(features: state.leFeatures)))

        case HCIReadLocalSupportedFeatures.opcode:
            complete(id, HCIReadLocalSupportedFeatures.self, .init(features: VirtualControllerProfile.lmpFeatures))

        case HCIReadBufferSize.opcode:
            complete(id, HCIReadBufferSize.self, .init(
                aclDataPacketLength: VirtualControllerProfile.aclDataPacketLength,
                totalNumACLDataPackets: UInt16(VirtualControllerProfile.totalNumACLDataPackets)))

        case HCIReadBDADDR.opcode:
            complete(id, HCIReadBDADDR.self, .init(address: state.publicAddress))

        case HCIReadRSSI.opcode:
            guard let command = decode(HCIReadRSSI.self, id, parameters) else { return }
            if let link = connection(id, command.handle) {
                complete(id, HCIReadRSSI.self, .init(handle: command.handle, rssi: rssi(id, link.remote.controller)))
            } else {
                complete(id, HCIReadRSSI.self, .init(status: .unknownConnectionIdentifier, handle: command.handle, rssi: 127))
            }

        case LEReadBufferSize.opcode:
            complete(id, LEReadBufferSize.self, .init(
                leACLDataPacketLength: VirtualControllerProfile.aclDataPacketLength,
                totalNumLEACLDataPackets: VirtualControllerProfile.totalNumACLDataPackets))

        case LEReadBufferSizeV2.opcode:
            complete(id, LEReadBufferSizeV2.self, .init(
                leACLDataPacketLength: VirtualControllerProfile.aclDataPacketLength,
                totalNumLEACLDataPackets: VirtualControllerProfile.totalNumACLDataPackets))

        case LEReadLocalSupportedFeatures.opcode:
            complete(id, LEReadLocalSupportedFeatures.self, .init(features: state.leFeatures))

        case LESetRandomAddress.opcode:
            guard let command = decode(LESetRandomAddress.self, id, parameters) else { return }
            guard !state.isAdvertising, !state.scanning, state.initiating == nil else {
                return complete(id, opcode, .commandDisallowed)
            }
            controllers[id]?.randomAddress = command.address
            complete(id, opcode)

        case LESetAdvertisingParameters.opcode:
            guard let command = decode(LESetAdvertisingParameters.self, id, parameters), use(.legacy, id, opcode) else { return }
            guard state.sets[ControllerState.legacySet]?.enabled != true else { return complete(id, opcode, .commandDisallowed) }
            if command.advertisingType != .connectableDirectedHighDuty,
               command.intervalMin > command.intervalMax || command.advertisingType.rawValue > 4 {
                return complete(id, opcode, .invalidParameters)
            }
            let old = state.sets[ControllerState.legacySet]
            var set = AdvertisingSet(legacy: command)
            set.data = old?.data ?? []
            set.scanResponseData = old?.scanResponseData ?? []
            set.generation = old?.generation ?? 0
            controllers[id]?.sets[ControllerState.legacySet] = set
            complete(id, opcode)

        case LESetAdvertisingData.opcode:
            guard let command = decode(LESetAdvertisingData.self, id, parameters), use(.legacy, id, opcode) else { return }
            controllers[id]?.sets[ControllerState.legacySet]?.data = command.data
            complete(id, opcode)

        case LESetScanResponseData.opcode:
            guard let command = decode(LESetScanResponseData.self, id, parameters), use(.legacy, id, opcode) else { return }
            controllers[id]?.sets[ControllerState.legacySet]?.scanResponseData = command.data
            complete(id, opcode)

        case LESetAdvertisingEnable.opcode:
            guard let command = decode(LESetAdvertisingEnable.self, id, parameters), use(.legacy, id, opcode) else { return }
            setAdvertising(id, enable: command.enable)

        case LESetScanParameters.opcode:
            guard let command = decode(LESetScanParameters.self, id, parameters), use(.legacy, id, opcode) else { return }
            guard !state.scanning else { return complete(id, opcode, .commandDisallowed) }
            controllers[id]?.scanParameters = command
            complete(id, opcode)

        case LESetScanEnable.opcode:
            guard let command = decode(LESetScanEnable.self, id, parameters), use(.legacy, id, opcode) else { return }
            setScanning(id, enable: command.enable, filterDuplicates: command.filterDuplicates, extended: false)

        case LECreateConnection.opcode:
            guard let command = decode(LECreateConnection.self, id, parameters), use(.legacy, id, opcode) else { return }
            createConnection(id, command)

        case LESetExtendedScanParameters.opcode:
            guard let command = decode(LESetExtendedScanParameters.self, id, parameters), use(.extended, id, opcode) else { return }
            guard !state.scanning else { return complete(id, opcode, .commandDisallowed) }
            guard let phy = command.le1M ?? command.coded else { return complete(id, opcode, .invalidParameters) }
            controllers[id]?.scanParameters = LESetScanParameters(
                active: phy.active, interval: phy.interval, window: phy.window,
                ownAddressType: command.ownAddressType, filterPolicy: command.filterPolicy)
            complete(id, opcode)

        case LESetExtendedScanEnable.opcode:
            guard let command = decode(LESetExtendedScanEnable.self, id, parameters), use(.extended, id, opcode) else { return }
            setScanning(id, enable: command.enable, filterDuplicates: command.filterDuplicates != 0, extended: true)

        case LEExtendedCreateConnection.opcode:
            guard let command = decode(LEExtendedCreateConnection.self, id, parameters), use(.extended, id, opcode) else { return }
            guard let phy = command.primary else { return commandStatus(id, opcode, .invalidParameters) }
            createConnection(id, LECreateConnection(
                peerAddress: command.peerAddress, ownAddressType: command.ownAddressType, connection: phy.connection,
                scanInterval: phy.scanInterval, scanWindow: phy.scanWindow, initiatorFilterPolicy: command.initiatorFilterPolicy),
                opcode: opcode)

        case LESetExtendedAdvertisingParameters.opcode:
            guard let command = decode(LESetExtendedAdvertisingParameters.self, id, parameters), use(.extended, id, opcode) else { return }
            setExtendedParameters(id, command)

        case LESetAdvertisingSetRandomAddress.opcode:
            guard let command = decode(LESetAdvertisingSetRandomAddress.self, id, parameters), use(.extended, id, opcode) else { return }
            guard command.handle != ControllerState.legacySet, state.sets[command.handle] != nil else {
                return complete(id, opcode, .unknownAdvertisingIdentifier)
            }
            controllers[id]?.sets[command.handle]?.randomAddress = command.address
            complete(id, opcode)

        case LESetExtendedAdvertisingData.opcode:
            guard let command = decode(LESetExtendedAdvertisingData.self, id, parameters), use(.extended, id, opcode) else { return }
            setExtendedData(id, command.block, scanResponse: false, opcode: opcode)

        case LESetExtendedScanResponseData.opcode:
            guard let command = decode(LESetExtendedScanResponseData.self, id, parameters), use(.extended, id, opcode) else { return }
            setExtendedData(id, command.block, scanResponse: true, opcode: opcode)

        case LESetExtendedAdvertisingEnable.opcode:
            guard let command = decode(LESetExtendedAdvertisingEnable.self, id, parameters), use(.extended, id, opcode) else { return }
            setExtendedAdvertising(id, command)

        case LEReadMaximumAdvertisingDataLength.opcode:
            guard use(.extended, id, opcode) else { return }
            complete(id, LEReadMaximumAdvertisingDataLength.self, .init(maximumLength: Self.maximumExtendedDataLength))

        case LEReadNumberOfSupportedAdvertisingSets.opcode:
            guard use(.extended, id, opcode) else { return }
            complete(id, LEReadNumberOfSupportedAdvertisingSets.self, .init(count: UInt8(ControllerState.maximumSets)))

        case LERemoveAdvertisingSet.opcode:
            guard let command = decode(LERemoveAdvertisingSet.self, id, parameters), use(.extended, id, opcode) else { return }
            guard command.handle != ControllerState.legacySet, let set = state.sets[command.handle] else {
                return complete(id, opcode, .unknownAdvertisingIdentifier)
            }
            guard !set.enabled else { return complete(id, opcode, .commandDisallowed) }
            controllers[id]?.sets[command.handle] = nil
            complete(id, opcode)

        case LEClearAdvertisingSets.opcode:
            guard use(.extended, id, opcode) else { return }
            guard !state.sets.contains(where: { $0.key != ControllerState.legacySet && $0.value.enabled }) else {
                return complete(id, opcode, .commandDisallowed)
            }
            let kept = state.sets.filter { $0.key == ControllerState.legacySet }
            controllers[id]?.sets = kept
            complete(id, opcode)

        case LECreateConnectionCancel.opcode:
            guard let pending = state.initiating else { return complete(id, opcode, .commandDisallowed) }
            controllers[id]?.initiating = nil
            complete(id, opcode)
            emitConnectionComplete(id, status: .unknownConnectionIdentifier, handle: 0, role: .central,
                                   peer: pending.peerAddress, connection: nil)

        case HCIDisconnect.opcode:
            guard let command = decode(HCIDisconnect.self, id, parameters) else { return }
            guard let link = connection(id, command.handle) else {
                return commandStatus(id, opcode, .unknownConnectionIdentifier)
            }
            let allowedReasons: Set<UInt8> = [0x05, 0x13, 0x14, 0x15, 0x1A, 0x29, 0x3B]
            guard allowedReasons.contains(command.reason.rawValue) else {
                return commandStatus(id, opcode, .invalidParameters)
            }
            commandStatus(id, opcode, .success)
            endConnection(link.id, reasonForInitiator: .localHostTerminated, reasonForPeer: command.reason, initiator: id)

        case LEConnectionUpdate.opcode:
            guard let command = decode(LEConnectionUpdate.self, id, parameters) else { return }
            guard let link = connection(id, command.handle) else {
                return commandStatus(id, opcode, .unknownConnectionIdentifier)
            }
            commandStatus(id, opcode, .success)
            startProcedure(.connectionUpdate(
                interval: command.connection.intervalMin, latency: command.connection.maxLatency,
                supervisionTimeout: command.connection.supervisionTimeout), on: link.id)

        case LEReadRemoteFeatures.opcode:
            guard let command = decode(LEReadRemoteFeatures.self, id, parameters) else { return }
            guard let link = connection(id, command.handle) else {
                return commandStatus(id, opcode, .unknownConnectionIdentifier)
            }
            commandStatus(id, opcode, .success)
            startProcedure(.remoteFeatures(requester: id), on: link.id)

        case LESetDataLength.opcode:
            guard let command = decode(LESetDataLength.self, id, parameters) else { return }
            setDataLength(id, command)

        case LEEnableEncryption.opcode:
            guard let command = decode(LEEnableEncryption.self, id, parameters) else { return }
            enableEncryption(id, command)

        case LELongTermKeyRequestReply.opcode:
            guard let command = decode(LELongTermKeyRequestReply.self, id, parameters) else { return }
            answerKeyRequest(id, handle: command.handle, key: command.longTermKey)

        case LELongTermKeyRequestNegativeReply.opcode:
            guard let command = decode(LELongTermKeyRequestNegativeReply.self, id, parameters) else { return }
            answerKeyRequest(id, handle: command.handle, key: nil)

        case LEReadPHY.opcode:
            guard let command = decode(LEReadPHY.self, id, parameters) else { return }
            if let link = connection(id, command.handle) {
                complete(id, LEReadPHY.self, .init(handle: command.handle, txPHY: link.local.txPHY, rxPHY: link.remote.txPHY))
            } else {
                complete(id, LEReadPHY.self, .init(status: .unknownConnectionIdentifier, handle: command.handle, txPHY: .le1M, rxPHY: .le1M))
            }

        case LESetPHY.opcode:
            guard let command = decode(LESetPHY.self, id, parameters) else { return }
            setPHY(id, command)

        case HCIOpcode(rawValue: 0x0C63),  // Set Event Mask Page 2
             HCIOpcode(rawValue: 0x0C6D),  // Write LE Host Support
             HCIOpcode(rawValue: 0x0C33),  // Host Buffer Size (the controller never holds data back)
             HCIOpcode(rawValue: 0x2024),  // LE Write Suggested Default Data Length
             HCIOpcode(rawValue: 0x2031):  // LE Set Default PHY
            complete(id, opcode)

        case HCIOpcode(rawValue: 0x2023):  // LE Read Suggested Default Data Length: 27 octets, 328 µs
            emit(id, HCIEvent.commandComplete(HCICommandComplete(opcode: opcode, returnParameters: [0x00, 27, 0, 0x48, 0x01])))

        case HCIOpcode(rawValue: 0x202F):  // LE Read Maximum Data Length: 251 octets, 2120 µs each way
            emit(id, HCIEvent.commandComplete(HCICommandComplete(
                opcode: opcode, returnParameters: [0x00, 251, 0, 0x48, 0x08, 251, 0, 0x48, 0x08])))

        case HCIOpcode(rawValue: 0x0C35):
            break  // Host Number Of Completed Packets: no answer, as specified

        case LEEncryptFunction.opcode:
            encrypt(id, parameters: parameters)

        case LEEncryptFunction.randOpcode:
            complete(id, opcode, returning: Self.littleEndian(random.next()))

        default:
            handleOtherCommand(id, opcode: opcode, parameters: parameters)
        }
    }

    /// Most extended advertising data a set holds, bytes.
    static let maximumExtendedDataLength: UInt16 = 1650

    /// Records which command family the host uses; a mix is refused with 0x0C (as the spec
    /// requires), by Command Complete or Command Status as the command is answered.
    private mutating func use(_ mode: CommandMode, _ id: Int, _ opcode: HCIOpcode) -> Bool {
        guard let current = controllers[id]?.commandMode else { return false }
        if current == .unset { controllers[id]?.commandMode = mode }
        if current == .unset || current == mode { return true }
        if opcode == LECreateConnection.opcode || opcode == LEExtendedCreateConnection.opcode {
            commandStatus(id, opcode, .commandDisallowed)
        } else {
            complete(id, opcode, .commandDisallowed)
        }
        return false
    }

    private mutating func setAdvertising(_ id: Int, enable: Bool) {
        guard let state = controllers[id] else { return }
        let opcode = LESetAdvertisingEnable.opcode
        let key = ControllerState.legacySet
        guard enable else {
            stopAdvertising(id, set: key)
            return complete(id, opcode)
        }
        guard state.sets[key]?.enabled != true else { return complete(id, opcode) }
        guard state.address(ofSet: key) != nil else { return complete(id, opcode, .invalidParameters) }
        complete(id, opcode)
        startAdvertising(id, set: key)
    }

    private mutating func setExtendedParameters(_ id: Int, _ command: LESetExtendedAdvertisingParameters) {
        guard let state = controllers[id] else { return }
        let opcode = LESetExtendedAdvertisingParameters.opcode
        guard command.handle <= 0xEF else { return complete(id, opcode, .invalidParameters) }
        let old = state.sets[command.handle]
        guard old?.enabled != true else { return complete(id, opcode, .commandDisallowed) }
        guard old != nil || state.sets.count - 1 < ControllerState.maximumSets else {
            return complete(id, opcode, .memoryCapacityExceeded)
        }
        let properties = command.properties
        let legacyAllowed: [LEAdvertisingEventProperties] = [
            [.connectable, .scannable, .legacy], [.connectable, .directed, .legacy],
            [.connectable, .directed, .highDutyCycleDirected, .legacy], [.scannable, .legacy], [.legacy],
        ]
        let core = properties.intersection([.connectable, .scannable, .directed, .highDutyCycleDirected, .legacy])
        if properties.contains(.legacy) ? !legacyAllowed.contains(core)
            : properties.isSuperset(of: [.connectable, .scannable]) || properties.contains(.highDutyCycleDirected) {
            return complete(id, opcode, .invalidParameters)
        }
        guard command.primaryIntervalMin <= command.primaryIntervalMax, command.primaryPHY != .le2M else {
            return complete(id, opcode, .invalidParameters)
        }
        var set = AdvertisingSet(extended: command)
        set.randomAddress = old?.randomAddress
        set.data = old?.data ?? []
        set.scanResponseData = old?.scanResponseData ?? []
        set.generation = old?.generation ?? 0
        controllers[id]?.sets[command.handle] = set
        let power: Int8 = command.txPower == 127 ? 0 : min(command.txPower, 20)
        complete(id, LESetExtendedAdvertisingParameters.self, .init(selectedTxPower: power))
    }

    private mutating func setExtendedData(_ id: Int, _ block: LEExtendedDataBlock, scanResponse: Bool, opcode: HCIOpcode) {
        guard block.handle != ControllerState.legacySet, let set = controllers[id]?.sets[block.handle] else {
            return complete(id, opcode, .unknownAdvertisingIdentifier)
        }
        let current = scanResponse ? set.scanResponseData : set.data
        let updated: [UInt8]
        switch block.operation {
        case .complete, .firstFragment: updated = block.data
        case .intermediateFragment, .lastFragment: updated = current + block.data
        case .unchanged: updated = current
        default: return complete(id, opcode, .invalidParameters)
        }
        let limit = set.isLegacy ? 31 : Int(Self.maximumExtendedDataLength)
        guard updated.count <= limit else { return complete(id, opcode, .invalidParameters) }
        if scanResponse {
            controllers[id]?.sets[block.handle]?.scanResponseData = updated
        } else {
            controllers[id]?.sets[block.handle]?.data = updated
        }
        complete(id, opcode)
    }

    /// Starts or stops the listed sets (all sets when stopping with an empty list). Duration and
    /// event limits are accepted but not applied: a set runs until stopped or connected.
    private mutating func setExtendedAdvertising(_ id: Int, _ command: LESetExtendedAdvertisingEnable) {
        guard let state = controllers[id] else { return }
        let opcode = LESetExtendedAdvertisingEnable.opcode
        if !command.enable, command.sets.isEmpty {
            for key in state.sets.keys where key != ControllerState.legacySet { stopAdvertising(id, set: key) }
            return complete(id, opcode)
        }
        guard !command.sets.isEmpty else { return complete(id, opcode, .invalidParameters) }
        for entry in command.sets {
            guard entry.handle != ControllerState.legacySet, state.sets[entry.handle] != nil else {
                return complete(id, opcode, .unknownAdvertisingIdentifier)
            }
            if command.enable, state.address(ofSet: entry.handle) == nil {
                return complete(id, opcode, .invalidParameters)
            }
        }
        complete(id, opcode)
        for entry in command.sets {
            if !command.enable {
                stopAdvertising(id, set: entry.handle)
            } else if controllers[id]?.sets[entry.handle]?.enabled != true {
                startAdvertising(id, set: entry.handle)
            }
        }
    }

    private mutating func setScanning(_ id: Int, enable: Bool, filterDuplicates: Bool, extended: Bool) {
        guard let state = controllers[id] else { return }
        let opcode = extended ? LESetExtendedScanEnable.opcode : LESetScanEnable.opcode
        guard enable else {
            controllers[id]?.scanning = false
            return complete(id, opcode)
        }
        guard state.ownAddress(state.scanParameters.ownAddressType) != nil else {
            return complete(id, opcode, .invalidParameters)
        }
        // A new scan starts listening now and forgets what it reported before; enabling again
        // while scanning only changes the settings.
        if !state.scanning {
            controllers[id]?.reportedThisScan = [:]
            controllers[id]?.scanStartedAt = now
        }
        controllers[id]?.scanning = true
        controllers[id]?.extendedScanning = extended
        controllers[id]?.filterDuplicates = filterDuplicates
        // Nothing is reported here: reports come from each advertiser's own advertising events
        // (its interval timeline) once the scanner has listened for a while, as on a real radio.
        complete(id, opcode)
    }

    private mutating func createConnection(_ id: Int, _ command: LECreateConnection, opcode: HCIOpcode = LECreateConnection.opcode) {
        guard let state = controllers[id] else { return }
        guard state.initiating == nil else { return commandStatus(id, opcode, .commandDisallowed) }
        guard state.ownAddress(command.ownAddressType) != nil else {
            return commandStatus(id, opcode, .invalidParameters)
        }
        let alreadyConnected = state.connections.values.contains { connectionID in
            connections[connectionID]?.ends(from: id)?.remote.address == command.peerAddress
        }
        guard !alreadyConnected else { return commandStatus(id, opcode, .connectionAlreadyExists) }
        commandStatus(id, opcode, .success)
        controllers[id]?.initiating = command
        tryConnect(id)
    }

    private mutating func setDataLength(_ id: Int, _ command: LESetDataLength) {
        guard let link = connection(id, command.handle) else {
            return complete(id, LESetDataLength.self, .init(status: .unknownConnectionIdentifier, handle: command.handle))
        }
        complete(id, LESetDataLength.self, .init(handle: command.handle))
        let octets = min(max(command.txOctets, 27), VirtualControllerProfile.aclDataPacketLength)
        guard octets != link.local.txOctets else { return }
        startProcedure(.dataLength(requester: id, octets: octets), on: link.id)
    }

    private mutating func setPHY(_ id: Int, _ command: LESetPHY) {
        let opcode = LESetPHY.opcode
        guard let link = connection(id, command.handle) else {
            return commandStatus(id, opcode, .unknownConnectionIdentifier)
        }
        commandStatus(id, opcode, .success)
        func choose(_ preferred: UInt8, noPreference: Bool, current: LEPHY) -> LEPHY {
            if noPreference { return current }
            if preferred & 0b010 != 0 { return .le2M }
            if preferred & 0b001 != 0 { return .le1M }
            return current  // Coded PHY is not offered
        }
        let tx = choose(command.txPHYs, noPreference: command.allPHYs & 1 != 0, current: link.local.txPHY)
        let rx = choose(command.rxPHYs, noPreference: command.allPHYs & 2 != 0, current: link.remote.txPHY)
        startProcedure(.phyUpdate(requester: id, tx: tx, rx: rx), on: link.id)
    }
}
