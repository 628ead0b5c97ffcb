import BluetideHost
import Synchronization
import BluetideSupport

/// The peripheral role: serves ``GATTService`` objects and advertises so centrals can connect.
///
/// ```swift
/// let peripheral = bluetooth.peripheral              // bluetooth = try await Bluetooth.open(...)
/// let punch = PunchService()
/// try await peripheral.add(punch)
/// try await peripheral.startAdvertising(name: "Reflex-1A2B", serviceUUIDs: [PunchUUID.service])
/// punch.response = PunchResponse(...)                 // notifies subscribed centrals
/// for await write in punch.$targets.writes { ... }    // values centrals wrote
/// ```
///
/// Several centrals may be connected at once (up to ``maximumCentrals``). The controller stops
/// advertising when a central connects; the peripheral starts it again, after a connection while
/// there is room for another central and after a disconnect, unless
/// ``readvertisesAutomatically`` is turned off.
///
/// Each ``Bluetooth`` host has exactly one, ``Bluetooth/peripheral``: it owns the host's local
/// GATT services and hears every incoming connection and server event. Services come as
/// ``GATTService`` objects (``add(services:)``) or as definitions with read and write handlers
/// (``add(definitions:)``, what emulated and replayed devices use). Its background tasks end
/// when it is deinitialised.
public final class Peripheral: Sendable {
    /// The stack this peripheral drives: the own host or another backend (BlueZ…).
    let backend: any PeripheralBackend
    /// Why this peripheral cannot advertise (its ``Bluetooth`` runs on a backend without the
    /// peripheral role), in one line saying what to use instead; nil when it can.
    var unavailable: String? { backend.unavailable }

    private let state: Mutex<State>
    private let updates: AsyncStream<PeripheralValueUpdate>.Continuation
    private let control: AsyncStream<ControlMessage>.Continuation
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let connectionSubscribers = SubscriberList<ConnectedCentral>(bufferSize: 64)
    private let subscriptionSubscribers = SubscriberList<PeripheralSubscriptionChange>(bufferSize: 256)
    private let authorizationSubscribers = SubscriberList<AuthorizationRequest>(bufferSize: 64)

    private struct State {
        var centrals: [UInt16: ConnectedCentral] = [:]
        var characteristicsByHandle: [UInt16: any CharacteristicBindable] = [:]
        var registered: [ObjectIdentifier] = []
        var readvertises = true
        var maximumCentrals = 4
        var advertisingWanted = false
        /// Why the backend refused the services last added; thrown by the next advertising start.
        var servingProblem: String?
    }

    /// A service as reflected at ``add(services:)``, or as given to ``add(definitions:)``.
    struct RegisteredService: Sendable {
        let uuid: BluetoothUUID
        let isPrimary: Bool
        let characteristics: [any CharacteristicBindable]
        /// The definition as given (``add(definitions:)``); nil for a reflected service.
        var given: GATTServiceDefinition? = nil

        func definition() -> GATTServiceDefinition {
            given ?? GATTServiceDefinition(uuid: uuid, isPrimary: isPrimary, characteristics: characteristics.map { $0.definition() })
        }
    }

    /// What to advertise, laid out for legacy advertising.
    struct AdvertisingRequest: Sendable {
        let advertising: AdvertisingData
        let scanResponse: AdvertisingData?
        let intervalMilliseconds: Double
    }

    /// Work done in order by the control task: service registration and advertising.
    private enum ControlMessage: Sendable {
        /// Answers with the value handles of every registered service, in order.
        case register([RegisteredService], CheckedContinuation<[[UInt16]], Never>)
        /// Replaces every service with a database laid out by the caller.
        case place([GATTServicePlacement], CheckedContinuation<Void, any Error>)
        case startAdvertising(AdvertisingRequest, CheckedContinuation<Void, any Error>)
        case stopAdvertising(CheckedContinuation<Void, any Error>)
        case connectionsChanged(connected: Bool)
    }

