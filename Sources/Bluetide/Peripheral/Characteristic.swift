import Synchronization

/// One characteristic of a ``GATTService``, declared as a property wrapper:
///
/// ```swift
/// @Characteristic(PunchUUID.response, [.read, .notify]) var response = PunchResponse(...)
/// ```
///
/// or, for a service that must be `Sendable` with the compiler's check, as a constant:
/// `let response = Characteristic(PunchUUID.response, [.read, .notify], value: PunchResponse(...))`.
///
/// - Assigning the property encodes the value, stores it as the server's value and notifies
///   (or indicates) every subscribed central, in assignment order.
/// - Reads by a central return the current value.
/// - A central's write is decoded into `Value` (every byte must be used), checked by
///   `validate`, stored in the property and then delivered on ``writes`` (through the
///   projected value: `service.$targets.writes`).
///
/// Writes that do not decode are refused before they reach the property:
/// - with **Invalid Attribute Value Length (0x0D)** when the bytes are too short for `Value`
///   or longer than it uses (`DecodingError` kind `.truncated`, or bytes left over);
/// - with **application error 0x80** when the bytes are there but do not hold an acceptable
///   value (`DecodingError` kind `.invalidValue`), e.g. a ``PunchSequence`` naming target 9.
///
/// Notifications and indications carry at most ATT MTU − 3 bytes of the value (20 bytes at the
/// default MTU of 23); a central reads longer values whole with Read Blob.
///
/// `validate` must be a pure check: it runs inside the host stack, and for a long (prepared)
/// write it runs when the write is executed, possibly twice. A reliable write that changes
/// several characteristics at once and is refused by a later one may leave an earlier property
/// updated without a ``writes`` entry.
///
/// The storage is guarded by a mutex, so the property may be read and assigned from any task.
@propertyWrapper
public final class Characteristic<Value: GATTCodable & Sendable>: Sendable {
    /// The characteristic type UUID.
    public let uuid: BluetoothUUID
    /// Properties announced in the declaration (read, write, notify, …).
    public let properties: GATTCharacteristicProperties
    /// Access rules of the value (by default those the properties imply).
    public let permissions: GATTPermissions
    /// Text of the Characteristic User Description descriptor (0x2901), when one is served.
    public let userDescription: String?
    /// Longest value a central may write, octets (at most 512).
    public let maximumLength: Int
    /// Checks a decoded write before it is applied; a non-nil code refuses it with that ATT error.
    private let validator: (@Sendable (Value) -> ATTErrorCode?)?
    private let state: Mutex<State>
    private let writeSubscribers = SubscriberList<CharacteristicWrite<Value>>(bufferSize: 1024)
    private let subscriptionSubscribers = SubscriberList<CharacteristicSubscription>(bufferSize: 1024)

    private struct State {
        var value: Value
        var bindings: [ObjectIdentifier: PeripheralValueSink] = [:]
        /// Client configuration of every subscribed connection, by peripheral and handle.
        var subscribed: [ObjectIdentifier: [UInt16: GATTClientConfiguration]] = [:]
    }

    /// A characteristic of type `uuid` holding `wrappedValue` at first.
    /// - Parameters:
    ///   - uuid: the characteristic type.
    ///   - properties: what centrals may do: `[.read, .write, .notify]` and so on.
    ///   - permissions: access rules; nil derives them from `properties` (readable with
    ///     `.read`, writable with a write property). Add `.readEncrypted`, `.writeAuthenticated`…
    ///     to require a secured link.
    ///   - security: what a central needs to read and write the value: `.encrypted` answers
    ///     Insufficient Encryption (0x0F) and `.authenticated` Insufficient Authentication
    ///     (0x05) until the link qualifies (centrals then pair and retry); `.authorized` asks
    ///     the app on ``Peripheral/authorizationRequests`` and answers Insufficient
    ///     Authorization (0x08) when it refuses. Combine them: `[.encrypted, .authorized]`.
    ///   - description: served as a Characteristic User Description descriptor (0x2901).
    ///   - maximumLength: longest value a central may write, octets (capped at 512).
    ///   - validate: called with each decoded write; return an ATT error code (typically an
    ///     application error 0x80…0x9F) to refuse it. The property then keeps its value.
    ///     Runs inside the host stack: keep it quick and do not block.
    public init(
        wrappedValue: Value, _ uuid: BluetoothUUID, _ properties: GATTCharacteristicProperties,
        permissions: GATTPermissions? = nil, security: CharacteristicSecurity = .none, description: String? = nil,
        maximumLength: Int = 512, validate: (@Sendable (Value) -> ATTErrorCode?)? = nil
    ) {
        self.uuid = uuid
        self.properties = properties
        self.permissions = security.applied(to: permissions ?? .implied(by: properties))
        self.userDescription = description
        self.maximumLength = min(max(maximumLength, 0), 512)
        self.validator = validate
        self.state = Mutex(State(value: wrappedValue))
    }

