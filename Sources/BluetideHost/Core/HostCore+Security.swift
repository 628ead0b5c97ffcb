import BluetideCore
import BluetideHCI

/// The one place of the host where link security happens: SMP PDUs (L2CAP CID 0x0006), the HCI
/// events Encryption Change (0x08) and Encryption Key Refresh Complete (0x30), and LE Long Term
/// Key Request (LE Meta 0x05) all come here, with per-link state.
///
/// Today it pairs with nobody: a Pairing Request (and, as central, a Security Request) is
/// answered with Pairing Failed 0x05 "Pairing Not Supported" (``SMPRefuser``), and an LTK
/// request gets a negative reply. A pairing state machine plugs in here: it can send SMP PDUs
/// and HCI commands (LE Enable Encryption 0x2019, LTK Request Reply 0x201A / Negative Reply
/// 0x201B) through ``Actions``, hears how its commands ended in ``commandFinished(_:on:_:now:into:)``,
/// and arms its timer (SMP's 30 s) with ``LinkState/deadline``, which the core folds into its
/// ``HostCore/nextDeadline``. Pure like the core: time comes in, actions go out.
public struct HostSecurity: Sendable {
    /// Security state of one link.
    public struct LinkState: Sendable, Equatable {
        /// Our role on the link.
        public var role: LinkRole
        /// Whether the controller reports the link encrypted.
        public var encrypted = false
        /// When the link's security procedure times out (seconds on the core's time), if one runs.
        public var deadline: Double?
    }

    /// What the security component asks the core to do, in order.
    public enum Action: Sendable, Equatable {
        /// Send an SMP PDU on the link (L2CAP CID 0x0006).
        case sendSMP(handle: UInt16, pdu: [UInt8])
        /// Send an HCI command for the link; its end comes back through ``commandFinished(_:on:_:now:into:)``.
        case command(handle: UInt16, opcode: HCIOpcode, parameters: [UInt8])
        /// Tell the driver the link's encryption changed.
        case encryptionChanged(handle: UInt16, encrypted: Bool, status: HCIStatus)
    }

    /// Actions of one call, appended in order.
    public typealias Actions = [Action]

    /// Encryption Key Refresh Complete (not decoded by BluetideHCI: status u8, handle u16).
    static let keyRefreshCompleteCode: UInt8 = 0x30

    /// Per-link state, by handle.
    public private(set) var links: [UInt16: LinkState] = [:]

    /// No links.
    public init() {}

    /// The earliest security deadline of any link (seconds), if one is armed.
    public var nextDeadline: Double? { links.values.compactMap(\.deadline).min() }

    /// A link opened.
    public mutating func linkOpened(_ handle: UInt16, role: LinkRole, now: Double, into actions: inout Actions) {
        links[handle] = LinkState(role: role)
    }

    /// A link closed: its state is forgotten.
    public mutating func linkClosed(_ handle: UInt16) {
        links[handle] = nil
    }

    /// An SMP PDU from the peer.
    public mutating func receiveSMP(_ pdu: [UInt8], on handle: UInt16, now: Double, into actions: inout Actions) {
        guard let link = links[handle] else { return }
        if let reply = SMPRefuser.reply(to: pdu, role: link.role) { actions.append(.sendSMP(handle: handle, pdu: reply)) }
    }

    /// A security HCI event: Encryption Change, Encryption Key Refresh Complete or LE Long Term
    /// Key Request. Others are ignored.
    public mutating func receive(_ event: HCIEvent, now: Double, into actions: inout Actions) {
        switch event {
        case let .encryptionChange(change):
            let handle = change.handle & 0x0FFF
            guard links[handle] != nil else { return }
            let encrypted = change.status == .success && change.encryptionEnabled != 0
            links[handle]!.encrypted = encrypted
            actions.append(.encryptionChanged(handle: handle, encrypted: encrypted, status: change.status))
        case let .unknown(code, parameters) where code == Self.keyRefreshCompleteCode && parameters.count >= 3:
            let handle = (UInt16(parameters[1]) | UInt16(parameters[2]) << 8) & 0x0FFF
            guard let link = links[handle] else { return }
            let status = HCIStatus(rawValue: parameters[0])
            actions.append(.encryptionChanged(handle: handle, encrypted: link.encrypted && status == .success, status: status))
        case let .leMeta(.longTermKeyRequest(request)):
            let handle = request.handle & 0x0FFF
            guard links[handle] != nil else { return }
            // No keys are stored: the controller must not encrypt with a key we do not have.
            let reply = LELongTermKeyRequestNegativeReply(handle: handle)
            actions.append(.command(handle: handle, opcode: LELongTermKeyRequestNegativeReply.opcode, parameters: reply.parameterBytes))
        default:
            break
        }
    }

    /// A command this component asked for ended.
    public mutating func commandFinished(
        _ opcode: HCIOpcode, on handle: UInt16, _ result: Result<HCICommandResponse, HostError>, now: Double,
        into actions: inout Actions
    ) {
        if case let .failure(error) = result {
            HostLog.hci.debug("a security command failed", metadata: ["handle": "\(handle)", "error": "\(error)"])
        }
    }

    /// Runs the timers whose deadline is at or before `now`.
    public mutating func expire(now: Double, into actions: inout Actions) {
        for (handle, link) in links {
            if let deadline = link.deadline, deadline <= now { links[handle]!.deadline = nil }
        }
    }
}

extension HostCore {
    /// Carries out what the security component asked for.
    mutating func apply(_ actions: HostSecurity.Actions, now t: Double, into outputs: inout HostOutputs) {
        for action in actions {
            switch action {
            case let .sendSMP(handle, pdu):
                sendFrame(L2CAPFrame(channelID: .smp, payload: pdu), on: handle, into: &outputs)
            case let .command(handle, opcode, parameters):
                enqueue(opcode, parameters, purpose: .security(handle: handle), now: t, into: &outputs)
            case let .encryptionChanged(handle, encrypted, status):
                server.setSecurity(GATTLinkSecurity(isEncrypted: encrypted), for: handle)
                outputs.events.append(.encryptionChanged(handle: handle, encrypted: encrypted, status: status))
            }
        }
    }
}
