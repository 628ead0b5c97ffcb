import BluetideBase

/// Connection parameters asked for in a Connection Parameter Update Request
/// (Core Vol 3 Part A 4.20), in the controller's units.
public struct L2CAPConnectionParameters: Hashable, Sendable {
    /// Minimum connection interval, units of 1.25 ms (valid 6...3200).
    public var intervalMin: UInt16
    /// Maximum connection interval, units of 1.25 ms (valid 6...3200, ≥ min).
    public var intervalMax: UInt16
    /// Peripheral latency, in connection events (valid 0...499).
    public var peripheralLatency: UInt16
    /// Supervision timeout, units of 10 ms (valid 10...3200).
    public var supervisionTimeout: UInt16

    /// Parameters in controller units (see each property).
    public init(intervalMin: UInt16, intervalMax: UInt16, peripheralLatency: UInt16, supervisionTimeout: UInt16) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
    }

    /// True when every field is in range and the supervision timeout is longer than
    /// (1 + latency) × max interval × 2, as the Link Layer requires.
    public var isValid: Bool {
        guard (6...3200).contains(intervalMin), (6...3200).contains(intervalMax), intervalMin <= intervalMax,
            peripheralLatency <= 499, (10...3200).contains(supervisionTimeout)
        else { return false }
        // timeout (10 ms units) × 10 ms > (1 + latency) × max × 1.25 ms × 2, in units of 0.25 ms.
        let timeoutQuarterMs = Int(supervisionTimeout) * 40
        let needed = (1 + Int(peripheralLatency)) * Int(intervalMax) * 5 * 2
        return timeoutQuarterMs > needed
    }
}

/// Result of a Connection Parameter Update Response.
public enum L2CAPConnectionParameterUpdateResult: Hashable, Sendable {
    /// 0x0000: the central will apply the parameters.
    case accepted
    /// 0x0001: the central refused them.
    case rejected
    /// Any other (reserved) value.
    case other(UInt16)

    /// The wire value.
    public var rawValue: UInt16 {
        switch self {
        case .accepted: 0
        case .rejected: 1
        case let .other(v): v
        }
    }

    /// From the wire value.
    public init(rawValue: UInt16) {
        switch rawValue {
        case 0: self = .accepted
        case 1: self = .rejected
        default: self = .other(rawValue)
        }
    }
}

/// Reason in a Command Reject (Core Vol 3 Part A 4.1).
public struct L2CAPRejectReason: RawRepresentable, Hashable, Sendable {
    /// The wire value.
    public let rawValue: UInt16
    /// Wraps a wire value.
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// 0x0000: the command code is not understood.
    public static let commandNotUnderstood = L2CAPRejectReason(rawValue: 0x0000)
    /// 0x0001: the signalling MTU was exceeded (data: actual MTU u16).
    public static let signalingMTUExceeded = L2CAPRejectReason(rawValue: 0x0001)
    /// 0x0002: a CID in the request is invalid (data: local and remote CID).
    public static let invalidCID = L2CAPRejectReason(rawValue: 0x0002)
}

/// One LE signalling command (Core Vol 3 Part A 4): code u8, identifier u8, length u16, data.
/// On the LE signalling channel each C-frame carries exactly one command.
public enum L2CAPSignalingCommand: Hashable, Sendable {
    /// Code 0x01: the peer could not handle a command.
    case commandReject(identifier: UInt8, reason: L2CAPRejectReason, data: [UInt8])
    /// Code 0x12: the peripheral asks the central for new connection parameters.
    case connectionParameterUpdateRequest(identifier: UInt8, parameters: L2CAPConnectionParameters)
    /// Code 0x13: the central's answer.
    case connectionParameterUpdateResponse(identifier: UInt8, result: L2CAPConnectionParameterUpdateResult)
    /// Code 0x14: LE Credit Based Connection Request (kept raw-ish: SPSM, source CID, MTU, MPS, credits).
    case leCreditBasedConnectionRequest(identifier: UInt8, spsm: UInt16, sourceCID: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16)
    /// Code 0x15: LE Credit Based Connection Response.
    case leCreditBasedConnectionResponse(identifier: UInt8, destinationCID: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16, result: UInt16)
    /// Any other code, data undecoded.
    case unknown(code: UInt8, identifier: UInt8, data: [UInt8])

    /// Command codes this type models.
    public enum Code {
        /// 0x01 Command Reject.
        public static let commandReject: UInt8 = 0x01
        /// 0x06 Disconnection Request (data: destination CID, source CID).
        public static let disconnectionRequest: UInt8 = 0x06
        /// 0x07 Disconnection Response.
        public static let disconnectionResponse: UInt8 = 0x07
        /// 0x12 Connection Parameter Update Request.
        public static let connectionParameterUpdateRequest: UInt8 = 0x12
        /// 0x13 Connection Parameter Update Response.
        public static let connectionParameterUpdateResponse: UInt8 = 0x13
        /// 0x14 LE Credit Based Connection Request.
        public static let leCreditBasedConnectionRequest: UInt8 = 0x14
        /// 0x15 LE Credit Based Connection Response.
        public static let leCreditBasedConnectionResponse: UInt8 = 0x15
    }