    /// The current value. Assigning it updates the server's value and notifies or indicates
    /// subscribed centrals (in assignment order) once the service has been added to a peripheral.
    public var wrappedValue: Value {
        get { state.withLock { $0.value } }
        set {
            let bytes = newValue.bytes
            state.withLock { state in
                state.value = newValue
                // Queued while holding the lock, so concurrent assignments reach the air in the
                // same order as they reached the property.
                for sink in state.bindings.values { sink.enqueue(bytes) }
            }
        }
    }

    /// The characteristic itself: `$property.writes`, `$property.uuid`, …
    public var projectedValue: Characteristic<Value> { self }

    /// The current value, for a characteristic declared as a `let` constant (``init(_:_:value:permissions:security:description:maximumLength:validate:)``):
    /// the same as ``wrappedValue``. Assigning it notifies or indicates subscribed centrals.
    public var value: Value {
        get { wrappedValue }
        set { wrappedValue = newValue }
    }

    /// A characteristic declared as a `let` constant of its service rather than with
    /// `@Characteristic`, so that a service class holding only such constants conforms to
    /// `Sendable` with the compiler's check (a property wrapper's storage is always a `var`):
    ///
    /// ```swift
    /// final class PunchService: GATTService, Sendable {
    ///     static let uuid = PunchUUID.service
    ///     let response = Characteristic(PunchUUID.response, [.read, .notify], value: PunchResponse(...))
    /// }
    /// service.response.value = result   // notifies subscribers
    /// ```
    ///
    /// The parameters are those of ``init(wrappedValue:_:_:permissions:security:description:maximumLength:validate:)``,
    /// with `value` the initial value.
    public convenience init(
        _ uuid: BluetoothUUID, _ properties: GATTCharacteristicProperties, value: Value,
        permissions: GATTPermissions? = nil, security: CharacteristicSecurity = .none, description: String? = nil,
        maximumLength: Int = 512, validate: (@Sendable (Value) -> ATTErrorCode?)? = nil
    ) {
        self.init(wrappedValue: value, uuid, properties, permissions: permissions, security: security, description: description,
                  maximumLength: maximumLength, validate: validate)
    }

    /// Writes by centrals from now on, in the order they were applied. Every access makes a
    /// new subscription that sees every later write (the most recent 1024 when not read).
    public var writes: AsyncStream<CharacteristicWrite<Value>> { writeSubscribers.makeStream() }

    /// Changes of centrals' subscriptions from now on: a central enabling or disabling
    /// notifications or indications, and the end of a subscription when its central
    /// disconnects. Every access makes a new subscription to these changes.
    public var subscriptions: AsyncStream<CharacteristicSubscription> { subscriptionSubscribers.makeStream() }

    /// How many centrals are subscribed now (to notifications or indications), over every
    /// peripheral serving this characteristic.
    public var subscriberCount: Int {
        state.withLock { $0.subscribed.values.reduce(0) { $0 + $1.count } }
    }

    /// Decodes a written value: every byte must be used. Length problems give Invalid Attribute
    /// Value Length (0x0D), unacceptable content application error 0x80.
    static func decode(_ bytes: [UInt8]) -> Result<Value, ATTErrorCode> {
        var reader = ByteReader(bytes)
        do {
            let value = try Value(from: &reader)
            guard reader.isAtEnd else { return .failure(.invalidAttributeValueLength) }
            return .success(value)
        } catch {
            switch error.kind {
            case .truncated: return .failure(.invalidAttributeValueLength)
            case .invalidValue: return .failure(ATTErrorCode(0x80))
            }
        }
    }

    /// Runs inside the host stack for every write: decode, validate, and store when accepted
    /// (before the Write Response leaves, so a read right after the write sees the new value).
    private func acceptWrite(_ bytes: [UInt8]) -> ATTErrorCode? {
        switch Self.decode(bytes) {
        case let .failure(code): return code
        case let .success(value):
            if let code = validator?(value) { return code }
            state.withLock { $0.value = value }
            return nil
        }
    }
}

extension Characteristic: CharacteristicBindable {
    func definition() -> GATTCharacteristicDefinition {
        var descriptors: [GATTDescriptorDefinition] = []
        if let userDescription {
            descriptors.append(GATTDescriptorDefinition(
                uuid: .characteristicUserDescription, permissions: .readable, value: Array(userDescription.utf8.prefix(512))))
        }
        return GATTCharacteristicDefinition(
            uuid: uuid, properties: properties, permissions: permissions, value: wrappedValue.bytes,
            maximumLength: maximumLength, descriptors: descriptors,
            onRead: { [self] _ in .success(wrappedValue.bytes) },
            validateWrite: { [self] context in acceptWrite(context.value) })
    }

    func bind(_ sink: PeripheralValueSink) {
        state.withLock { $0.bindings[sink.peripheral] = sink }
    }

    func unbind(from peripheral: ObjectIdentifier) {
        _ = state.withLock { $0.bindings.removeValue(forKey: peripheral) }
    }

