import BluetideBase

/// The local device's Link Layer role on a connection.
public enum LinkRole: Sendable, Hashable {
    /// The initiator of the connection (answers parameter update requests).
    case central
    /// The advertiser that accepted the connection (may ask for new parameters).
    case peripheral
}

/// What the signalling channel reports to the layer above.
public enum L2CAPSignalingEvent: Equatable, Sendable {
    /// (Central) the peripheral asked for new parameters. When `accepted` the host should now
    /// issue HCI LE Connection Update with them; the response has already been produced.
    case connectionParameterUpdateRequested(L2CAPConnectionParameters, accepted: Bool)
    /// (Peripheral) the central answered our request with this identifier.
    case connectionParameterUpdateAnswered(identifier: UInt8, result: L2CAPConnectionParameterUpdateResult)
    /// The peer rejected one of our commands.
    case commandRejected(identifier: UInt8, reason: L2CAPRejectReason)
    /// A command could not be decoded (answered with Command Reject when it had an identifier).
    case malformed(DecodingError)
    /// A response arrived for no command we sent; it was dropped.
    case unexpectedResponse(L2CAPSignalingCommand)
}

/// The LE signalling channel (CID 0x0005) for one connection: answers the peer's commands and
/// builds our own. Pure state machine, no I/O.
public struct L2CAPSignalingHandler: Sendable {
    /// Our role on the link.
    public let role: LinkRole
    private var nextIdentifier: UInt8 = 1
    private var outstanding: [UInt8: UInt8] = [:]  // identifier → command code we sent

    /// The LE signalling MTU (MTUsig), octets.
    public static let signalingMTU = 23

    /// A handler for a new connection where we play `role`.
    public init(role: LinkRole) { self.role = role }

    /// (Peripheral) builds a Connection Parameter Update Request to send on CID 0x0005 and
    /// remembers its identifier so the answer can be matched.
    public mutating func makeConnectionParameterUpdateRequest(_ parameters: L2CAPConnectionParameters) -> L2CAPSignalingCommand {
        let id = allocateIdentifier()
        outstanding[id] = L2CAPSignalingCommand.Code.connectionParameterUpdateRequest
        return .connectionParameterUpdateRequest(identifier: id, parameters: parameters)
    }

    private mutating func allocateIdentifier() -> UInt8 {
        let id = nextIdentifier
        nextIdentifier = nextIdentifier == 0xFF ? 1 : nextIdentifier + 1
        return id
    }

    /// Handles one C-frame payload from the peer; returns the commands to send back and the
    /// events for the host.
    public mutating func receive(_ payload: [UInt8]) -> (replies: [L2CAPSignalingCommand], events: [L2CAPSignalingEvent]) {
        // The LE signalling MTU is 23 octets: a longer C-frame is rejected with our MTU.
        if payload.count > Self.signalingMTU {
            let error = DecodingError.invalid("signalling C-frame", expected: "at most \(Self.signalingMTU) bytes", found: "\(payload.count) bytes")
            guard payload[1] != 0 else { return ([], [.malformed(error)]) }
            return ([.commandReject(identifier: payload[1], reason: .signalingMTUExceeded, data: [UInt8(Self.signalingMTU), 0])], [.malformed(error)])
        }
        let command: L2CAPSignalingCommand
        do {
            command = try L2CAPSignalingCommand(bytes: payload)
        } catch {
            // Answer "not understood" when there is a usable identifier (0 is never valid).
            if payload.count >= 2, payload[1] != 0, payload[0] != L2CAPSignalingCommand.Code.commandReject {
                return ([.commandReject(identifier: payload[1], reason: .commandNotUnderstood, data: [])], [.malformed(error)])
            }
            return ([], [.malformed(error)])
        }
        if command.identifier == 0 {
            return ([], [.malformed(.invalid("signalling identifier", expected: "1...255", found: "0", at: 1))])
        }
        switch command {
        case let .connectionParameterUpdateRequest(id, parameters):
            guard role == .central else {
                return ([.commandReject(identifier: id, reason: .commandNotUnderstood, data: [])], [])
            }
            let ok = parameters.isValid
            return (
                [.connectionParameterUpdateResponse(identifier: id, result: ok ? .accepted : .rejected)],
                [.connectionParameterUpdateRequested(parameters, accepted: ok)]
            )
        case let .connectionParameterUpdateResponse(id, result):
            guard outstanding.removeValue(forKey: id) == L2CAPSignalingCommand.Code.connectionParameterUpdateRequest else {
                return ([], [.unexpectedResponse(command)])
            }
            return ([], [.connectionParameterUpdateAnswered(identifier: id, result: result)])
        case let .commandReject(id, reason, _):
            guard outstanding.removeValue(forKey: id) != nil else { return ([], [.unexpectedResponse(command)]) }
            return ([], [.commandRejected(identifier: id, reason: reason)])
        case let .leCreditBasedConnectionRequest(id, _, _, _, _, _):
            // No LE credit-based channels are offered: result 0x0002 "SPSM not supported".
            return ([.leCreditBasedConnectionResponse(identifier: id, destinationCID: 0, mtu: 0, mps: 0, initialCredits: 0, result: 0x0002)], [])
        case .leCreditBasedConnectionResponse:
            return ([], [.unexpectedResponse(command)])
        case let .unknown(code, id, data) where code == L2CAPSignalingCommand.Code.disconnectionRequest && data.count == 4:
            // No dynamic channels are ever open here, so the CIDs are invalid: Vol 3 Part A 4.1
            // asks for reason 0x0002 with the request's destination and source CIDs (our local
            // endpoint first, then the peer's).
            return ([.commandReject(identifier: id, reason: .invalidCID, data: data)], [])
        case let .unknown(code, _, _) where code == L2CAPSignalingCommand.Code.disconnectionResponse:
            return ([], [.unexpectedResponse(command)])  // for no request of ours: silently discarded
        case let .unknown(_, id, _):
            return ([.commandReject(identifier: id, reason: .commandNotUnderstood, data: [])], [])
        }
    }
}
