import BluetideBase

/// What the server tells the application after handling a PDU.
public enum GATTServerEvent: Hashable, Sendable {
    /// A client wrote a value (request, command or executed long write).
    case valueWritten(connection: UInt16, handle: UInt16, uuid: BluetoothUUID, value: [UInt8])
    /// A client changed its Client Characteristic Configuration for a characteristic value.
    case subscriptionChanged(connection: UInt16, valueHandle: UInt16, configuration: GATTClientConfiguration)
    /// A Signed Write Command was dropped (signing keys are not supported).
    case signedWriteIgnored(connection: UInt16, handle: UInt16)
    /// A client asked for an attribute that needs authorisation its connection does not have:
    /// the request waits for ``GATTServer/authorize(_:mtu:now:)`` (a Write Command was dropped).
    case authorizationRequested(GATTAuthorizationRequest)
}

/// A notification or indication the owner should send through the connection's bearer.
public struct GATTServerPush: Hashable, Sendable {
    /// Notification or indication.
    public enum Kind: Hashable, Sendable {
        /// Handle Value Notification (no confirmation).
        case notification
        /// Handle Value Indication (confirmed, one at a time).
        case indication
    }
    /// The connection to send it on (HCI connection handle).
    public var connection: UInt16
    /// Notification or indication.
    public var kind: Kind
    /// The characteristic value handle.
    public var handle: UInt16
    /// The value (the bearer cuts it to MTU − 3).
    public var value: [UInt8]
}

/// The local GATT server: the attribute database plus per-connection state (CCCD values,
/// prepared-write queue, link security, authorisation, indication flow). Pure state machine:
/// requests in, responses, events and pushes out.
///
/// Access checks, in this order when several fail: Read/Write Not Permitted (0x02/0x03), then
/// Insufficient Authentication (0x05), Insufficient Encryption (0x0F), and last Insufficient
/// Authorization (0x08). The link's security comes before the application's authorisation:
/// only on a secured link does the application know which central it is authorising
/// (Core Vol 3 Part C 10.5 leaves authorisation to the application; BlueZ, Zephyr and
/// Android also ask the application only once the link's security is met).
///
/// A request for an attribute needing authorisation the connection lacks is not answered at
/// once: the server reports ``GATTServerEvent/authorizationRequested(_:)`` and holds the
/// request (ATT allows one at a time per bearer) until ``authorize(_:mtu:now:)`` or
/// ``authorizationTimeout``.
public struct GATTServer: Sendable {
    /// The attribute database.
    public private(set) var database: GATTDatabase
    /// Largest number of Prepare Write parts queued per connection (then Prepare Queue Full).
    public var maximumPreparedWrites: Int
    /// The MTU this server offers in Exchange MTU (octets).
    public var localMTU: Int
    /// Seconds a request waits for the application's authorisation before it is refused with
    /// Insufficient Authorization (0x08); below the client's 30 s ATT transaction timeout.
    public var authorizationTimeout: Double = 20

    private struct ConnectionState: Sendable {
        var security = GATTLinkSecurity.none
        var configurations: [UInt16: GATTClientConfiguration] = [:]  // value handle → CCCD
        var prepared: [(handle: UInt16, offset: Int, value: [UInt8])] = []
        var indicationInFlight = false
        var pendingIndications: [(handle: UInt16, value: [UInt8])] = []
        var authorization = GATTLinkAuthorization()
        /// The request held for the application's authorisation, if any.
        var awaiting: AwaitingAuthorization?
    }

    private struct AwaitingAuthorization: Sendable {
        var pdu: ATTPDU
        var request: GATTAuthorizationRequest
        var deadline: Double
    }
    private var connections: [UInt16: ConnectionState] = [:]

    /// A server whose database holds GAP (with `deviceName` and `appearance`), GATT, then `services`.
    public init(deviceName: String, appearance: UInt16 = 0, services: [GATTServiceDefinition],
                maximumPreparedWrites: Int = 64, localMTU: Int = ATTBearer.maximumMTU) {
        self.database = GATTDatabase(deviceName: deviceName, appearance: appearance, services: services)
        self.maximumPreparedWrites = maximumPreparedWrites
        self.localMTU = localMTU
    }

    /// A server of `database` as it is (e.g. one laid out with ``GATTDatabase/init(placing:)``).
    public init(database: GATTDatabase, maximumPreparedWrites: Int = 64, localMTU: Int = ATTBearer.maximumMTU) {
        self.database = database
        self.maximumPreparedWrites = maximumPreparedWrites
        self.localMTU = localMTU
    }

