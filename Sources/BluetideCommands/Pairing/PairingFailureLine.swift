import Bluetide
import BluetideBase

/// Every way pairing (or encrypting from a bond) can end badly, in one line a user
/// understands: what happened, with the Pairing Failed reason or HCI status the specification
/// names, and what to try.
enum PairingFailureLine {
    /// The line for `error` while pairing with `device` (its address `address`, for the bond
    /// hint). `refusal` is the prompter's reason when this side cancelled (it names what to give).
    static func text(_ error: PairingError, device: String, address: BluetoothAddress? = nil, refusal: String? = nil) -> String {
        switch error {
        case let .localFailure(reason) where reason == .passkeyEntryFailed || reason == .numericComparisonFailed:
            if let refusal { return refusal }
            return reason == .passkeyEntryFailed
                ? "pairing with \(device) cancelled: no passkey was entered (passkey entry failed, 0x01)"
                : "pairing with \(device) cancelled: the numbers were not confirmed (numeric comparison failed, 0x0C)"
        case let .localFailure(reason) where reason == .confirmValueFailed:
            return "pairing with \(device) failed: the passkey did not match (confirm value failed, 0x04); check the six digits \(device) shows and pair again"
        case let .peerFailure(reason) where reason == .confirmValueFailed:
            return "pairing with \(device) failed: it says the passkey did not match (confirm value failed, 0x04); check the six digits it shows and pair again"
        case let .peerFailure(reason) where reason == .pairingNotSupported:
            return "\(device) refused to pair (pairing not supported, 0x05): it does not pair, or not now; put it in pairing mode and try again"
        case let .peerFailure(reason) where reason == .authenticationRequirements,
             let .localFailure(reason) where reason == .authenticationRequirements:
            return "pairing with \(device) failed: it needs a pairing method this side did not offer (authentication requirements, 0x03); run at a terminal to be asked, or give --pairing passkey:NNNNNN or --pairing confirm"
        case let .peerFailure(reason) where reason == .repeatedAttempts:
            return "\(device) refuses pairing for now after repeated attempts (0x09); wait a minute, then pair again"
        case let .peerFailure(reason) where reason == .passkeyEntryFailed:
            return "pairing with \(device) failed: no passkey was entered on it (passkey entry failed, 0x01); type the six digits on \(device) when asked"
        case let .peerFailure(reason) where reason == .numericComparisonFailed:
            return "pairing with \(device) failed: the numbers were not confirmed on it (numeric comparison failed, 0x0C)"
        case let .peerFailure(reason) where reason == .encryptionKeySize, let .localFailure(reason) where reason == .encryptionKeySize:
            return "pairing with \(device) failed: the key size it accepts is too short (encryption key size, 0x06)"
        case let .localFailure(reason):
            return "pairing with \(device) failed: \(reason)"
        case let .peerFailure(reason):
            return "pairing with \(device) failed: it refused, \(reason)"
        case .timeout:
            return "pairing with \(device) failed: it stopped answering for 30 s (SMP timeout); reconnect and pair again"
        case let .encryptionFailed(status) where status == 0x06:
            let remove = address.map { "`bluetide bonds remove \($0)`" } ?? "`bluetide bonds remove ADDRESS`"
            return "encrypting the link to \(device) failed: it has no key for our bond (PIN or key missing, 0x06), it probably forgot it; remove ours with \(remove) and pair again"
        case let .encryptionFailed(status):
            return "encrypting the link to \(device) failed (HCI status 0x\([status].hexString)); disconnect and try again"
        }
    }

    /// The line for any error of a device operation: pairing failures as ``text(_:device:address:refusal:)``,
    /// ATT 0x05 on a link that is encrypted but not authenticated with what to do, others as they are.
    static func explain(_ error: any Error, device: String, address: BluetoothAddress?, prompter: PairingPrompter?, level: SecurityLevel? = nil) -> String {
        if case let .pairingFailed(failure)? = error as? BluetideError {
            return text(failure, device: device, address: address, refusal: prompter?.refusal(for: address))
        }
        if case let .attError(code, _, _)? = error as? BluetideError, code == .insufficientAuthentication, level == .encrypted {
            return "\(error): the link is encrypted but not authenticated (it paired Just Works); it needs a passkey or number comparison, which \(device) or the pairing mode did not offer (run at a terminal to be asked, or give --pairing passkey:NNNNNN or --pairing confirm)"
        }
        return "\(error)"
    }

    /// `error` is a pairing failure (the command should stop rather than go on).
    static func isPairingFailure(_ error: any Error) -> Bool {
        if case .pairingFailed? = error as? BluetideError { return true }
        return false
    }
}
