/// An ATT opcode byte (Core Vol 3 Part F 3.3.1): bits 0–5 the method, bit 6 the command flag,
/// bit 7 the authentication-signature flag.
public struct ATTOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The opcode byte.
    public let rawValue: UInt8

    /// Wraps an opcode byte.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Wraps an opcode byte.
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x01: Error Response.
    public static let errorResponse = ATTOpcode(0x01)
    /// 0x02: Exchange MTU Request.
    public static let exchangeMTURequest = ATTOpcode(0x02)
    /// 0x03: Exchange MTU Response.
    public static let exchangeMTUResponse = ATTOpcode(0x03)
    /// 0x04: Find Information Request.
    public static let findInformationRequest = ATTOpcode(0x04)
    /// 0x05: Find Information Response.
    public static let findInformationResponse = ATTOpcode(0x05)
    /// 0x06: Find By Type Value Request.
    public static let findByTypeValueRequest = ATTOpcode(0x06)
    /// 0x07: Find By Type Value Response.
    public static let findByTypeValueResponse = ATTOpcode(0x07)
    /// 0x08: Read By Type Request.
    public static let readByTypeRequest = ATTOpcode(0x08)
    /// 0x09: Read By Type Response.
    public static let readByTypeResponse = ATTOpcode(0x09)
    /// 0x0A: Read Request.
    public static let readRequest = ATTOpcode(0x0A)
    /// 0x0B: Read Response.
    public static let readResponse = ATTOpcode(0x0B)
    /// 0x0C: Read Blob Request.
    public static let readBlobRequest = ATTOpcode(0x0C)
    /// 0x0D: Read Blob Response.
    public static let readBlobResponse = ATTOpcode(0x0D)
    /// 0x0E: Read Multiple Request.
    public static let readMultipleRequest = ATTOpcode(0x0E)
    /// 0x0F: Read Multiple Response.
    public static let readMultipleResponse = ATTOpcode(0x0F)
    /// 0x10: Read By Group Type Request.
    public static let readByGroupTypeRequest = ATTOpcode(0x10)
    /// 0x11: Read By Group Type Response.
    public static let readByGroupTypeResponse = ATTOpcode(0x11)
    /// 0x12: Write Request.
    public static let writeRequest = ATTOpcode(0x12)
    /// 0x13: Write Response.
    public static let writeResponse = ATTOpcode(0x13)
    /// 0x16: Prepare Write Request.
    public static let prepareWriteRequest = ATTOpcode(0x16)
    /// 0x17: Prepare Write Response.
    public static let prepareWriteResponse = ATTOpcode(0x17)
    /// 0x18: Execute Write Request.
    public static let executeWriteRequest = ATTOpcode(0x18)
    /// 0x19: Execute Write Response.
    public static let executeWriteResponse = ATTOpcode(0x19)
    /// 0x1B: Handle Value Notification.
    public static let handleValueNotification = ATTOpcode(0x1B)
    /// 0x1D: Handle Value Indication.
    public static let handleValueIndication = ATTOpcode(0x1D)
    /// 0x1E: Handle Value Confirmation.
    public static let handleValueConfirmation = ATTOpcode(0x1E)
    /// 0x20: Read Multiple Variable Request.
    public static let readMultipleVariableRequest = ATTOpcode(0x20)
    /// 0x21: Read Multiple Variable Response.
    public static let readMultipleVariableResponse = ATTOpcode(0x21)
    /// 0x23: Multiple Handle Value Notification.
    public static let multipleHandleValueNotification = ATTOpcode(0x23)
    /// 0x52: Write Command.
    public static let writeCommand = ATTOpcode(0x52)
    /// 0xD2: Signed Write Command.
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
            .readMultipleVariableResponse:
            return .response
        case .handleValueNotification, .multipleHandleValueNotification: return .notification
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
            .prepareWriteRequest, .executeWriteRequest, .readMultipleVariableRequest:
            return ATTOpcode(rawValue &+ 1)
        default: return nil
        }
    }

    /// The PDU's name in the specification with its opcode ("Read By Type Response (0x09)"),
    /// or "ATT opcode 0xNN" for one Bluetide has no name for.
    public var name: String {
        guard let name = Self.names[rawValue] else { return "ATT opcode \(description)" }
        return "\(name) (\(description))"
    }

    /// ``name`` with its article ("an Error Response (0x01)", "a Read Response (0x0B)").
    public var aName: String { "\(Self.article(name)) \(name)" }

    /// "an" before a word that starts with a vowel, else "a".
    public static func article(_ text: String) -> String {
        text.first.map { "AEIOU".contains($0) } == true ? "an" : "a"
    }

    private static let names: [UInt8: String] = [
        0x01: "Error Response", 0x02: "Exchange MTU Request", 0x03: "Exchange MTU Response",
        0x04: "Find Information Request", 0x05: "Find Information Response",
        0x06: "Find By Type Value Request", 0x07: "Find By Type Value Response",
        0x08: "Read By Type Request", 0x09: "Read By Type Response", 0x0A: "Read Request", 0x0B: "Read Response",
        0x0C: "Read Blob Request", 0x0D: "Read Blob Response", 0x0E: "Read Multiple Request",
        0x0F: "Read Multiple Response", 0x10: "Read By Group Type Request", 0x11: "Read By Group Type Response",
        0x12: "Write Request", 0x13: "Write Response", 0x16: "Prepare Write Request", 0x17: "Prepare Write Response",
        0x18: "Execute Write Request", 0x19: "Execute Write Response", 0x1B: "Handle Value Notification",
        0x1D: "Handle Value Indication", 0x1E: "Handle Value Confirmation", 0x20: "Read Multiple Variable Request",
        0x21: "Read Multiple Variable Response", 0x23: "Multiple Handle Value Notification", 0x52: "Write Command",
        0xD2: "Signed Write Command",
    ]

    /// `0x0A` style hex.
    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        return "0x" + (hex.count < 2 ? "0" + hex : hex)
    }
}