    // MARK: Connections

    /// Starts per-connection state for a new link (a fresh link has no subscriptions).
    public mutating func connect(_ connection: UInt16, security: GATTLinkSecurity = .none) {
        connections[connection] = ConnectionState(security: security)
    }

    /// Drops all state of a link (subscriptions, prepared writes, queued indications).
    public mutating func disconnect(_ connection: UInt16) {
        connections[connection] = nil
    }

    /// Records that a link became encrypted / authenticated.
    public mutating func setSecurity(_ security: GATTLinkSecurity, for connection: UInt16) {
        connections[connection, default: ConnectionState()].security = security
    }

    /// The CCCD value a connection wrote for a characteristic value handle.
    public func configuration(of valueHandle: UInt16, for connection: UInt16) -> GATTClientConfiguration {
        connections[connection]?.configurations[valueHandle] ?? []
    }

    /// Replaces a stored value without notifying anyone.
    public mutating func setValue(_ value: [UInt8], at handle: UInt16) {
        database.setValue(value, at: handle)
    }

    // MARK: Pushes

    /// Stores `value` and returns a notification for every connection that enabled
    /// notifications on `valueHandle`.
    public mutating func notify(valueHandle: UInt16, value: [UInt8]) -> [GATTServerPush] {
        database.setValue(value, at: valueHandle)
        return connections.keys.sorted().compactMap { c in
            configuration(of: valueHandle, for: c).contains(.notification)
                ? GATTServerPush(connection: c, kind: .notification, handle: valueHandle, value: value) : nil
        }
    }

    /// Stores `value` and returns an indication for every connection that enabled indications
    /// and has none in flight; the others get it queued until ``indicationConfirmed(by:)``.
    public mutating func indicate(valueHandle: UInt16, value: [UInt8]) -> [GATTServerPush] {
        database.setValue(value, at: valueHandle)
        var pushes: [GATTServerPush] = []
        for c in connections.keys.sorted() where configuration(of: valueHandle, for: c).contains(.indication) {
            if connections[c]?.indicationInFlight == true {
                connections[c]?.pendingIndications.append((valueHandle, value))
            } else {
                connections[c]?.indicationInFlight = true
                pushes.append(GATTServerPush(connection: c, kind: .indication, handle: valueHandle, value: value))
            }
        }
        return pushes
    }

    /// Indicates a Service Changed range (0x2A05: start and end handle, little-endian) to every
    /// client that enabled indications on it, e.g. after the database was rebuilt.
    public mutating func indicateServiceChanged(start: UInt16 = 0x0001, end: UInt16 = 0xFFFF) -> [GATTServerPush] {
        guard let handle = database.valueHandle(of: .serviceChanged, in: .genericAttribute) else { return [] }
        return indicate(valueHandle: handle, value: [UInt8(start & 0xFF), UInt8(start >> 8), UInt8(end & 0xFF), UInt8(end >> 8)])
    }

    /// The client on `connection` confirmed (or failed to confirm) the indication in flight:
    /// returns the next queued one, if any.
    public mutating func indicationConfirmed(by connection: UInt16) -> [GATTServerPush] {
        guard var state = connections[connection] else { return [] }
        defer { connections[connection] = state }
        guard !state.pendingIndications.isEmpty else {
            state.indicationInFlight = false
            return []
        }
        let next = state.pendingIndications.removeFirst()
        state.indicationInFlight = true
        return [GATTServerPush(connection: connection, kind: .indication, handle: next.handle, value: next.value)]
    }

    // MARK: Requests

    /// Handles a request or command from `connection` with the bearer's current `mtu`.
    /// Returns the response (nil for commands, and for a request held for the application's
    /// authorisation) and events for the application. `now` (seconds, any origin) starts the
    /// ``authorizationTimeout`` of a held request.
    public mutating func handle(
        _ pdu: ATTPDU, from connection: UInt16, mtu: Int, now: Double = 0
    ) -> (response: ATTPDU?, events: [GATTServerEvent]) {
        let (response, events) = answer(pdu, from: connection, mtu: mtu)
        // A request refused only for want of authorisation waits for the application.
        guard case let .errorResponse(_, handle, .insufficientAuthorization) = response,
              let request = authorizationRequest(for: pdu, handle: handle, connection: connection),
              connections[connection]?.awaiting == nil
        else { return (response, events) }
        connections[connection]?.awaiting = AwaitingAuthorization(
            pdu: pdu, request: request, deadline: now + authorizationTimeout)
        return (nil, events + [.authorizationRequested(request)])
    }

