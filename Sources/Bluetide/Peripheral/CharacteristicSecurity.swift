import BluetideHost

/// The link a central needs to read or write a served value (LE Security Mode 1,
/// Core Vol 3 Part C 10.2.1), for ``Characteristic``'s `security:`.
public enum CharacteristicSecurity: Sendable, Hashable {
    /// Any link.
    case none
    /// An encrypted link (level 2 or higher): otherwise Insufficient Encryption (0x0F).
    case encrypted
    /// An encrypted link with keys from an authenticated (MITM) pairing (level 3 or higher):
    /// otherwise Insufficient Authentication (0x05).
    case authenticated

    /// `permissions` with this requirement added to what they allow (reads, writes).
    func applied(to permissions: GATTPermissions) -> GATTPermissions {
        var result = permissions
        switch self {
        case .none: break
        case .encrypted:
            if permissions.contains(.readable) { result.insert(.readEncrypted) }
            if permissions.contains(.writable) { result.insert(.writeEncrypted) }
        case .authenticated:
            if permissions.contains(.readable) { result.insert(.readAuthenticated) }
            if permissions.contains(.writable) { result.insert(.writeAuthenticated) }
        }
        return result
    }
}