    /// A peripheral on `stack`, which must be started (``HostStack/start()``) before services
    /// are added or advertising starts.
    package convenience init(stack: HostStack, unavailable: String? = nil) {
        self.init(backend: HostPeripheralBackend(stack: stack, unavailable: unavailable))
    }

    /// A peripheral on `backend` (``PeripheralBackendProvider/makePeripheral()``).
    init(backend: any PeripheralBackend) {
        self.backend = backend
        state = Mutex(State())
        let (updateStream, updates) = AsyncStream.makeStream(of: PeripheralValueUpdate.self, bufferingPolicy: .unbounded)
        self.updates = updates
        let (controlStream, control) = AsyncStream.makeStream(of: ControlMessage.self, bufferingPolicy: .unbounded)
        self.control = control

        // New values go to the server in the order they were assigned: one task, awaiting each.
        let valueTask = Task {
            for await update in updateStream {
                if update.everyCentral {
                    await backend.notifyEveryCentral(update.bytes, of: ServedValue(valueHandle: update.valueHandle))
                } else {
                    await backend.updateValue(update.bytes, of: ServedValue(valueHandle: update.valueHandle))
                }
                update.handed?.resume()
            }
        }
        let controlTask = Task { [weak self] in
            var registered: [RegisteredService] = []
            var advertising: AdvertisingRequest?
            for await message in controlStream {
                guard let self else { return }
                await self.handle(message, registered: &registered, advertising: &advertising)
            }
        }
        let eventTask = Task { [weak self] in
            for await event in backend.events {
                guard let self else { return }
                await self.handle(event)
            }
        }
        tasks.withLock { $0 = [valueTask, controlTask, eventTask] }
    }

    deinit {
        updates.finish()
        control.finish()
        for task in tasks.withLock({ $0 }) { task.cancel() }
        connectionSubscribers.finishAll()
        subscriptionSubscribers.finishAll()
        authorizationSubscribers.finishAll()
    }

    // MARK: - Settings

    /// Whether advertising resumes by itself after a central disconnects, and after a central
    /// connects while fewer than ``maximumCentrals`` are connected. True by default; when false,
    /// advertising ends at the first connection until ``startAdvertising(name:serviceUUIDs:manufacturerData:serviceData:interval:)``
    /// is called again.
    public var readvertisesAutomatically: Bool {
        get { state.withLock { $0.readvertises } }
        set { state.withLock { $0.readvertises = newValue } }
    }

    /// Most centrals connected at once (4 by default, at least 1): advertising pauses while
    /// this many are connected. A controller that cannot advertise while connected simply
    /// accepts one central at a time.
    public var maximumCentrals: Int {
        get { state.withLock { $0.maximumCentrals } }
        set { state.withLock { $0.maximumCentrals = max(newValue, 1) } }
    }

    // MARK: - Services

    /// Adds a service; see ``add(services:)``.
    public func add(_ service: some GATTService) async throws {
        try await add(services: [service])
    }

    /// Adds services to the local GATT server, after those added before (whose handles do not
    /// change). Each service's ``Characteristic`` properties are found by reflection, in
    /// declaration order, and bound to their value handles: from then on, assigning a property
    /// updates the server and notifies subscribers.
    ///
    /// Centrals already connected keep their links but lose their subscriptions; those that
    /// subscribed to Service Changed are told to rediscover.
    /// - Throws: ``PeripheralError/serviceHasNoCharacteristics(_:)`` for a service without
    ///   `@Characteristic` properties, ``PeripheralError/serviceAlreadyAdded(_:)`` for a service
    ///   added twice.
    public func add(services: [any GATTService]) async throws {
        var fresh: [RegisteredService] = []
        var seen = Set<ObjectIdentifier>()
        for service in services {
            let characteristics = service.characteristicBindings
            guard !characteristics.isEmpty else { throw PeripheralError.serviceHasNoCharacteristics(service.uuid) }
            let ids = characteristics.map { ObjectIdentifier($0) }
            let known = state.withLock { state in ids.contains { state.registered.contains($0) } }
            guard !known, ids.allSatisfy({ seen.insert($0).inserted }) else {
                throw PeripheralError.serviceAlreadyAdded(service.uuid)
            }
            fresh.append(RegisteredService(uuid: service.uuid, isPrimary: service.isPrimary, characteristics: characteristics))
        }
        state.withLock { $0.registered += fresh.flatMap { $0.characteristics.map { ObjectIdentifier($0) } } }
        _ = await register(fresh)
    }

