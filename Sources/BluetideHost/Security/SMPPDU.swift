import BluetideBase

/// The command code, first octet of every SMP PDU (Core Vol 3 Part H 3.3, Table 3.3).
public enum SMPCode: UInt8, Sendable, Hashable, CaseIterable {
    case pairingRequest = 0x01
    case pairingResponse = 0x02
    case pairingConfirm = 0x03
    case pairingRandom = 0x04
    case pairingFailed = 0x05
    case encryptionInformation = 0x06
    case centralIdentification = 0x07
    case identityInformation = 0x08
    case identityAddressInformation = 0x09
    case signingInformation = 0x0A
    case securityRequest = 0x0B
    case pairingPublicKey = 0x0C
    case pairingDHKeyCheck = 0x0D
    case keypressNotification = 0x0E

    /// Octets after the code that the command carries (every SMP command has a fixed length).
    public var parameterLength: Int {
        switch self {
        case .pairingRequest, .pairingResponse: return 6
        case .pairingConfirm, .pairingRandom, .encryptionInformation, .identityInformation,
            .signingInformation, .pairingDHKeyCheck:
            return 16
        case .pairingFailed, .securityRequest, .keypressNotification: return 1
        case .centralIdentification: return 10
        case .identityAddressInformation: return 7
        case .pairingPublicKey: return 64
        }
    }
}

/// One Security Manager Protocol PDU, carried on L2CAP CID 0x0006 (Core Vol 3 Part H 3.5–3.6).
///
/// Multi-octet values are kept in the order they travel in (least significant octet first), the
/// order the ``SMPCrypto`` toolbox takes them in.
public enum SMPPDU: Sendable, Hashable {
    /// 0x01: the initiator's features (3.5.1).
    case pairingRequest(SMPPairingFeatures)
    /// 0x02: the responder's features (3.5.2).
    case pairingResponse(SMPPairingFeatures)
    /// 0x03: a 128-bit confirm value (3.5.3).
    case pairingConfirm([UInt8])
    /// 0x04: a 128-bit random value or nonce (3.5.4).
    case pairingRandom([UInt8])
    /// 0x05: pairing ends, with the reason (3.5.5).
    case pairingFailed(SMPPairingFailureReason)
    /// 0x06: a legacy Long Term Key (3.6.2).
    case encryptionInformation(longTermKey: [UInt8])
    /// 0x07: the EDIV and Rand that identify the LTK just sent (3.6.3).
    case centralIdentification(ediv: UInt16, random: UInt64)
    /// 0x08: the Identity Resolving Key (3.6.4).
    case identityInformation(identityResolvingKey: [UInt8])
    /// 0x09: the public or static random identity address (3.6.5).
    case identityAddressInformation(BluetoothAddress)
    /// 0x0A: the Connection Signature Resolving Key (3.6.6).
    case signingInformation(signatureKey: [UInt8])
    /// 0x0B: a peripheral asks the central to secure the link (3.6.7).
    case securityRequest(SMPAuthRequirements)
    /// 0x0C: the P-256 public key, X then Y, each 32 octets least significant first (3.5.6).
    case pairingPublicKey(SMPPublicKey)
    /// 0x0D: the 128-bit DHKey check value Ea or Eb (3.5.7).
    case pairingDHKeyCheck([UInt8])
    /// 0x0E: progress of passkey typing on the other side (3.5.8).
    case keypressNotification(SMPKeypress)

    /// The command code.
    public var code: SMPCode {
        switch self {
        case .pairingRequest: return .pairingRequest
        case .pairingResponse: return .pairingResponse
        case .pairingConfirm: return .pairingConfirm
        case .pairingRandom: return .pairingRandom
        case .pairingFailed: return .pairingFailed
        case .encryptionInformation: return .encryptionInformation
        case .centralIdentification: return .centralIdentification
        case .identityInformation: return .identityInformation
        case .identityAddressInformation: return .identityAddressInformation
        case .signingInformation: return .signingInformation
        case .securityRequest: return .securityRequest
        case .pairingPublicKey: return .pairingPublicKey
        case .pairingDHKeyCheck: return .pairingDHKeyCheck
        case .keypressNotification: return .keypressNotification
        }
    }

