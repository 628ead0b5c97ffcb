import BluetideCore
import BluetideEmulators
import BluetideHCI
import BluetideHost
import BluetideTransport

/// Serves one or more ``DeviceModel``s as a BLE peripheral on one ``HostStack``.
///
/// Each model's services become GATT services: reads ask the model (through a read handler),
/// writes go to the model inside the server's synchronous write validator, so a refused write
/// is answered with the model's ATT error and an accepted one changes the model before the Write
/// Response is sent (see ``ServedModel`` for why that is safe). What writes and the periodic
/// ``DeviceModel/tick(now:)`` return is sent with ``HostStack/updateValue(_:at:)``, which
/// notifies or indicates each subscribed client as it subscribed and drops the value otherwise.
///
/// The peripheral advertises from the models' ``AdvertisingHints`` (name overridable) and
/// advertises again after every connection and disconnection, so several centrals can connect
/// and a central can come back. It consumes the stack's ``HostStack/incomingConnections`` and
/// ``HostStack/serverEvents`` streams and reports what happens as ``events``.
///
/// Models see time as seconds since the peripheral was created.
public actor EmulatedPeripheral {
    /// The stack the devices are served on.
    public nonisolated let stack: HostStack
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

    /// Prepares `models` for `stack` (nothing is sent until ``start()``). `name` replaces the
    /// advertised local name of the first model.
    public init(stack: HostStack, models: [any DeviceModel], name: String? = nil) {
        self.stack = stack
        let clock = ModelClock()
        self.clock = clock
        (events, eventSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
        (pushes, pushSink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        let hints = AdvertisingPlan.merged(models.map(\.advertising))
        advertisedName = name ?? hints.localName
        advertising = AdvertisingPlan(hints: hints, name: name)
        acceptsOneCentralAtATime = models.contains { $0.acceptsOneCentralAtATime }

        // Lay the database out once without handlers to learn every value handle.
        let plain = models.flatMap { model in
            model.services.map { service in
                GATTServiceDefinition(uuid: service.uuid, characteristics: service.characteristics.map {
                    GATTCharacteristicDefinition(uuid: $0.uuid, properties: GATTCharacteristicProperties(rawValue: $0.properties.rawValue))
                })
            }
        }
        let layout = AttributeLayout(plain)
        var served: [ServedModel] = []
        var serviceIndex = 0
        for model in models {
            var handles: [BluetoothUUID: UInt16] = [:]
            for service in model.services {
                for (index, c) in service.characteristics.enumerated() where handles[c.uuid] == nil {
                    handles[c.uuid] = layout.handles[serviceIndex][index]
                }
                serviceIndex += 1
            }
            served.append(ServedModel(model: model, handles: handles))
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

    /// A stack on `transport` advertising from `address` (a random static address; nil makes one),
    /// started, serving `models`; the peripheral is started too. `commandTimeout` is the stack's
    /// HCI command timeout, seconds.
    public static func launch(
        transport: any HCITransport, models: [any DeviceModel], name: String? = nil, address: BluetoothAddress? = nil,
        commandTimeout: Double = 10
    ) async throws -> EmulatedPeripheral {
        let hints = AdvertisingPlan.merged(models.map(\.advertising))
        let stack = HostStack(transport: transport, configuration: .init(
            randomAddress: address ?? .randomStatic(UInt64.random(in: 0...UInt64.max)),
            deviceName: name ?? hints.localName, appearance: hints.appearance ?? 0, commandTimeout: commandTimeout))
        do {
            try await stack.start()
            let peripheral = EmulatedPeripheral(stack: stack, models: models, name: name)
            try await peripheral.start()
            return peripheral
        } catch {
            await stack.close()
            throw error
        }
    }

    /// The address the stack advertises from (after the stack has started).
    public var address: BluetoothAddress? {
        get async { await stack.controller?.address }
    }

    /// Installs the services, starts advertising and the tick, output and connection tasks.
    /// The stack must be started.
    public func start() async throws {
        guard !started else { return }
        started = true
        await stack.setServices(serviceDefinitions)
        try await advertise()
        let stack = self.stack
        let clock = self.clock
        let pushes = self.pushes
        // One sender keeps every model's outputs in the order they were produced.
        tasks.append(Task {
            for await batch in pushes {
                for output in batch.outputs {
                    guard let handle = batch.model.handles[output.characteristic] else { continue }
                    await stack.updateValue(output.bytes, at: handle)
                }
            }
        })
        for box in served {
            let sink = pushSink
            tasks.append(Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(box.tickInterval))
                    if Task.isCancelled { return }
                    let outputs = box.tick(now: clock.now())
                    if !outputs.isEmpty { sink.yield(OutputBatch(model: box, outputs: outputs)) }
                }
            })
        }
        tasks.append(Task { [weak self] in
            for await connection in stack.incomingConnections {
                await self?.connected(connection)
            }
        })
        tasks.append(Task { [weak self] in
            for await event in stack.serverEvents {
                await self?.serverEvent(event)
            }
        })
    }

    /// Stops the tasks and advertising; the stack stays up (close it separately).
    public func stop() async {
        for task in tasks { task.cancel() }
        tasks.removeAll()
        pushSink.finish()
        eventSink.finish()
        try? await stack.stopAdvertising()
    }

    private func advertise() async throws {
        try await stack.startAdvertising(
            advertising.advertisingData, scanResponse: advertising.scanResponse, intervalMilliseconds: 100)
    }

    private func connected(_ connection: HostConnection) async {
        eventSink.yield(.connected(connection: connection.handle, peer: connection.peer))
        if acceptsOneCentralAtATime {
            if await stack.openConnections.contains(where: { $0.handle != connection.handle }) {
                _ = try? await connection.disconnect(reason: .remoteUserTerminated)
            } else {
                try? await stack.stopAdvertising()
            }
        }
        await updateNotificationLength()
        if !acceptsOneCentralAtATime { await readvertise() }
        tasks.append(Task { [weak self] in
            let reason = await connection.waitForDisconnection()
            await self?.disconnected(connection, reason: reason)
        })
    }

    private func disconnected(_ connection: HostConnection, reason: HCIStatus) async {
        eventSink.yield(.disconnected(connection: connection.handle, reason: reason))
        if acceptsOneCentralAtATime, await stack.openConnections.contains(where: { $0.handle != connection.handle }) { return }
        await readvertise()
    }

    private func readvertise() async {
        guard started, !tasks.isEmpty else { return }
        do { try await advertise() } catch { eventSink.yield(.advertisingFailed("\(error)")) }
    }

    private func serverEvent(_ event: HostStack.ServerEvent) async {
        guard case let .subscriptionChanged(connection, valueHandle, configuration) = event.event else { return }
        for box in served {
            guard let uuid = box.handles.first(where: { $0.value == valueHandle })?.key else { continue }
            eventSink.yield(.subscribed(
                connection: connection, device: box.name, characteristic: uuid, configuration: configuration.rawValue))
            break
        }
        // The MTU exchange comes before subscribing: a good moment to size COLMI frames.
        await updateNotificationLength()
    }

    /// Sizes COLMI notifications to the smallest ATT MTU among open links (MTU − 3 octets).
    private func updateNotificationLength() async {
        var smallest = Int.max
        for connection in await stack.openConnections { smallest = min(smallest, await connection.mtu() - 3) }
        guard smallest != Int.max else { return }
        for box in served { box.setMaximumNotificationLength(smallest) }
    }
}

/// Seconds since creation on the monotonic clock: the time emulated models are driven with.
struct ModelClock: Sendable {
    private let origin = ContinuousClock.now

    func now() -> Double {
        let elapsed = ContinuousClock.now - origin
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