    /// The authorisation `pdu` asks for on `handle`, when that attribute needs one the
    /// connection lacks (not when a read or write handler itself answered 0x08).
    private func authorizationRequest(for pdu: ATTPDU, handle: UInt16, connection: UInt16) -> GATTAuthorizationRequest? {
        guard let a = database[handle] else { return nil }
        let access: GATTAuthorizationRequest.Access
        switch pdu {
        case .writeRequest, .prepareWriteRequest, .writeCommand: access = .write
        default: access = .read
        }
        guard a.permissions.contains(access == .read ? .readAuthorized : .writeAuthorized),
              !isAuthorized(access, to: handle, on: connection)
        else { return nil }
        return GATTAuthorizationRequest(connection: connection, handle: handle, uuid: a.type, access: access)
    }

    private func isAuthorized(_ access: GATTAuthorizationRequest.Access, to handle: UInt16, on connection: UInt16) -> Bool {
        connections[connection]?.authorization.allows(access, to: handle) ?? false
    }

    // MARK: Authorisation

    /// Applies the application's answer about authorisation on a connection: records what it
    /// allows (until the connection closes) and settles the request held for it, if any.
    /// Returns that request's response (nil when nothing waited for this answer, or when it
    /// now waits for another attribute's authorisation) and events.
    public mutating func authorize(
        _ answer: GATTAuthorizationAnswer, mtu: Int, now: Double = 0
    ) -> (response: ATTPDU?, events: [GATTServerEvent]) {
        let connection = answer.connection
        guard var state = connections[connection] else { return (nil, []) }
        switch answer {
        case let .allow(request):
            state.authorization.granted.insert(.init(handle: request.handle, access: request.access))
        case .allowAll:
            state.authorization.all = true
        case .deny:
            break
        }
        guard let awaiting = state.awaiting, answer.settles(awaiting.request) else {
            connections[connection] = state
            return (nil, [])
        }
        state.awaiting = nil
        connections[connection] = state
        if case .deny = answer {
            return (.errorResponse(requestOpcode: awaiting.pdu.opcode, handle: awaiting.request.handle, error: .insufficientAuthorization), [])
        }
        // Handled again from the start: a Read Multiple may need another attribute's answer.
        return handle(awaiting.pdu, from: connection, mtu: mtu, now: now)
    }

    /// The earliest time a held request's ``authorizationTimeout`` ends, if any waits.
    public var nextAuthorizationDeadline: Double? {
        connections.values.compactMap { $0.awaiting?.deadline }.min()
    }

    /// Refuses (0x08) every held request whose ``authorizationTimeout`` has passed at `now`:
    /// returns the responses to send, by connection.
    public mutating func expireAuthorizations(now: Double) -> [(connection: UInt16, response: ATTPDU)] {
        var out: [(connection: UInt16, response: ATTPDU)] = []
        for connection in connections.keys.sorted() {
            guard let awaiting = connections[connection]?.awaiting, awaiting.deadline <= now else { continue }
            connections[connection]?.awaiting = nil
            out.append((connection, .errorResponse(
                requestOpcode: awaiting.pdu.opcode, handle: awaiting.request.handle, error: .insufficientAuthorization)))
        }
        return out
    }

    /// Carries what `previous` (the server this one replaces) authorised onto this server's
    /// connections: "everything" grants, and single grants whose handle holds an attribute of
    /// the same type here. Requests `previous` held are refused (0x08; their handles may mean
    /// something else now): returns those responses, by connection.
    public mutating func adoptAuthorizations(from previous: GATTServer) -> [(connection: UInt16, response: ATTPDU)] {
        var out: [(connection: UInt16, response: ATTPDU)] = []
        for connection in previous.connections.keys.sorted() {
            guard let old = previous.connections[connection] else { continue }
            if connections[connection] != nil {
                connections[connection]?.authorization.all = old.authorization.all
                connections[connection]?.authorization.granted = old.authorization.granted.filter {
                    database[$0.handle]?.type == previous.database[$0.handle]?.type
                }
            }
            if let awaiting = old.awaiting {
                out.append((connection, .errorResponse(
                    requestOpcode: awaiting.pdu.opcode, handle: awaiting.request.handle, error: .insufficientAuthorization)))
            }
        }
        return out
    }