    /// Decodes one PDU. Throws ``DecodingError`` naming the field for an unknown code, a length
    /// other than the command's fixed one, or a parameter outside its defined values.
    public init(bytes: [UInt8]) throws(DecodingError) {
        var reader = ByteReader(bytes)
        let raw = try reader.readUInt8("SMP.code")
        guard let code = SMPCode(rawValue: raw) else {
            throw .invalid("SMP.code", expected: "a command code 0x01…0x0E", found: "0x" + [raw].hexString, at: 0)
        }
        let name = "SMP.\(code)"
        try reader.require(code.parameterLength, name)
        guard reader.remaining == code.parameterLength else {
            throw .invalid(
                name, expected: "\(code.parameterLength) parameter octets", found: "\(reader.remaining)", at: 1)
        }
        switch code {
        case .pairingRequest: self = .pairingRequest(try Self.readFeatures(&reader, name))
        case .pairingResponse: self = .pairingResponse(try Self.readFeatures(&reader, name))
        case .pairingConfirm: self = .pairingConfirm(reader.readRemaining())
        case .pairingRandom: self = .pairingRandom(reader.readRemaining())
        case .pairingFailed: self = .pairingFailed(SMPPairingFailureReason(rawValue: try reader.readUInt8("\(name).reason")))
        case .encryptionInformation: self = .encryptionInformation(longTermKey: reader.readRemaining())
        case .centralIdentification:
            let ediv = try reader.read(UInt16.self, "\(name).EDIV")
            self = .centralIdentification(ediv: ediv, random: try reader.read(UInt64.self, "\(name).Rand"))
        case .identityInformation: self = .identityInformation(identityResolvingKey: reader.readRemaining())
        case .identityAddressInformation:
            let type = try reader.readUInt8("\(name).address type")
            guard let addressType = BluetoothAddress.AddressType(rawValue: type) else {
                throw .invalid("\(name).address type", expected: "0 (public) or 1 (random)", found: "\(type)", at: 1)
            }
            self = .identityAddressInformation(
                BluetoothAddress(value: try reader.readUInt48("\(name).address"), type: addressType))
        case .signingInformation: self = .signingInformation(signatureKey: reader.readRemaining())
        case .securityRequest:
            self = .securityRequest(SMPAuthRequirements(rawValue: try reader.readUInt8("\(name).AuthReq")))
        case .pairingPublicKey:
            let x = try reader.readBytes(32, "\(name).X")
            self = .pairingPublicKey(SMPPublicKey(x: x, y: try reader.readBytes(32, "\(name).Y")))
        case .pairingDHKeyCheck: self = .pairingDHKeyCheck(reader.readRemaining())
        case .keypressNotification:
            let type = try reader.readUInt8("\(name).type")
            guard let keypress = SMPKeypress(rawValue: type) else {
                throw .invalid("\(name).type", expected: "0…4", found: "\(type)", at: 1)
            }
            self = .keypressNotification(keypress)
        }
    }

    private static func readFeatures(_ reader: inout ByteReader, _ name: String) throws(DecodingError) -> SMPPairingFeatures {
        let io = try reader.readUInt8("\(name).IO capability")
        guard let ioCapability = SMPIOCapability(rawValue: io) else {
            throw .invalid("\(name).IO capability", expected: "0…4", found: "\(io)", at: 1)
        }
        let oob = try reader.readUInt8("\(name).OOB data flag")
        guard oob <= 1 else { throw .invalid("\(name).OOB data flag", expected: "0 or 1", found: "\(oob)", at: 2) }
        let auth = try reader.readUInt8("\(name).AuthReq")
        let keySize = try reader.readUInt8("\(name).maximum encryption key size")
        guard (7...16).contains(keySize) else {
            throw .invalid("\(name).maximum encryption key size", expected: "7…16", found: "\(keySize)", at: 4)
        }
        let initiator = try reader.readUInt8("\(name).initiator key distribution")
        let responder = try reader.readUInt8("\(name).responder key distribution")
        // Bits 4–7 of the key distribution fields and 6–7 of AuthReq are reserved: ignored on receipt.
        return SMPPairingFeatures(
            ioCapability: ioCapability, oobDataPresent: oob == 1, authRequirements: SMPAuthRequirements(rawValue: auth & 0x3F),
            maximumKeySize: keySize, initiatorKeys: SMPKeyDistribution(rawValue: initiator & 0x0F),
            responderKeys: SMPKeyDistribution(rawValue: responder & 0x0F))
    }

    /// The PDU's bytes: code then parameters. 128-bit values are written as 16 octets (padded
    /// with zeros or cut if a caller passed another length).
    public var bytes: [UInt8] {
        var writer = ByteWriter(capacity: 1 + code.parameterLength)
        writer.write(code.rawValue)
        switch self {
        case let .pairingRequest(features), let .pairingResponse(features):
            writer.write(features.ioCapability.rawValue)
            writer.write(UInt8(features.oobDataPresent ? 1 : 0))
            writer.write(features.authRequirements.rawValue)
            writer.write(features.maximumKeySize)
            writer.write(features.initiatorKeys.rawValue)
            writer.write(features.responderKeys.rawValue)
        case let .pairingConfirm(value), let .pairingRandom(value), let .encryptionInformation(value),
            let .identityInformation(value), let .signingInformation(value), let .pairingDHKeyCheck(value):
            writer.write(bytes: SMPCrypto.fixed(value, 16))
        case let .pairingFailed(reason):
            writer.write(reason.rawValue)
        case let .centralIdentification(ediv, random):
            writer.write(ediv)
            writer.write(random)
        case let .identityAddressInformation(address):
            writer.write(address.type.rawValue)
            writer.writeUInt48(address.value)
        case let .securityRequest(auth):
            writer.write(auth.rawValue)
        case let .pairingPublicKey(key):
            writer.write(bytes: SMPCrypto.fixed(key.x, 32))
            writer.write(bytes: SMPCrypto.fixed(key.y, 32))
        case let .keypressNotification(type):
            writer.write(type.rawValue)
        }
        return writer.bytes
    }
}
