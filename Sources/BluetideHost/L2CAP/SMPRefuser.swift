/// The Security Manager channel (CID 0x0006) while Bluetide does not pair: every Pairing
/// Request (and, as central, every Security Request) is answered with Pairing Failed,
/// reason 0x05 "Pairing Not Supported" (Core Vol 3 Part H 3.5.5). Other SMP PDUs are dropped.
public enum SMPRefuser {
    /// SMP code of Pairing Request.
    public static let pairingRequest: UInt8 = 0x01
    /// SMP code of Pairing Failed.
    public static let pairingFailed: UInt8 = 0x05
    /// SMP code of Security Request (sent by a peripheral).
    public static let securityRequest: UInt8 = 0x0B
    /// Pairing Failed reason "Pairing Not Supported".
    public static let pairingNotSupported: UInt8 = 0x05

    /// The SMP PDU to send back for `payload`, or nil when nothing is to be sent.
    public static func reply(to payload: [UInt8], role: LinkRole) -> [UInt8]? {
        guard let code = payload.first else { return nil }
        switch code {
        case pairingRequest:
            return [pairingFailed, pairingNotSupported]
        case securityRequest where role == .central:
            return [pairingFailed, pairingNotSupported]
        default:
            return nil
        }
    }
}