    func subscriptionChanged(
        on peripheral: ObjectIdentifier, connectionHandle: UInt16, configuration: GATTClientConfiguration,
        central: ConnectedCentral?
    ) {
        state.withLock { state in
            if configuration.isEmpty {
                state.subscribed[peripheral]?[connectionHandle] = nil
            } else {
                state.subscribed[peripheral, default: [:]][connectionHandle] = configuration
            }
        }
        subscriptionSubscribers.yield(CharacteristicSubscription(
            central: central, connectionHandle: connectionHandle,
            notifications: configuration.contains(.notification), indications: configuration.contains(.indication)))
    }

    func subscriptionsEnded(on peripheral: ObjectIdentifier, connectionHandle: UInt16?) {
        let ended = state.withLock { state -> [UInt16] in
            let current = state.subscribed[peripheral] ?? [:]
            let ended = connectionHandle.map { current[$0] == nil ? [] : [$0] } ?? current.keys.sorted()
            for handle in ended { state.subscribed[peripheral]?[handle] = nil }
            return ended
        }
        for handle in ended {
            subscriptionSubscribers.yield(
                CharacteristicSubscription(central: nil, connectionHandle: handle, notifications: false, indications: false))
        }
    }

    func deliverWrite(_ bytes: [UInt8], from central: ConnectedCentral?, connectionHandle: UInt16) {
        guard case let .success(value) = Self.decode(bytes) else { return }
        writeSubscribers.yield(CharacteristicWrite(value: value, bytes: bytes, central: central, connectionHandle: connectionHandle))
    }
}

/// A value a central wrote to a ``Characteristic``.
public struct CharacteristicWrite<Value: Sendable>: Sendable {
    /// The decoded value (already stored in the property).
    public let value: Value
    /// The bytes as written.
    public let bytes: [UInt8]
    /// The central that wrote it; nil only if its connection closed before the write was
    /// delivered.
    public let central: ConnectedCentral?
    /// HCI handle of the connection it came over.
    public let connectionHandle: UInt16
}

/// A central subscribing to or unsubscribing from a ``Characteristic``'s notifications or
/// indications (``Characteristic/subscriptions``).
public struct CharacteristicSubscription: Sendable, Equatable {
    /// The central; nil when the subscription ended because its link closed.
    public let central: ConnectedCentral?
    /// HCI handle of the central's connection.
    public let connectionHandle: UInt16
    /// Notifications are enabled.
    public let notifications: Bool
    /// Indications are enabled.
    public let indications: Bool
    /// The central receives new values (notifications or indications).
    public var isSubscribed: Bool { notifications || indications }
}

/// What a ``Peripheral`` needs from a characteristic of any value type.
protocol CharacteristicBindable: AnyObject, Sendable {
    /// The characteristic type UUID.
    var uuid: BluetoothUUID { get }
    /// The server definition: value, properties, read handler and write validation.
    func definition() -> GATTCharacteristicDefinition
    /// From now on, assignments are queued to `sink` (one binding per peripheral).
    func bind(_ sink: PeripheralValueSink)
    /// Stops queuing assignments for this peripheral.
    func unbind(from peripheral: ObjectIdentifier)
    /// Hands a write the server applied to the ``Characteristic/writes`` subscribers.
    func deliverWrite(_ bytes: [UInt8], from central: ConnectedCentral?, connectionHandle: UInt16)
    /// A central on `peripheral` changed its Client Characteristic Configuration.
    func subscriptionChanged(
        on peripheral: ObjectIdentifier, connectionHandle: UInt16, configuration: GATTClientConfiguration,
        central: ConnectedCentral?)
    /// The subscriptions of one connection (or all, for nil) on `peripheral` ended.
    func subscriptionsEnded(on peripheral: ObjectIdentifier, connectionHandle: UInt16?)
}

/// Where a bound characteristic queues its new values: one peripheral's ordered update stream
/// and the characteristic's value handle in that peripheral's server.
struct PeripheralValueSink: Sendable {
    /// Identity of the ``Peripheral``.
    let peripheral: ObjectIdentifier
    /// The value handle of the characteristic there.
    let valueHandle: UInt16
    /// The peripheral's update queue.
    let updates: AsyncStream<PeripheralValueUpdate>.Continuation

    func enqueue(_ bytes: [UInt8]) { updates.yield(PeripheralValueUpdate(valueHandle: valueHandle, bytes: bytes)) }
}

/// One new characteristic value on its way to the server and its subscribers.
struct PeripheralValueUpdate: Sendable {
    let valueHandle: UInt16
    let bytes: [UInt8]
    /// Resumed once the host has taken the value (``Peripheral/notify(_:of:)``).
    var handed: CheckedContinuation<Void, Never>? = nil
    /// Sent to every connected central, subscribed or not (``Peripheral/notifyEveryCentral(_:at:)``).
    var everyCentral = false
}
