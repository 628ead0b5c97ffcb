import BluetideBase
import BluetideHCI

// Encryption as a controller does it for its host (Core Vol 6 Part B 5.1.3, Vol 4 Part E
// 7.8.22-7.8.26): LE Encrypt and LE Rand, and the encryption start and key refresh procedures
// between a central and a peripheral. The link is marked encrypted; the bytes are not ciphered.
// Each step over the air takes a connection interval:
//
//   central host            central LL          peripheral LL          peripheral host
//   LE Enable Encryption →  Command Status
//                           LL_ENC_REQ   ─── 1 interval ──→   LE Long Term Key Request →
//                                                          ← LTK Request (Negative) Reply
//                                                             Command Complete →
//                           ←── 1 interval ── LL_START_ENC_REQ (or LL_REJECT_IND)
//   ← Encryption Change (or Key Refresh Complete)             Encryption Change →
extension LinkCore {
    /// LE Encrypt: AES-128 of the plaintext with the key, all in HCI byte order.
    mutating func encrypt(_ id: Int, parameters: [UInt8]) {
        let opcode = LEEncryptFunction.opcode
        guard parameters.count == 32,
              let encrypted = LEEncryptFunction.encrypt(key: parameters[0..<16], plaintext: parameters[16..<32]) else {
            // Full-length return parameters even on failure: a host may check the length first.
            return complete(id, opcode, returning: [UInt8](repeating: 0, count: 16), status: .invalidParameters)
        }
        complete(id, opcode, returning: encrypted)
    }

    /// Command Complete with `status` and raw return parameters after it.
    mutating func complete(_ id: Int, _ opcode: HCIOpcode, returning bytes: [UInt8], status: HCIStatus = .success) {
        emit(id, HCIEvent.commandComplete(HCICommandComplete(opcode: opcode, returnParameters: [status.rawValue] + bytes)))
    }

    /// The 8 octets of `value`, least significant first.
    static func littleEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// LE Enable Encryption from the central: Command Status now; one connection interval later
    /// (LL_ENC_REQ on the air) the peripheral's host is asked for the key. On an encrypted link
    /// this is a key refresh (encryption pauses, then starts with the new key).
    mutating func enableEncryption(_ id: Int, _ command: LEEnableEncryption) {
        let opcode = LEEnableEncryption.opcode
        guard let link = connection(id, command.handle) else {
            return commandStatus(id, opcode, .unknownConnectionIdentifier)
        }
        guard let connection = connections[link.id], connection.central.controller == id, connection.encryption == nil else {
            return commandStatus(id, opcode, .commandDisallowed)
        }
        commandStatus(id, opcode, .success)
        connections[link.id]?.encryption = EncryptionProcedure(
            key: command.longTermKey, randomNumber: command.randomNumber,
            encryptedDiversifier: command.encryptedDiversifier, refresh: connection.encrypted)
        // A peer without LE encryption answers LL_ENC_REQ with LL_UNKNOWN_RSP.
        let peerEncrypts = controllers[link.remote.controller]?.leFeatures.contains(.encryption) ?? false
        startProcedure(peerEncrypts ? .keyRequest : .encryptionEnd(.unsupportedByPeer), on: link.id)
    }

    /// LL_ENC_REQ arrived: the peripheral's host gets LE Long Term Key Request with Rand and EDIV.
    mutating func requestKey(on connectionID: Int) {
        guard let connection = connections[connectionID], let procedure = connection.encryption,
              procedure.stage == .requesting else { return }
        connections[connectionID]?.encryption?.stage = .awaitingKey
        emit(connection.peripheral.controller, LEMetaEvent.longTermKeyRequest(.init(
            handle: connection.peripheral.handle, randomNumber: procedure.randomNumber,
            encryptedDiversifier: procedure.encryptedDiversifier)))
    }

    /// The peripheral's host answers the key request (`key` nil for a negative reply): Command
    /// Complete now, the outcome one connection interval later. Without a request pending (or
    /// from the central) the answer is refused with 0x0C.
    mutating func answerKeyRequest(_ id: Int, handle: UInt16, key: HCIKey128?) {
        let opcode = key == nil ? LELongTermKeyRequestNegativeReply.opcode : LELongTermKeyRequestReply.opcode
        func reply(_ status: HCIStatus) {
            emit(id, HCIEvent.commandComplete(HCICommandComplete(
                opcode: opcode, returnParameters: HCIHandleReturn(status: status, handle: handle).parameterBytes)))
        }
        guard let link = connection(id, handle) else { return reply(.unknownConnectionIdentifier) }
        guard let connection = connections[link.id], connection.peripheral.controller == id,
              let procedure = connection.encryption, procedure.stage == .awaitingKey else {
            return reply(.commandDisallowed)
        }
        reply(.success)
        connections[link.id]?.encryption?.stage = .ending
        let outcome: EncryptionOutcome = key.map { $0 == procedure.key ? .started : .keysDiffer } ?? .rejected
        startProcedure(.encryptionEnd(outcome), on: link.id)
    }

    /// The end of an encryption start or refresh, as each outcome ends on a real link:
    /// - the same key: Encryption Change (0x08, status 0, on) at both ends, or Encryption Key
    ///   Refresh Complete (0x30, status 0) for a refresh;
    /// - no key: the central gets Encryption Change with 0x06 PIN or Key Missing (off); during a
    ///   refresh the link was paused and cannot continue unencrypted, so it ends with 0x06 at
    ///   both ends;
    /// - different keys: the first encrypted PDU fails its MIC and the link ends with 0x3D at
    ///   both ends;
    /// - a peer without LE encryption: the central gets Encryption Change with 0x1A Unsupported
    ///   Remote Feature.
    mutating func endEncryption(_ outcome: EncryptionOutcome, on connectionID: Int) {
        guard let connection = connections[connectionID], let procedure = connection.encryption else { return }
        connections[connectionID]?.encryption = nil
        let central = connection.central
        let peripheral = connection.peripheral
        switch outcome {
        case .started:
            connections[connectionID]?.encrypted = true
            for end in [central, peripheral] {
                if procedure.refresh {
                    emit(end.controller, .event(code: Self.keyRefreshCompleteCode, parameters: HCIHandleReturn(handle: end.handle).parameterBytes))
                } else {
                    emit(end.controller, HCIEvent.encryptionChange(.init(handle: end.handle, encryptionEnabled: 1)))
                }
            }
        case .rejected where procedure.refresh:
            endConnection(connectionID, reasonForInitiator: .pinOrKeyMissing, reasonForPeer: .pinOrKeyMissing, initiator: central.controller)
        case .rejected:
            emit(central.controller, HCIEvent.encryptionChange(.init(status: .pinOrKeyMissing, handle: central.handle, encryptionEnabled: 0)))
        case .keysDiffer:
            endConnection(connectionID, reasonForInitiator: .micFailure, reasonForPeer: .micFailure, initiator: central.controller)
        case .unsupportedByPeer:
            emit(central.controller, HCIEvent.encryptionChange(.init(
                status: .unsupportedRemoteFeature, handle: central.handle, encryptionEnabled: connection.encrypted ? 1 : 0)))
        }
    }

    /// Event code of Encryption Key Refresh Complete (status, handle).
    static let keyRefreshCompleteCode: UInt8 = 0x30
}
