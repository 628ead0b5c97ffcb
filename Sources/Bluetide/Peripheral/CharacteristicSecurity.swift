import BluetideHost

/// What a central needs to read or write a served value, for ``Characteristic``'s `security:`:
/// a secured link (LE Security Mode 1, Core Vol 3 Part C 10.2.1) and/or the app's
/// authorisation of that central (Part C 10.5). Requirements combine:
/// `security: [.encrypted, .authorized]`.
///
/// When several are missing the central hears of the link first: Insufficient Authentication
/// (0x05), then Insufficient Encryption (0x0F), and only on a link that qualifies is the app
/// asked to authorise (0x08 when it refuses) — the app then knows which central it allows.
public struct CharacteristicSecurity: OptionSet, Sendable, Hashable {
    /// The requirement bits (Bluetide's own layout).
    public let rawValue: UInt8
    /// Wraps requirement bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Any link, any central.
    public static let none: CharacteristicSecurity = []
    /// An encrypted link (level 2 or higher): otherwise Insufficient Encryption (0x0F).
    public static let encrypted = CharacteristicSecurity(rawValue: 0x01)
    /// An encrypted link with keys from an authenticated (MITM) pairing (level 3 or higher):
    /// otherwise Insufficient Authentication (0x05).
    public static let authenticated = CharacteristicSecurity(rawValue: 0x02)
    /// The app's permission for this central (``Peripheral/authorizationRequests``,
    /// ``ConnectedCentral/authorize()``), until it disconnects: otherwise Insufficient
    /// Authorization (0x08). Pairing does not grant it.
    public static let authorized = CharacteristicSecurity(rawValue: 0x04)

    /// `permissions` with these requirements added to what they allow (reads, writes).
    func applied(to permissions: GATTPermissions) -> GATTPermissions {
        var result = permissions
        let readable = permissions.contains(.readable)
        let writable = permissions.contains(.writable)
        if contains(.encrypted) {
            if readable { result.insert(.readEncrypted) }
            if writable { result.insert(.writeEncrypted) }
        }
        if contains(.authenticated) {
            if readable { result.insert(.readAuthenticated) }
            if writable { result.insert(.writeAuthenticated) }
        }
        if contains(.authorized) {
            if readable { result.insert(.readAuthorized) }
            if writable { result.insert(.writeAuthorized) }
        }
        return result
    }
}