    // MARK: Answers

    /// Answers a request or command at once (access checks, values, writes).
    private mutating func answer(_ pdu: ATTPDU, from connection: UInt16, mtu: Int) -> (response: ATTPDU?, events: [GATTServerEvent]) {
        if connections[connection] == nil { connections[connection] = ConnectionState() }
        let mtu = max(mtu, ATTBearer.defaultMTU)
        func error(_ code: ATTErrorCode, _ handle: UInt16 = 0) -> (ATTPDU?, [GATTServerEvent]) {
            (.errorResponse(requestOpcode: pdu.opcode, handle: handle, error: code), [])
        }
        switch pdu {
        case .exchangeMTURequest:
            return (.exchangeMTUResponse(serverMTU: UInt16(clamping: localMTU)), [])
        case let .findInformationRequest(start, end):
            guard start != 0, start <= end else { return error(.invalidHandle, start) }
            var entries: [ATTHandleUUID] = []
            var short: Bool?
            for a in database.attributes(in: start, end) {
                let isShort = a.type.uuid16 != nil
                if short == nil { short = isShort }
                guard short == isShort else { break }
                guard (entries.count + 1) * (isShort ? 4 : 18) <= mtu - 2 else { break }
                entries.append(ATTHandleUUID(handle: a.handle, uuid: a.type))
            }
            return entries.isEmpty ? error(.attributeNotFound, start) : (.findInformationResponse(entries), [])
        case let .findByTypeValueRequest(start, end, type, value):
            guard start != 0, start <= end else { return error(.invalidHandle, start) }
            var ranges: [ATTHandleRange] = []
            for a in database.attributes(in: start, end) where a.type == BluetoothUUID(type) {
                guard case let .success(v) = readValue(a, connection, offset: 0), v == value else { continue }
                guard (ranges.count + 1) * 4 <= mtu - 1 else { break }
                ranges.append(ATTHandleRange(start: a.handle, end: a.groupEnd ?? a.handle))
            }
            return ranges.isEmpty ? error(.attributeNotFound, start) : (.findByTypeValueResponse(ranges), [])
        case let .readByTypeRequest(start, end, type):
            guard start != 0, start <= end else { return error(.invalidHandle, start) }
            var entries: [ATTHandleValue] = []
            for a in database.attributes(in: start, end) where a.type == type {
                var value: [UInt8]
                switch readChecked(a, connection, offset: 0) {
                case let .failure(code):
                    if entries.isEmpty { return error(code, a.handle) }
                    return (.readByTypeResponse(entries), [])
                case let .success(v): value = v
                }
                value = Array(value.prefix(min(mtu - 4, 253)))
                if let first = entries.first, first.value.count != value.count { break }
                guard (entries.count + 1) * (2 + value.count) <= mtu - 2 else { break }
                entries.append(ATTHandleValue(handle: a.handle, value: value))
            }
            return entries.isEmpty ? error(.attributeNotFound, start) : (.readByTypeResponse(entries), [])
        case let .readByGroupTypeRequest(start, end, type):
            guard start != 0, start <= end else { return error(.invalidHandle, start) }
            guard type == .primaryService || type == .secondaryService else { return error(.unsupportedGroupType, start) }
            var entries: [ATTGroupValue] = []
            for a in database.attributes(in: start, end) where a.type == type {
                guard case let .success(v) = readChecked(a, connection, offset: 0) else { break }
                let value = Array(v.prefix(min(mtu - 6, 251)))
                if let first = entries.first, first.value.count != value.count { break }
                guard (entries.count + 1) * (4 + value.count) <= mtu - 2 else { break }
                entries.append(ATTGroupValue(handle: a.handle, endGroupHandle: a.groupEnd ?? a.handle, value: value))
            }
            return entries.isEmpty ? error(.attributeNotFound, start) : (.readByGroupTypeResponse(entries), [])
        case let .readRequest(handle):
            guard let a = database[handle] else { return error(.invalidHandle, handle) }
            switch readChecked(a, connection, offset: 0) {
            case let .failure(code): return error(code, handle)
            case let .success(v): return (.readResponse(value: Array(v.prefix(mtu - 1))), [])
            }
        case let .readBlobRequest(handle, offset):
            guard let a = database[handle] else { return error(.invalidHandle, handle) }
            switch readChecked(a, connection, offset: Int(offset)) {
            case let .failure(code): return error(code, handle)
            case let .success(v):
                guard Int(offset) <= v.count else { return error(.invalidOffset, handle) }
                return (.readBlobResponse(value: Array(v[Int(offset)...].prefix(mtu - 1))), [])
            }
        case let .readMultipleRequest(handles):
            var out: [UInt8] = []
            for h in handles {
                guard let a = database[h] else { return error(.invalidHandle, h) }
                switch readChecked(a, connection, offset: 0) {
                case let .failure(code): return error(code, h)
                case let .success(v): out += v
                }
            }
            return (.readMultipleResponse(values: Array(out.prefix(mtu - 1))), [])
        case let .readMultipleVariableRequest(handles):
            var values: [[UInt8]] = []
            for h in handles {
                guard let a = database[h] else { return error(.invalidHandle, h) }
                switch readChecked(a, connection, offset: 0) {
                case let .failure(code): return error(code, h)
                case let .success(v): values.append(v)
                }
            }
            // Length-prefixed values up to MTU − 1 octets; the last one that does not fit is cut.
            var tuples: [ATTLengthValue] = []
            var size = 1
            for v in values {
                guard size + 2 < mtu else { break }
                let part = Array(v.prefix(mtu - size - 2))
                tuples.append(ATTLengthValue(length: UInt16(clamping: v.count), value: part))
                size += 2 + part.count
                if part.count < v.count { break }
            }
            return (.readMultipleVariableResponse(tuples), [])
        case let .writeRequest(handle, value):
            switch write(handle, value, connection) {
            case let .failure(code): return error(code, handle)
            case let .success(events): return (.writeResponse, events)
            }
        case let .writeCommand(handle, value):
            // Core Vol 3 Part G 3.3.1.1: a Write Command is only for characteristics with the
            // Write Without Response property; to any other attribute it is ignored.
            guard let a = database[handle], case .characteristicValue(let properties, _) = a.role,
                properties.contains(.writeWithoutResponse)
            else { return (nil, []) }
            switch write(handle, value, connection) {
            case let .success(events): return (nil, events)
            case .failure(.insufficientAuthorization):
                // Dropped (a command cannot wait), but the application hears of it and may
                // allow the next ones.
                guard let request = authorizationRequest(for: pdu, handle: handle, connection: connection) else { return (nil, []) }
                return (nil, [.authorizationRequested(request)])
            case .failure: return (nil, [])
            }
        case let .signedWriteCommand(handle, _, _):
            return (nil, [.signedWriteIgnored(connection: connection, handle: handle)])
        case let .prepareWriteRequest(handle, offset, value):
            guard let a = database[handle] else { return error(.invalidHandle, handle) }
            if let code = writeDenial(a, connection) { return error(code, handle) }
            guard (connections[connection]?.prepared.count ?? 0) < maximumPreparedWrites else {
                return error(.prepareQueueFull, handle)
            }
            connections[connection]?.prepared.append((handle, Int(offset), value))
            return (.prepareWriteResponse(handle: handle, offset: offset, value: value), [])
        case let .executeWriteRequest(flags):
            let parts = connections[connection]?.prepared ?? []
            connections[connection]?.prepared = []
            switch flags {
            case ATTPDU.executeWriteCancel: return (.executeWriteResponse, [])
            case ATTPDU.executeWriteCommit: break
            default: return error(.invalidPDU)
            }
            // Assemble each handle's new value, checking every part before applying any.
            var order: [UInt16] = []
            var assembled: [UInt16: [UInt8]] = [:]
            for part in parts {
                guard let a = database[part.handle] else { return error(.invalidHandle, part.handle) }
                var value: [UInt8]
                if let so_far = assembled[part.handle] {
                    value = so_far
                } else {
                    order.append(part.handle)
                    guard case let .success(current) = readValue(a, connection, offset: 0) else { return error(.unlikelyError, part.handle) }
                    guard part.offset <= current.count else { return error(.invalidOffset, part.handle) }
                    value = Array(current.prefix(part.offset))
                }
                guard part.offset == value.count else { return error(.invalidOffset, part.handle) }
                value += part.value
                assembled[part.handle] = value
            }
            for h in order {
                guard let a = database[h], let value = assembled[h] else { continue }
                if let code = valueDenial(a, value, connection) { return error(code, h) }
            }
            var events: [GATTServerEvent] = []
            for h in order {
                guard let a = database[h], let value = assembled[h] else { continue }
                events += apply(a, value, connection)
            }
            return (.executeWriteResponse, events)
        default:
            guard pdu.opcode.kind == .request else { return (nil, []) }
            return error(.requestNotSupported)
        }
    }

