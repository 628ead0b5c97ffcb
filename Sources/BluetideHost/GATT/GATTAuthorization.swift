import BluetideBase

/// A client asking for an attribute that needs the application's authorisation
/// (``GATTPermissions/readAuthorized`` or ``GATTPermissions/writeAuthorized``) on a connection
/// not authorised for it. The server holds the request (no response yet) until the application
/// answers with ``GATTServer/authorize(_:mtu:now:)`` or ``GATTServer/authorizationTimeout``
/// passes; a Write Command cannot wait and is dropped, but is still reported so the
/// application can allow later ones.
///
/// Two requests are equal when they ask the same thing (connection, attribute, access), so an
/// answer to an earlier identical request also settles a retry.
public struct GATTAuthorizationRequest: Hashable, Sendable {
    /// Reading or writing.
    public enum Access: Hashable, Sendable {
        /// Read, Read Blob, Read By Type, Read Multiple.
        case read
        /// Write Request, Prepare Write Request, Write Command.
        case write
    }

    /// The connection asking (HCI connection handle).
    public var connection: UInt16
    /// The attribute that needs authorisation.
    public var handle: UInt16
    /// The attribute type (the characteristic UUID for a value).
    public var uuid: BluetoothUUID
    /// Reading or writing.
    public var access: Access

    /// A request for `access` to attribute `handle` (of type `uuid`) on `connection`.
    public init(connection: UInt16, handle: UInt16, uuid: BluetoothUUID, access: Access) {
        self.connection = connection
        self.handle = handle
        self.uuid = uuid
        self.access = access
    }
}

/// The application's decision about authorisation on one connection (until it closes).
public enum GATTAuthorizationAnswer: Hashable, Sendable {
    /// The client may have this access to this attribute for the rest of the connection; a
    /// request waiting for this answer goes on.
    case allow(GATTAuthorizationRequest)
    /// Refused: a request waiting for this answer gets Insufficient Authorization (0x08). A
    /// later request asks again.
    case deny(GATTAuthorizationRequest)
    /// The client on `connection` may read and write every attribute for the rest of the
    /// connection; a waiting request goes on.
    case allowAll(connection: UInt16)

    /// The connection the answer is about.
    public var connection: UInt16 {
        switch self {
        case let .allow(request), let .deny(request): request.connection
        case let .allowAll(connection): connection
        }
    }

    /// Whether the answer settles `request`.
    func settles(_ request: GATTAuthorizationRequest) -> Bool {
        switch self {
        case let .allow(answered), let .deny(answered): answered == request
        case let .allowAll(connection): connection == request.connection
        }
    }
}

/// What one connection has been authorised for.
struct GATTLinkAuthorization: Sendable {
    /// Every attribute, both ways (``GATTAuthorizationAnswer/allowAll(connection:)``).
    var all = false
    /// Accesses allowed one by one.
    var granted: Set<Grant> = []

    struct Grant: Hashable, Sendable {
        var handle: UInt16
        var access: GATTAuthorizationRequest.Access
    }

    func allows(_ access: GATTAuthorizationRequest.Access, to handle: UInt16) -> Bool {
        all || granted.contains(Grant(handle: handle, access: access))
    }
}
