/// An ATT error code, as carried in an Error Response (Core Vol 3 Part F 3.4.1.1).
///
/// A struct rather than an enum so application errors (0x80–0x9F), common profile errors
/// (0xE0–0xFF) and codes from newer specifications stay representable.
public struct ATTErrorCode: RawRepresentable, Hashable, Sendable, Error, CustomStringConvertible {
    /// The code byte.
    public let rawValue: UInt8

    /// Wraps an error code byte.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Wraps an error code byte.
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x01: the handle is not valid on this server.
    public static let invalidHandle = ATTErrorCode(0x01)
    /// 0x02: the attribute cannot be read.
    public static let readNotPermitted = ATTErrorCode(0x02)
    /// 0x03: the attribute cannot be written.
    public static let writeNotPermitted = ATTErrorCode(0x03)
    /// 0x04: the PDU was malformed.
    public static let invalidPDU = ATTErrorCode(0x04)
    /// 0x05: the link must be authenticated first.
    public static let insufficientAuthentication = ATTErrorCode(0x05)
    /// 0x06: the server does not support this request.
    public static let requestNotSupported = ATTErrorCode(0x06)
    /// 0x07: the offset is past the end of the value.
    public static let invalidOffset = ATTErrorCode(0x07)
    /// 0x08: the client must be authorized first.
    public static let insufficientAuthorization = ATTErrorCode(0x08)
    /// 0x09: too many prepared writes are queued.
    public static let prepareQueueFull = ATTErrorCode(0x09)
    /// 0x0A: no attribute in the handle range matched.
    public static let attributeNotFound = ATTErrorCode(0x0A)
    /// 0x0B: the attribute cannot be read with Read Blob.
    public static let attributeNotLong = ATTErrorCode(0x0B)
    /// 0x0C: the encryption key is too short.
    public static let insufficientEncryptionKeySize = ATTErrorCode(0x0C)
    /// 0x0D: the value has the wrong length.
    public static let invalidAttributeValueLength = ATTErrorCode(0x0D)
    /// 0x0E: the request could not be completed for an unlikely reason.
    public static let unlikelyError = ATTErrorCode(0x0E)
    /// 0x0F: the link must be encrypted first.
    public static let insufficientEncryption = ATTErrorCode(0x0F)
    /// 0x10: the type is not a grouping attribute type.
    public static let unsupportedGroupType = ATTErrorCode(0x10)
    /// 0x11: the server ran out of resources.
    public static let insufficientResources = ATTErrorCode(0x11)
    /// 0x12: the client's view of the database is out of date.
    public static let databaseOutOfSync = ATTErrorCode(0x12)
    /// 0x13: the value is not allowed.
    public static let valueNotAllowed = ATTErrorCode(0x13)
    /// 0xFD: Client Characteristic Configuration descriptor improperly configured.
    public static let cccdImproperlyConfigured = ATTErrorCode(0xFD)
    /// 0xFE: a procedure is already in progress.
    public static let procedureAlreadyInProgress = ATTErrorCode(0xFE)
    /// 0xFF: a value is out of range.
    public static let outOfRange = ATTErrorCode(0xFF)

    /// An application error (0x80–0x9F) defined by a higher-layer specification.
    public static func application(_ offset: UInt8) -> ATTErrorCode {
        ATTErrorCode(0x80 | (offset & 0x1F))
    }

    /// True for the application range 0x80–0x9F.
    public var isApplicationError: Bool { rawValue >= 0x80 && rawValue <= 0x9F }

    /// The spec name, or the range it falls in.
    public var name: String {
        switch rawValue {
        case 0x01: "Invalid Handle"
        case 0x02: "Read Not Permitted"
        case 0x03: "Write Not Permitted"
        case 0x04: "Invalid PDU"
        case 0x05: "Insufficient Authentication"
        case 0x06: "Request Not Supported"
        case 0x07: "Invalid Offset"
        case 0x08: "Insufficient Authorization"
        case 0x09: "Prepare Queue Full"
        case 0x0A: "Attribute Not Found"
        case 0x0B: "Attribute Not Long"
        case 0x0C: "Encryption Key Size Too Short"
        case 0x0D: "Invalid Attribute Value Length"
        case 0x0E: "Unlikely Error"
        case 0x0F: "Insufficient Encryption"
        case 0x10: "Unsupported Group Type"
        case 0x11: "Insufficient Resources"
        case 0x12: "Database Out Of Sync"
        case 0x13: "Value Not Allowed"
        case 0x80...0x9F: "Application Error"
        case 0xFD: "CCCD Improperly Configured"
        case 0xFE: "Procedure Already In Progress"
        case 0xFF: "Out Of Range"
        case 0xE0...0xFC: "Common Profile Error"
        default: "Reserved"
        }
    }

    /// `0x02 (Read Not Permitted)` style text.
    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        return "0x\(hex.count < 2 ? "0" + hex : hex) (\(name))"
    }
}
