import BluetideBase

/// An HCI status or disconnection reason code (Core spec Vol 1 Part F, "Controller error codes").
///
/// Any byte is accepted (unknown codes are kept and described by number), so decoding never fails
/// on a status a newer controller invents.
public struct HCIStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as sent over HCI.
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x00: the command or operation succeeded.
    public static let success = HCIStatus(0x00)
    /// 0x01: the controller does not know the command's opcode.
    public static let unknownCommand = HCIStatus(0x01)
    /// 0x02: no connection (or pending operation) has this handle or identifier.
    public static let unknownConnectionIdentifier = HCIStatus(0x02)
    /// 0x03: hardware failure.
    public static let hardwareFailure = HCIStatus(0x03)
    /// 0x04: page timeout.
    public static let pageTimeout = HCIStatus(0x04)
    /// 0x05: authentication failure.
    public static let authenticationFailure = HCIStatus(0x05)
    /// 0x06: PIN or key missing.
    public static let pinOrKeyMissing = HCIStatus(0x06)
    /// 0x07: memory capacity exceeded.
    public static let memoryCapacityExceeded = HCIStatus(0x07)
    /// 0x08: the link supervision timeout expired (the peer went silent).
    public static let connectionTimeout = HCIStatus(0x08)
    /// 0x09: connection limit exceeded.
    public static let connectionLimitExceeded = HCIStatus(0x09)
    /// 0x0B: a connection to this device already exists.
    public static let connectionAlreadyExists = HCIStatus(0x0B)
    /// 0x0C: the command is not allowed in the controller's current state.
    public static let commandDisallowed = HCIStatus(0x0C)
    /// 0x0D: connection rejected, limited resources.
    public static let rejectedLimitedResources = HCIStatus(0x0D)
    /// 0x0E: connection rejected for security reasons.
    public static let rejectedSecurityReasons = HCIStatus(0x0E)
    /// 0x11: unsupported feature or parameter value.
    public static let unsupportedFeature = HCIStatus(0x11)
    /// 0x12: invalid HCI command parameters.
    public static let invalidParameters = HCIStatus(0x12)
    /// 0x13: the remote user ended the connection (the usual disconnect reason).
    public static let remoteUserTerminated = HCIStatus(0x13)
    /// 0x14: the remote device ended the connection, low resources.
    public static let remoteLowResources = HCIStatus(0x14)
    /// 0x15: the remote device ended the connection, powering off.
    public static let remotePowerOff = HCIStatus(0x15)
    /// 0x16: this host ended the connection.
    public static let localHostTerminated = HCIStatus(0x16)
    /// 0x1A: unsupported remote feature.
    public static let unsupportedRemoteFeature = HCIStatus(0x1A)
    /// 0x1F: unspecified error.
    public static let unspecifiedError = HCIStatus(0x1F)
    /// 0x22: LL response timeout.
    public static let llResponseTimeout = HCIStatus(0x22)
    /// 0x23: LL procedure collision.
    public static let llProcedureCollision = HCIStatus(0x23)
    /// 0x28: instant passed.
    public static let instantPassed = HCIStatus(0x28)
    /// 0x3A: controller busy.
    public static let controllerBusy = HCIStatus(0x3A)
    /// 0x3B: unacceptable connection parameters.
    public static let unacceptableConnectionParameters = HCIStatus(0x3B)
    /// 0x3C: advertising timeout.
    public static let advertisingTimeout = HCIStatus(0x3C)
    /// 0x3D: connection ended because of a MIC failure (wrong encryption key).
    public static let micFailure = HCIStatus(0x3D)
    /// 0x3E: the connection could not be established.
    public static let failedToEstablish = HCIStatus(0x3E)
    /// 0x42: no advertising set has this handle.
    public static let unknownAdvertisingIdentifier = HCIStatus(0x42)
    /// 0x44: operation cancelled by host.
    public static let cancelledByHost = HCIStatus(0x44)

    /// Whether this is 0x00 success.
    public var isSuccess: Bool { rawValue == 0 }

    /// The specification's name for the code, or nil when unknown.
    public var name: String? {
        switch rawValue {
        case 0x00: "success"
        case 0x01: "unknown HCI command"
        case 0x02: "unknown connection identifier"
        case 0x03: "hardware failure"
        case 0x04: "page timeout"
        case 0x05: "authentication failure"
        case 0x06: "PIN or key missing"
        case 0x07: "memory capacity exceeded"
        case 0x08: "connection timeout"
        case 0x09: "connection limit exceeded"
        case 0x0A: "synchronous connection limit exceeded"
        case 0x0B: "connection already exists"
        case 0x0C: "command disallowed"
        case 0x0D: "connection rejected (limited resources)"
        case 0x0E: "connection rejected (security reasons)"
        case 0x0F: "connection rejected (unacceptable address)"
        case 0x10: "connection accept timeout exceeded"
        case 0x11: "unsupported feature or parameter value"
        case 0x12: "invalid HCI command parameters"
        case 0x13: "remote user terminated connection"
        case 0x14: "remote device terminated connection (low resources)"
        case 0x15: "remote device terminated connection (power off)"
        case 0x16: "connection terminated by local host"
        case 0x17: "repeated attempts"
        case 0x18: "pairing not allowed"
        case 0x19: "unknown LMP PDU"
        case 0x1A: "unsupported remote feature"
        case 0x1E: "invalid LMP/LL parameters"
        case 0x1F: "unspecified error"
        case 0x20: "unsupported LMP/LL parameter value"
        case 0x21: "role change not allowed"
        case 0x22: "LMP/LL response timeout"
        case 0x23: "LMP/LL procedure collision"
        case 0x24: "LMP PDU not allowed"
        case 0x25: "encryption mode not acceptable"
        case 0x26: "link key cannot be changed"
        case 0x28: "instant passed"
        case 0x29: "pairing with unit key not supported"
        case 0x2A: "different transaction collision"
        case 0x2E: "channel classification not supported"
        case 0x2F: "insufficient security"
        case 0x30: "parameter out of mandatory range"
        case 0x37: "simple pairing not supported by host"
        case 0x38: "host busy (pairing)"
        case 0x3A: "controller busy"
        case 0x3B: "unacceptable connection parameters"
        case 0x3C: "advertising timeout"
        case 0x3D: "connection terminated due to MIC failure"
        case 0x3E: "connection failed to be established"
        case 0x40: "coarse clock adjustment rejected"
        case 0x41: "type0 submap not defined"
        case 0x42: "unknown advertising identifier"
        case 0x43: "limit reached"
        case 0x44: "operation cancelled by host"
        case 0x45: "packet too long"
        default: nil
        }
    }

    /// `0x13 (remote user terminated connection)`.
    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        let code = "0x" + (rawValue < 0x10 ? "0" : "") + hex
        return "\(code) (\(name ?? "unknown status"))"
    }
}

extension HCIStatus: HCIParameters {
    public init(from reader: inout ByteReader) throws(DecodingError) {
        self.init(try reader.readUInt8("status"))
    }
    public func encode(to writer: inout ByteWriter) { writer.write(rawValue) }
}