    /// Adds services given as definitions, after those added before: for devices whose values
    /// are computed when read (`onRead`) or checked when written (`validateWrite`, which may
    /// refuse with an ATT error) rather than stored in ``Characteristic`` properties — emulated
    /// and replayed devices. Returns each characteristic's value, by service and characteristic
    /// in definition order, for ``updateValue(_:of:)``. Subscriptions to them are reported on
    /// ``subscriptionChanges``.
    ///
    /// Centrals already connected keep their links but lose their subscriptions.
    @discardableResult
    public func add(definitions: [GATTServiceDefinition]) async -> [[ServedValue]] {
        let fresh = definitions.map {
            RegisteredService(uuid: $0.uuid, isPrimary: $0.isPrimary, characteristics: [], given: $0)
        }
        let handles = await register(fresh)
        return handles.suffix(fresh.count).map { $0.map(ServedValue.init(valueHandle:)) }
    }

    /// Replaces every service (and the host's own GAP and GATT services) with `services` at
    /// exactly the handles they give, gaps allowed (``GATTDatabase/init(placing:)``): for a
    /// device that must keep another device's handles, as a clone of a captured device does
    /// for clients that cached them. Include a GAP (0x1800) and GATT (0x1801) service among
    /// `services` to serve them. Returns each characteristic's value, by service and
    /// characteristic in order, for ``updateValue(_:of:)``.
    ///
    /// Services added afterwards with ``add(definitions:)`` or ``add(services:)`` replace this
    /// layout with the host's own. Centrals already connected lose their subscriptions.
    /// - Throws: ``BluetideError/invalidArgument(_:)`` saying which handle breaks the layout's
    ///   rules (overlapping services, a value before its declaration, a handle used twice).
    @discardableResult
    public func serve(placed services: [GATTServicePlacement]) async throws -> [[ServedValue]] {
        do { _ = try GATTDatabase(placing: services) } catch {
            throw BluetideError.invalidArgument("GATT layout: \(error)")
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            if case .terminated = control.yield(.place(services, continuation)) { continuation.resume() }
        }
        return services.map { $0.characteristics.map { ServedValue(valueHandle: $0.valueHandle) } }
    }

    /// Queues `fresh` for registration; returns the value handles of every registered service.
    private func register(_ fresh: [RegisteredService]) async -> [[UInt16]] {
        await withCheckedContinuation { continuation in
            if case .terminated = control.yield(.register(fresh, continuation)) { continuation.resume(returning: []) }
        }
    }

    /// Sets a value added with ``add(definitions:)`` and notifies (or indicates) every central
    /// subscribed to it; values are sent in the order they were given.
    public func updateValue(_ bytes: [UInt8], of value: ServedValue) {
        updates.yield(PeripheralValueUpdate(valueHandle: value.valueHandle, bytes: bytes))
    }

    /// Sends `bytes` as a notification of the attribute at `handle` to every connected central,
    /// subscribed or not, in order with ``updateValue(_:of:)``: what some devices do on an
    /// attribute that has no CCCD (a descriptor they notify on), which a clone of one repeats.
    public func notifyEveryCentral(_ bytes: [UInt8], at handle: ServedValue) {
        updates.yield(PeripheralValueUpdate(valueHandle: handle.valueHandle, bytes: bytes, everyCentral: true))
    }

