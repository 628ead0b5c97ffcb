/// An ATT opcode byte (Core Vol 3 Part F 3.3.1): bits 0–5 the method, bit 6 the command flag,
/// bit 7 the authentication-signature flag.
public struct ATTOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The opcode byte.
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let errorResponse = ATTOpcode(0x01)
    public static let exchangeMTURequest = ATTOpcode(0x02)
    public static let exchangeMTUResponse = ATTOpcode(0x03)
    public static let findInformationRequest = ATTOpcode(0x04)
    public static let findInformationResponse = ATTOpcode(0x05)
    public static let findByTypeValueRequest = ATTOpcode(0x06)
    public static let findByTypeValueResponse = ATTOpcode(0x07)
    public static let readByTypeRequest = ATTOpcode(0x08)
    public static let readByTypeResponse = ATTOpcode(0x09)
    public static let readRequest = ATTOpcode(0x0A)
    public static let readResponse = ATTOpcode(0x0B)
    public static let readBlobRequest = ATTOpcode(0x0C)
    public static let readBlobResponse = ATTOpcode(0x0D)
    public static let readMultipleRequest = ATTOpcode(0x0E)
    public static let readMultipleResponse = ATTOpcode(0x0F)
    public static let readByGroupTypeRequest = ATTOpcode(0x10)
    public static let readByGroupTypeResponse = ATTOpcode(0x11)
    public static let writeRequest = ATTOpcode(0x12)
    public static let writeResponse = ATTOpcode(0x13)
    public static let prepareWriteRequest = ATTOpcode(0x16)
    public static let prepareWriteResponse = ATTOpcode(0x17)
    public static let executeWriteRequest = ATTOpcode(0x18)
    public static let executeWriteResponse = ATTOpcode(0x19)
    public static let handleValueNotification = ATTOpcode(0x1B)
    public static let handleValueIndication = ATTOpcode(0x1D)
    public static let handleValueConfirmation = ATTOpcode(0x1E)
    public static let writeCommand = ATTOpcode(0x52)
    public static let signedWriteCommand = ATTOpcode(0xD2)

    /// What role a PDU with this opcode plays in the protocol.
    public enum Kind: Sendable, Equatable {
        /// Client → server, answered by exactly one response.
        case request
        /// Server → client answer to a request (including Error Response).
        case response
        /// Client → server, no answer (command flag set).
        case command
        /// Server → client, no answer.
        case notification
        /// Server → client, answered by a confirmation.
        case indication
        /// Client → server answer to an indication.
        case confirmation
    }

    /// True when the command flag (bit 6) is set: the PDU is never answered.
    public var isCommand: Bool { rawValue & 0x40 != 0 }
    /// True when the authentication-signature flag (bit 7) is set.
    public var hasSignature: Bool { rawValue & 0x80 != 0 }

    /// The role of this opcode. Unknown opcodes with the command flag are commands; other
    /// unknown even-numbered method values are taken to be requests, odd ones responses (the
    /// pattern every request/response pair in the specification follows).
    public var kind: Kind {
        switch self {
        case .errorResponse, .exchangeMTUResponse, .findInformationResponse, .findByTypeValueResponse,
            .readByTypeResponse, .readResponse, .readBlobResponse, .readMultipleResponse,
            .readByGroupTypeResponse, .writeResponse, .prepareWriteResponse, .executeWriteResponse,
            ATTOpcode(0x21):
            return .response
        case .handleValueNotification, ATTOpcode(0x23): return .notification
        case .handleValueIndication: return .indication
        case .handleValueConfirmation: return .confirmation
        default:
            if isCommand { return .command }
            return rawValue & 0x01 == 0 ? .request : .response
        }
    }

    /// The response opcode that answers this request, when it is a known request.
    public var responseOpcode: ATTOpcode? {
        switch self {
        case .exchangeMTURequest, .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest,
            .readRequest, .readBlobRequest, .readMultipleRequest, .readByGroupTypeRequest, .writeRequest,
            .prepareWriteRequest, .executeWriteRequest, ATTOpcode(0x20):
            return ATTOpcode(rawValue &+ 1)
        default: return nil
        }
    }

    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        return "0x" + (hex.count < 2 ? "0" + hex : hex)
    }
}
