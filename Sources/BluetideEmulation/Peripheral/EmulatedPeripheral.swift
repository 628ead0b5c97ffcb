import Bluetide
import BluetideBase
import BluetideDeviceModels
import BluetideHost
import BluetideTransport
import BluetideSupport

/// Serves one or more ``DeviceModel``s as a BLE peripheral through the public ``Peripheral``
/// API of one ``Bluetooth`` host.
///
/// Each model's services become GATT services (``Peripheral/add(definitions:)``): reads ask the
/// model (through a read handler), writes go to the model inside the server's synchronous write
/// validator, so a refused write is answered with the model's ATT error and an accepted one
/// changes the model before the Write Response is sent (see ``ServedModel`` for why that is
/// safe). What writes and the periodic ``DeviceModel/tick(now:)`` return is sent with
/// ``Peripheral/updateValue(_:of:)``, which notifies or indicates each subscribed client as it
/// subscribed and drops the value otherwise.
///
/// The peripheral advertises from the models' ``AdvertisingHints`` (name overridable); the
/// ``Peripheral`` advertises again after every connection and disconnection, so several centrals
/// can connect and a central can come back. What happens is reported as ``events``.
///
/// Models see time as seconds since the peripheral was created, on the clock of the host it
/// serves on (``Bluetooth/Configuration/clock``): the monotonic clock by default, the world's
/// clock in a ``VirtualWorld`` — so a world on a ``ManualClock`` ticks its devices in virtual
/// time, and nothing here waits in real time.
public actor EmulatedPeripheral {
    /// The host the devices are served on.
    public nonisolated let bluetooth: Bluetooth
    /// Connections, disconnections, writes and subscriptions, in order.
    public nonisolated let events: AsyncStream<EmulationEvent>
    /// The name advertised.
    public nonisolated let advertisedName: String
    /// The advertising data and scan response used.
    public nonisolated let advertising: AdvertisingPlan
    /// The GATT services served (for inspection; handlers are wired to the models).
    public nonisolated let serviceDefinitions: [GATTServiceDefinition]
    /// Catalog names of the models served, in order.
    public nonisolated var deviceNames: [String] { served.map(\.name) }
    /// Whether one central at a time is accepted (some model is ``DeviceModel/acceptsOneCentralAtATime``):
    /// advertising stops while one is connected and a second connection is dropped.
    public nonisolated let acceptsOneCentralAtATime: Bool
    /// The address the device advertises from.
    public nonisolated var address: BluetoothAddress { bluetooth.address }

    nonisolated let served: [ServedModel]
    private let eventSink: AsyncStream<EmulationEvent>.Continuation
    private let pushes: AsyncStream<OutputBatch>
    private let pushSink: AsyncStream<OutputBatch>.Continuation
    private let clock: ModelClock
    private var tasks: [Task<Void, Never>] = []
    private var started = false

    /// Outputs of one model call, sent in order.
    struct OutputBatch: Sendable {
        let model: ServedModel
        let outputs: [EmulatedOutput]
    }

    /// Prepares `models` for `bluetooth`'s peripheral role (nothing is served until ``start()``).
    /// `name` replaces the advertised local name of the first model. Serve one emulation per
    /// host: it owns the host's GATT services and advertising.
    public init(bluetooth: Bluetooth, models: [any DeviceModel], name: String? = nil) {
        self.bluetooth = bluetooth
        let clock = ModelClock(bluetooth.central.clock)
        self.clock = clock
        (events, eventSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
        (pushes, pushSink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        let hints = AdvertisingPlan.merged(models.map(\.advertising))
        advertisedName = name ?? hints.localName
        advertising = AdvertisingPlan(hints: hints, name: name)
        acceptsOneCentralAtATime = models.contains { $0.acceptsOneCentralAtATime }

        // One Device Information service per device: when several models are served together,
        // the first one's 0x180A is the device's and the others' are left out.
        var servesDeviceInformation = false
        let modelServices = models.map { model in
            model.services.filter { service in
                guard service.uuid == .deviceInformation else { return true }
                defer { servesDeviceInformation = true }
                return !servesDeviceInformation
            }
        }
        // Lay the database out once without handlers to learn every value handle.
        let plain = modelServices.flatMap { services in
            services.map { service in
                GATTServiceDefinition(uuid: service.uuid, characteristics: service.characteristics.map {
                    GATTCharacteristicDefinition(uuid: $0.uuid, properties: GATTCharacteristicProperties(rawValue: $0.properties.rawValue))
                })
            }
        }
        let layout = AttributeLayout(plain)
        var served: [ServedModel] = []
        var serviceIndex = 0
        for (model, services) in zip(models, modelServices) {
            var handles: [BluetoothUUID: UInt16] = [:]
            for service in services {
                for (index, c) in service.characteristics.enumerated() where handles[c.uuid] == nil {
                    handles[c.uuid] = layout.handles[serviceIndex][index]
                }
                serviceIndex += 1
            }
            served.append(ServedModel(model: model, services: services, handles: handles))
        }
        self.served = served
        let events = eventSink
        let pushes = pushSink
        serviceDefinitions = served.flatMap { box in
            box.services.map { service in
                GATTServiceDefinition(uuid: service.uuid, characteristics: service.characteristics.map { c in
                    let uuid = c.uuid
                    return GATTCharacteristicDefinition(
                        uuid: uuid, properties: GATTCharacteristicProperties(rawValue: c.properties.rawValue),
                        value: c.initialValue,
                        onRead: { _ in .success(box.read(uuid, now: clock.now())) },
                        validateWrite: { context in
                            let outcome = box.write(uuid, context.value, now: clock.now())
                            events.yield(.wrote(
                                connection: context.connection, device: box.name, characteristic: uuid,
                                value: context.value, attError: outcome.attError))
                            switch outcome {
                            case let .rejected(code): return ATTErrorCode(rawValue: code)
                            case let .accepted(outputs):
                                if !outputs.isEmpty { pushes.yield(OutputBatch(model: box, outputs: outputs)) }
                                return nil
                            }
                        })
                })
            }
        }
    }

    /// Opens a host on `transport` (any ``Bluetooth/open(transport:configuration:)`` spec, e.g.
    /// `serial:/dev/ttyACM0` or `hci-socket:0`) and serves `models` on it, advertising `name`
    /// (nil: the first model's) from `address` (nil: a fresh random static address).
    /// ``close()`` closes the host too.
    public static func open(
        transport: String, models: [any DeviceModel], name: String? = nil, address: BluetoothAddress? = nil
    ) async throws -> EmulatedPeripheral {
        let bluetooth = try await Bluetooth.open(
            transport: transport, configuration: hostConfiguration(models, name: name, address: address))
        return try await serve(models, name: name, on: bluetooth)
    }

    /// A host on `transport` advertising from `address` (a random static address; nil makes one),
    /// started, serving `models`; the peripheral is started too. `commandTimeout` is the host's
    /// HCI command timeout, seconds; the host runs on `clock` (a test's manual clock: on a link made
    /// on the same clock). For the package's set-ups and tests; ``VirtualWorld`` and
    /// ``open(transport:models:name:address:)`` are the public ways to place emulated devices.
    package static func launch(
        transport: any HCITransport, models: [any DeviceModel], name: String? = nil, address: BluetoothAddress? = nil,
        commandTimeout: Double = 10, clock: BluetideClock = .continuous
    ) async throws -> EmulatedPeripheral {
        var configuration = hostConfiguration(models, name: name, address: address, commandTimeout: .seconds(commandTimeout))
        configuration.clock = clock
        let bluetooth = try await Bluetooth.start(on: transport, spec: "emulated", configuration: configuration)
        return try await serve(models, name: name, on: bluetooth)
    }

    /// The host settings of a device serving `models`: its name and appearance from their hints.
    static func hostConfiguration(
        _ models: [any DeviceModel], name: String?, address: BluetoothAddress?, commandTimeout: Duration = .seconds(10)
    ) -> Bluetooth.Configuration {
        let hints = AdvertisingPlan.merged(models.map(\.advertising))
        return .init(
            address: address, deviceName: name ?? hints.localName, appearance: hints.appearance ?? 0,
            commandTimeout: commandTimeout)
    }

    /// Serves `models` on the started `bluetooth`; closes it when serving cannot start.
    static func serve(_ models: [any DeviceModel], name: String?, on bluetooth: Bluetooth) async throws -> EmulatedPeripheral {
        let peripheral = EmulatedPeripheral(bluetooth: bluetooth, models: models, name: name)
        do {
            try await peripheral.start()
            return peripheral
        } catch {
            await bluetooth.close()
            throw error
        }
    }

    /// Installs the services, starts advertising and the tick, output and connection tasks.
    public func start() async throws {
        guard !started else { return }
        started = true
        let peripheral = bluetooth.peripheral
        // One central at a time: advertising pauses while it is connected. Otherwise as many
        // as the controller takes (it refuses connections beyond its own limit).
        peripheral.maximumCentrals = acceptsOneCentralAtATime ? 1 : 64
        // Subscribe before advertising, so no connection or subscription is missed.
        let connections = peripheral.connections
        let subscriptions = peripheral.subscriptionChanges
        let values = await peripheral.add(definitions: serviceDefinitions).flatMap { $0 }
        var byHandle: [UInt16: ServedValue] = [:]
        for value in values { byHandle[value.valueHandle] = value }
        try await advertise()
        let clock = self.clock
        let pushes = self.pushes
        // One sender keeps every model's outputs in the order they were produced.
        tasks.append(Task { [byHandle] in
            for await batch in pushes {
                for output in batch.outputs {
                    guard let handle = batch.model.handles[output.characteristic], let value = byHandle[handle] else { continue }
                    peripheral.updateValue(output.bytes, of: value)
                }
            }
        })
        // Each model's tick grid starts now, read here rather than in the tick task: a task
        // scheduled late (a busy machine, or a manual clock moved before it first ran) would
        // otherwise start its grid late and miss the ticks already due.
        let gridStart = clock.now()
        for box in served {
            let sink = pushSink
            tasks.append(Task {
                var ticks = ModelTicks(interval: box.tickInterval, start: gridStart)
                while !Task.isCancelled {
                    do { try await clock.sleep(untilSeconds: ticks.next) } catch { return }
                    if Task.isCancelled { return }
                    let now = clock.now()
                    ticks.advance(now: now)
                    let outputs = box.tick(now: now)
                    if !outputs.isEmpty { sink.yield(OutputBatch(model: box, outputs: outputs)) }
                }
            })
        }
        tasks.append(Task { [weak self] in
            for await central in connections { await self?.connected(central) }
        })
        tasks.append(Task { [weak self] in
            for await change in subscriptions { await self?.subscriptionChanged(change) }
        })
    }

    /// Stops the tasks and advertising; the host stays up (``close()`` closes it too).
    public func stop() async {
        for task in tasks { task.cancel() }
        tasks.removeAll()
        pushSink.finish()
        eventSink.finish()
        try? await bluetooth.peripheral.stopAdvertising()
    }

    /// Stops serving and closes the host.
    public func close() async {
        await stop()
        await bluetooth.close()
    }

    private func advertise() async throws {
        try await bluetooth.peripheral.startAdvertising(
            advertising.advertisingData, scanResponse: advertising.scanResponse, interval: .milliseconds(100))
    }

    private func connected(_ central: ConnectedCentral) async {
        eventSink.yield(.connected(connection: central.handle, peer: central.address))
        if acceptsOneCentralAtATime, bluetooth.peripheral.connectedCentrals.contains(where: { $0.handle != central.handle }) {
            try? await central.disconnect()
        }
        await updateNotificationLength()
        tasks.append(Task { [weak self] in
            let reason = await central.waitForDisconnection()
            await self?.disconnected(central, reason: reason)
        })
    }

    private func disconnected(_ central: ConnectedCentral, reason: DisconnectReason) {
        eventSink.yield(.disconnected(connection: central.handle, reason: reason))
    }

    private func subscriptionChanged(_ change: PeripheralSubscriptionChange) async {
        for box in served {
            guard let uuid = box.handles.first(where: { $0.value == change.value.valueHandle })?.key else { continue }
            eventSink.yield(.subscribed(
                connection: change.central.handle, device: box.name, characteristic: uuid,
                configuration: change.configuration.rawValue))
            break
        }
        // The MTU exchange comes before subscribing: a good moment to size COLMI frames.
        await updateNotificationLength()
    }

    /// Sizes COLMI notifications to the smallest ATT MTU among open links (MTU − 3 octets).
    private func updateNotificationLength() async {
        var smallest = Int.max
        for central in bluetooth.peripheral.connectedCentrals { smallest = min(smallest, await central.mtu() - 3) }
        guard smallest != Int.max else { return }
        for box in served { box.setMaximumNotificationLength(smallest) }
    }
}

/// Seconds since creation on the host's clock: the time emulated models are driven with.
struct ModelClock: Sendable {
    private let elapsed: ElapsedClock<BluetideClock>

    init(_ clock: BluetideClock) { elapsed = ElapsedClock(clock: clock) }

    func now() -> Double { elapsed.seconds }

    /// Suspends until `seconds` since creation (throws `CancellationError` when cancelled).
    func sleep(untilSeconds seconds: Double) async throws {
        try await elapsed.clock.sleep(until: elapsed.origin.advanced(by: .seconds(seconds)))
    }
}

/// When a model's next tick is due, seconds on its ``ModelClock``: one interval after the
/// previous one, without drift; after a stall longer than an interval (a starved machine) the
/// next tick is one interval from now, so ticks never come in a burst to catch up.
struct ModelTicks: Sendable, Equatable {
    let interval: Double
    private(set) var next: Double

    init(interval: Double, start: Double) {
        self.interval = interval
        next = start + interval
    }

    /// Schedules the tick after the one that ran at `now`.
    mutating func advance(now: Double) {
        next += interval
        if next <= now { next = now + interval }
    }
}