    /// Sets a value and notifies subscribers as ``updateValue(_:of:)`` does, in order with it,
    /// and returns once the host has queued the notifications for the controller: a stream sent
    /// value by value, each after ``ConnectedCentral/waitForRoom()``, then goes at the links'
    /// pace instead of piling up in memory (the UART server does this).
    public func notify(_ bytes: [UInt8], of value: ServedValue) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let update = PeripheralValueUpdate(valueHandle: value.valueHandle, bytes: bytes, handed: continuation)
            if case .terminated = updates.yield(update) { continuation.resume() }
        }
    }

    /// Value handles of every characteristic of `services` in a server built from them, in
    /// order: the layout the host stack's server uses (GAP and GATT services first).
    static func valueHandles(of services: [GATTServiceDefinition]) -> [[UInt16]] {
        let database = GATTDatabase(deviceName: "", services: services)
        var handles: [[UInt16]] = []
        var serviceIndex = -1
        for attribute in database.attributes {
            if attribute.role == .serviceDeclaration {
                serviceIndex += 1
                if serviceIndex >= 2 { handles.append([]) }
            } else if case .characteristicValue = attribute.role, serviceIndex >= 2 {
                handles[handles.count - 1].append(attribute.handle)
            }
        }
        return handles
    }

    private func install(_ services: [RegisteredService]) async -> [[UInt16]] {
        let definitions = services.map { $0.definition() }
        let handles = Self.valueHandles(of: definitions)
        let exported = zip(definitions, handles).map { PeripheralBackendService($0, values: $1.map(ServedValue.init(valueHandle:))) }
        do {
            try await backend.setServices(exported)
            state.withLock { $0.servingProblem = nil }
        } catch {
            state.withLock { $0.servingProblem = "the services could not be served: \(error)" }
        }
        // The new server starts without subscriptions.
        for service in services {
            for characteristic in service.characteristics {
                characteristic.subscriptionsEnded(on: ObjectIdentifier(self), connectionHandle: nil)
            }
        }
        let me = ObjectIdentifier(self)
        var byHandle: [UInt16: any CharacteristicBindable] = [:]
        for (service, serviceHandles) in zip(services, handles) {
            for (characteristic, handle) in zip(service.characteristics, serviceHandles) {
                characteristic.bind(PeripheralValueSink(peripheral: me, valueHandle: handle, updates: updates))
                byHandle[handle] = characteristic
            }
        }
        state.withLock { $0.characteristicsByHandle = byHandle }
        return handles
    }

    // MARK: - Advertising

    /// Starts connectable advertising (legacy: 31 bytes of advertisement + 31 bytes of scan
    /// response). The flags (general discoverable, no BR/EDR), service UUIDs, service data,
    /// manufacturer data and the complete local name go in the advertisement when they fit;
    /// otherwise the name, then the 128-bit UUIDs, then the data move to the scan response.
    /// - Parameters:
    ///   - name: the complete local name, or nil for none.
    ///   - serviceUUIDs: services to announce (16-bit and 128-bit UUIDs in separate lists).
    ///   - manufacturerData: manufacturer-specific data by Bluetooth SIG company identifier.
    ///   - serviceData: service data by service UUID.
    ///   - interval: time between advertising events, 20 ms … 10.24 s.
    /// - Throws: ``PeripheralError/advertisingDataTooLong(_:)`` (saying what needs how many
    ///   bytes) when it cannot fit; errors of the controller.
    public func startAdvertising(
        name: String? = nil, serviceUUIDs: [BluetoothUUID] = [], manufacturerData: [UInt16: [UInt8]] = [:],
        serviceData: [BluetoothUUID: [UInt8]] = [:], interval: Duration = .milliseconds(100)
    ) async throws {
        let layout = try AdvertisingLayout(
            name: name, serviceUUIDs: serviceUUIDs, manufacturerData: manufacturerData, serviceData: serviceData
        ).layout()
        try await startAdvertising(layout.advertising, scanResponse: layout.scanResponse, interval: interval)
    }

    /// Starts connectable advertising with advertising data and a scan response laid out by the
    /// caller (each at most 31 octets), `interval` apart (20 ms … 10.24 s). Re-advertising
    /// after connections and disconnections works as for
    /// ``startAdvertising(name:serviceUUIDs:manufacturerData:serviceData:interval:)``.
    public func startAdvertising(
        _ advertising: AdvertisingData, scanResponse: AdvertisingData? = nil, interval: Duration = .milliseconds(100)
    ) async throws {
        if let unavailable { throw BluetideError.host(unavailable) }
        let milliseconds = interval.inMilliseconds
        let request = AdvertisingRequest(
            advertising: advertising, scanResponse: scanResponse,
            intervalMilliseconds: min(max(milliseconds, 20), 10_240))
        try await withCheckedThrowingContinuation { continuation in
            if case .terminated = control.yield(.startAdvertising(request, continuation)) {
                continuation.resume(throwing: BluetideError.host("the peripheral is closed"))
            }
        }
    }

    /// Stops advertising, including automatic re-advertising, until the next
    /// ``startAdvertising(name:serviceUUIDs:manufacturerData:serviceData:interval:)``.
    public func stopAdvertising() async throws {
        try await withCheckedThrowingContinuation { continuation in
            if case .terminated = control.yield(.stopAdvertising(continuation)) {
                continuation.resume(throwing: BluetideError.host("the peripheral is closed"))
            }
        }
    }

    /// Whether advertising is wanted (started and not stopped): it may be paused while
    /// ``maximumCentrals`` centrals are connected.
    public var isAdvertising: Bool { state.withLock { $0.advertisingWanted } }

    private func handle(
        _ message: ControlMessage, registered: inout [RegisteredService], advertising: inout AdvertisingRequest?
    ) async {
        switch message {
        case let .register(services, continuation):
            registered += services
            continuation.resume(returning: await install(registered))
        case let .place(services, continuation):
            registered = []
            do {
                try await backend.serve(placed: services)
                state.withLock { $0.characteristicsByHandle = [:] }
                continuation.resume()
            } catch {
                continuation.resume(throwing: error)
            }
        case let .startAdvertising(request, continuation):
            do {
                if let problem = state.withLock({ $0.servingProblem }) { throw BluetideError.host(problem) }
                try await backend.startAdvertising(
                    request.advertising, scanResponse: request.scanResponse,
                    intervalMilliseconds: request.intervalMilliseconds)
                advertising = request
                state.withLock { $0.advertisingWanted = true }
                continuation.resume()
            } catch {
                continuation.resume(throwing: BluetideError.from(error, operation: "advertising"))
            }
        case let .stopAdvertising(continuation):
            advertising = nil
            state.withLock { $0.advertisingWanted = false }
            do {
                try await backend.stopAdvertising()
                continuation.resume()
            } catch {
                continuation.resume(throwing: BluetideError.from(error, operation: "advertising"))
            }
        case let .connectionsChanged(connected):
            guard let request = advertising else { return }
            let (count, maximum, readvertises) = state.withLock { ($0.centrals.count, $0.maximumCentrals, $0.readvertises) }
            guard readvertises else {
                // The controller stopped advertising when the central connected (another
                // stack is told to).
                if connected {
                    advertising = nil
                    state.withLock { $0.advertisingWanted = false }
                    if !backend.advertisingStopsOnConnection { try? await backend.stopAdvertising() }
                }
                return
            }
            if count < maximum {
                try? await backend.startAdvertising(
                    request.advertising, scanResponse: request.scanResponse,
                    intervalMilliseconds: request.intervalMilliseconds)
            } else {
                try? await backend.stopAdvertising()
            }
        }
    }

    // MARK: - Connections

    /// The centrals connected now, by connection handle.
    public var connectedCentrals: [ConnectedCentral] {
        state.withLock { $0.centrals.values.sorted { $0.handle < $1.handle } }
    }

    /// Centrals as they connect from now on. Every access makes a new subscription.
    public var connections: AsyncStream<ConnectedCentral> { connectionSubscribers.makeStream() }

    /// Subscription changes of centrals (CCCD writes), on every served characteristic, as they
    /// happen from now on. Every access makes a new subscription.
    public var subscriptionChanges: AsyncStream<PeripheralSubscriptionChange> { subscriptionSubscribers.makeStream() }

    /// Centrals asking to read or write a characteristic declared `security: .authorized`
    /// (or a definition with ``GATTPermissions/readAuthorized`` / ``GATTPermissions/writeAuthorized``)
    /// without being authorised, from now on. Each waits for ``AuthorizationRequest/allow()``
    /// or ``AuthorizationRequest/deny()`` (the first answer counts; unanswered, refused after
    /// 20 s). While nobody reads this sequence every such request is refused at once (0x08):
    /// the default policy is deny. Every access makes a new subscription.
    public var authorizationRequests: AsyncStream<AuthorizationRequest> { authorizationSubscribers.makeStream() }

    private func connected(_ central: ConnectedCentral) {
        state.withLock { $0.centrals[central.handle] = central }
        connectionSubscribers.yield(central)
        control.yield(.connectionsChanged(connected: true))
        // Ends when the link closes (also when the stack stops: it closes every link).
        Task { [weak self] in
            _ = await central.waitForDisconnection()
            guard let self else { return }
            let characteristics = self.state.withLock { state in
                if state.centrals[central.handle] == central { state.centrals.removeValue(forKey: central.handle) }
                return Array(state.characteristicsByHandle.values)
            }
            for characteristic in characteristics {
                characteristic.subscriptionsEnded(on: ObjectIdentifier(self), connectionHandle: central.handle)
            }
            self.control.yield(.connectionsChanged(connected: false))
        }
    }

    // MARK: - Server events

    private func handle(_ event: PeripheralBackendEvent) async {
        switch event {
        case let .connected(central):
            connected(central)
        case let .written(value, bytes, connection):
            guard let characteristic = state.withLock({ $0.characteristicsByHandle[value.valueHandle] }) else { return }
            characteristic.deliverWrite(bytes, from: await central(on: connection), connectionHandle: connection)
        case let .subscriptionChanged(value, configuration, connection):
            let characteristic = state.withLock { $0.characteristicsByHandle[value.valueHandle] }
            guard characteristic != nil || !subscriptionSubscribers.isEmpty else { return }
            // A change that arrives after its link closed would leave a stale subscriber.
            guard let central = await central(on: connection), await central.isConnected() else { return }
            subscriptionSubscribers.yield(PeripheralSubscriptionChange(central: central, value: value, configuration: configuration))
            characteristic?.subscriptionChanged(
                on: ObjectIdentifier(self), connectionHandle: connection, configuration: configuration, central: central)
        case let .authorizationRequested(request):
            // Nobody to ask: refused (the default policy).
            if authorizationSubscribers.yield(request) == 0 { await request.deny() }
        }
    }

    /// The central on a connection handle, also when the event overtook the connection's
    /// announcement.
    private func central(on connection: UInt16) async -> ConnectedCentral? {
        if let known = state.withLock({ $0.centrals[connection] }) { return known }
        return await backend.central(on: connection)
    }
}

/// A characteristic value served by a ``Peripheral``: the handle of an ``Peripheral/add(definitions:)``
/// characteristic, for ``Peripheral/updateValue(_:of:)``.
public struct ServedValue: Sendable, Hashable, CustomStringConvertible {
    /// The attribute handle of the value in the peripheral's GATT server.
    public let valueHandle: UInt16

    /// The value at `valueHandle` (the package's layers lay databases out ahead of time).
    package init(valueHandle: UInt16) { self.valueHandle = valueHandle }

    /// `0x000C`-style handle.
    public var description: String {
        let hex = String(valueHandle, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}

/// A central subscribed to, or unsubscribed from, a served characteristic.
public struct PeripheralSubscriptionChange: Sendable {
    /// Who changed the subscription.
    public let central: ConnectedCentral
    /// Which value.
    public let value: ServedValue
    /// What is wanted now: notifications, indications, or neither (empty).
    public let configuration: GATTClientConfiguration
}