    // MARK: Access checks

    private func readValue(_ a: GATTAttribute, _ connection: UInt16, offset: Int) -> Result<[UInt8], ATTErrorCode> {
        if case let .clientConfiguration(valueHandle, _) = a.role {
            let raw = configuration(of: valueHandle, for: connection).rawValue
            return .success([UInt8(raw & 0xFF), UInt8(raw >> 8)])
        }
        if let onRead = a.onRead { return onRead(GATTReadContext(connection: connection, handle: a.handle, offset: offset)) }
        return .success(a.value)
    }

    private func readChecked(_ a: GATTAttribute, _ connection: UInt16, offset: Int) -> Result<[UInt8], ATTErrorCode> {
        let security = connections[connection]?.security ?? .none
        guard a.permissions.contains(.readable) else { return .failure(.readNotPermitted) }
        if a.permissions.contains(.readAuthenticated), !security.isAuthenticated { return .failure(.insufficientAuthentication) }
        if a.permissions.contains(.readEncrypted), !security.isEncrypted { return .failure(.insufficientEncryption) }
        if a.permissions.contains(.readAuthorized), !isAuthorized(.read, to: a.handle, on: connection) {
            return .failure(.insufficientAuthorization)
        }
        return readValue(a, connection, offset: offset)
    }