    /// The command code.
    public var code: UInt8 {
        switch self {
        case .commandReject: Code.commandReject
        case .connectionParameterUpdateRequest: Code.connectionParameterUpdateRequest
        case .connectionParameterUpdateResponse: Code.connectionParameterUpdateResponse
        case .leCreditBasedConnectionRequest: Code.leCreditBasedConnectionRequest
        case .leCreditBasedConnectionResponse: Code.leCreditBasedConnectionResponse
        case let .unknown(code, _, _): code
        }
    }

    /// The identifier that pairs a request with its response (0 is never valid).
    public var identifier: UInt8 {
        switch self {
        case let .commandReject(id, _, _), let .connectionParameterUpdateRequest(id, _),
            let .connectionParameterUpdateResponse(id, _), let .leCreditBasedConnectionRequest(id, _, _, _, _, _),
            let .leCreditBasedConnectionResponse(id, _, _, _, _, _), let .unknown(_, id, _):
            id
        }
    }

    /// The command's bytes (the payload of a C-frame on CID 0x0005).
    public var bytes: [UInt8] {
        var data = ByteWriter()
        switch self {
        case let .commandReject(_, reason, extra):
            data.write(reason.rawValue); data.write(bytes: extra)
        case let .connectionParameterUpdateRequest(_, p):
            data.write(p.intervalMin); data.write(p.intervalMax); data.write(p.peripheralLatency)
            data.write(p.supervisionTimeout)
        case let .connectionParameterUpdateResponse(_, result):
            data.write(result.rawValue)
        case let .leCreditBasedConnectionRequest(_, spsm, scid, mtu, mps, credits):
            data.write(spsm); data.write(scid); data.write(mtu); data.write(mps); data.write(credits)
        case let .leCreditBasedConnectionResponse(_, dcid, mtu, mps, credits, result):
            data.write(dcid); data.write(mtu); data.write(mps); data.write(credits); data.write(result)
        case let .unknown(_, _, extra):
            data.write(bytes: extra)
        }
        var w = ByteWriter()
        w.write(code)
        w.write(identifier)
        w.write(UInt16(truncatingIfNeeded: data.count))
        w.write(bytes: data.bytes)
        return w.bytes
    }

    /// Decodes one command. The length field must match the bytes present; known commands
    /// must have their exact data length.
    public init(bytes: [UInt8]) throws(DecodingError) {
        var r = ByteReader(bytes)
        let code = try r.readUInt8("signalling code")
        let identifier = try r.readUInt8("signalling identifier")
        let length = Int(try r.read(UInt16.self, "signalling length"))
        let data = try r.readBytes(length, "signalling data")
        guard r.isAtEnd else {
            throw .invalid("signalling length", expected: "\(bytes.count - 4)", found: "\(length)", at: 2)
        }
        var d = ByteReader(data)
        func exact(_ n: Int, _ name: String) throws(DecodingError) {
            guard data.count == n else {
                throw .invalid("\(name) data length", expected: "\(n)", found: "\(data.count)", at: 2)
            }
        }
        switch code {
        case Code.commandReject:
            let reason = try d.read(UInt16.self, "reject reason")
            self = .commandReject(identifier: identifier, reason: L2CAPRejectReason(rawValue: reason), data: d.readRemaining())
        case Code.connectionParameterUpdateRequest:
            try exact(8, "connection parameter update request")
            let p = L2CAPConnectionParameters(
                intervalMin: try d.read(UInt16.self, "interval min"),
                intervalMax: try d.read(UInt16.self, "interval max"),
                peripheralLatency: try d.read(UInt16.self, "peripheral latency"),
                supervisionTimeout: try d.read(UInt16.self, "timeout multiplier"))
            self = .connectionParameterUpdateRequest(identifier: identifier, parameters: p)
        case Code.connectionParameterUpdateResponse:
            try exact(2, "connection parameter update response")
            self = .connectionParameterUpdateResponse(
                identifier: identifier, result: .init(rawValue: try d.read(UInt16.self, "result")))
        case Code.leCreditBasedConnectionRequest:
            try exact(10, "LE credit based connection request")
            self = .leCreditBasedConnectionRequest(
                identifier: identifier, spsm: try d.read(UInt16.self, "SPSM"), sourceCID: try d.read(UInt16.self, "source CID"),
                mtu: try d.read(UInt16.self, "MTU"), mps: try d.read(UInt16.self, "MPS"),
                initialCredits: try d.read(UInt16.self, "initial credits"))
        case Code.leCreditBasedConnectionResponse:
            try exact(10, "LE credit based connection response")
            self = .leCreditBasedConnectionResponse(
                identifier: identifier, destinationCID: try d.read(UInt16.self, "destination CID"),
                mtu: try d.read(UInt16.self, "MTU"), mps: try d.read(UInt16.self, "MPS"),
                initialCredits: try d.read(UInt16.self, "initial credits"), result: try d.read(UInt16.self, "result"))
        default:
            self = .unknown(code: code, identifier: identifier, data: data)
        }
    }
}