    private func writeDenial(_ a: GATTAttribute, _ connection: UInt16) -> ATTErrorCode? {
        let security = connections[connection]?.security ?? .none
        guard a.permissions.contains(.writable) else { return .writeNotPermitted }
        if a.permissions.contains(.writeAuthenticated), !security.isAuthenticated { return .insufficientAuthentication }
        if a.permissions.contains(.writeEncrypted), !security.isEncrypted { return .insufficientEncryption }
        if a.permissions.contains(.writeAuthorized), !isAuthorized(.write, to: a.handle, on: connection) {
            return .insufficientAuthorization
        }
        return nil
    }

    private func valueDenial(_ a: GATTAttribute, _ value: [UInt8], _ connection: UInt16) -> ATTErrorCode? {
        if case .clientConfiguration = a.role { return value.count == 2 ? nil : .invalidAttributeValueLength }
        guard value.count <= a.maximumLength else { return .invalidAttributeValueLength }
        return a.validateWrite?(GATTWriteContext(connection: connection, handle: a.handle, uuid: a.type, value: value))
    }

    /// Checks and applies a complete write.
    private mutating func write(_ handle: UInt16, _ value: [UInt8], _ connection: UInt16) -> Result<[GATTServerEvent], ATTErrorCode> {
        guard let a = database[handle] else { return .failure(.invalidHandle) }
        if let code = writeDenial(a, connection) ?? valueDenial(a, value, connection) { return .failure(code) }
        return .success(apply(a, value, connection))
    }

    /// Applies a write that has passed every check. The validation hook is not run again: an
    /// Execute Write validates all its parts first, then applies them, and a hook that acts on
    /// the value (the @Characteristic wrapper updates its property there) must see each part once.
    private mutating func apply(_ a: GATTAttribute, _ value: [UInt8], _ connection: UInt16) -> [GATTServerEvent] {
        let handle = a.handle
        if case let .clientConfiguration(valueHandle, properties) = a.role {
            var config = GATTClientConfiguration(rawValue: UInt16(value[0]) | UInt16(value[1]) << 8)
            // Keep only the bits the characteristic supports.
            var supported: GATTClientConfiguration = []
            if properties.contains(.notify) { supported.insert(.notification) }
            if properties.contains(.indicate) { supported.insert(.indication) }
            config = config.intersection(supported)
            connections[connection, default: ConnectionState()].configurations[valueHandle] = config
            if !config.contains(.indication), connections[connection]?.pendingIndications.isEmpty == false {
                connections[connection]?.pendingIndications.removeAll { $0.handle == valueHandle }
            }
            return [.subscriptionChanged(connection: connection, valueHandle: valueHandle, configuration: config)]
        }
        database.setValue(value, at: handle)
        return [.valueWritten(connection: connection, handle: handle, uuid: a.type, value: value)]
    }
}
