import Bluetide
import BluetideCapture
import BluetideBase
import BluetideDeviceModels
import BluetideHost
import BluetideRecording
import Synchronization

/// Serves a device rebuilt from a capture (`bluetide clone`'s `device.json`) through the public
/// ``Peripheral`` API: the same services, characteristics (UUIDs, properties, order) and
/// advertising; reads answered with the captured values; notifications that answered no write
/// replayed with their captured timing from the first subscription; writes answered from the
/// learned command→reply table — the exact bytes first, else the captured write to the same
/// characteristic sharing the most leading bytes — and writes matching nothing logged.
///
/// The database is served at the captured handles (``placements``, through
/// ``Peripheral/serve(placed:)``), the captured GAP and GATT services included, so a client
/// discovers what the phone discovered and a client that cached handles works. What cannot be
/// reproduced is listed in ``limitations``.
public actor ClonePeripheral {
    /// What happened while serving, for logs and the command line.
    public enum Event: Sendable, Hashable, CustomStringConvertible {
        /// A central connected (HCI connection handle, its address).
        case connected(connection: UInt16, peer: BluetoothAddress)
        /// A central wrote; `match` says how it was answered, `replies` how many values follow.
        case wrote(connection: UInt16, characteristic: BluetoothUUID, value: [UInt8], match: Match, replies: Int)
        /// A captured notification or indication was sent (timed or as a reply).
        case sent(characteristic: BluetoothUUID, value: [UInt8])

        public var description: String {
            switch self {
            case let .connected(c, peer): "connected 0x\(String(c, radix: 16)) from \(peer)"
            case let .wrote(c, characteristic, value, match, replies):
                "write 0x\(String(c, radix: 16)) \(characteristic.shortString): \(value.spacedHex) → \(match)"
                    + (replies > 0 ? ", \(replies) repl\(replies == 1 ? "y" : "ies")" : "")
            case let .sent(characteristic, value): "sent \(characteristic.shortString): \(value.spacedHex)"
            }
        }
    }

    /// How a write was matched to the captured ones.
    public enum Match: Sendable, Hashable, CustomStringConvertible {
        /// The same bytes were written in the capture.
        case exact
        /// A captured write shared this many leading bytes (the longest such).
        case leadingBytes(Int)
        /// Nothing matched: the write is accepted and logged, nothing answers it.
        case unknown

        public var description: String {
            switch self {
            case .exact: "exact match"
            case let .leadingBytes(n): "matched \(n) leading byte\(n == 1 ? "" : "s")"
            case .unknown: "unknown write (no captured match)"
            }
        }
    }

    /// The host the clone is served on.
    public nonisolated let bluetooth: Bluetooth
    /// The device served.
    public nonisolated let device: ClonedDevice
    /// The GATT services installed.
    public nonisolated let serviceDefinitions: [GATTServiceDefinition]
    /// Where they are served: the captured handles, gaps kept (what the capture did not show
    /// placed next to what it belongs to); nil when the captured handles do not hold together
    /// (a hand-edited file) and the host lays the services out (see ``limitations``).
    public nonisolated let placements: [GATTServicePlacement]?
    /// The advertising used.
    public nonisolated let advertisingData: AdvertisingData
    /// The scan response used, if any.
    public nonisolated let scanResponse: AdvertisingData?
    /// What could not be served as captured, one line each.
    public nonisolated let limitations: [String]
    /// Connections, writes and values sent, in order.
    public nonisolated let events: AsyncStream<Event>

    private let eventSink: AsyncStream<Event>.Continuation
    private let replies: AsyncStream<[CloneReply]>
    private let replySink: AsyncStream<[CloneReply]>.Continuation
    private let pace: ReplayPace
    private let sleep: @Sendable (Duration) async throws -> Void
    /// The captured value handle of each served characteristic, in definition order.
    private let originalHandles: [Int]
    /// A descriptor to serve: its captured handle, type and value (hex).
    private typealias Attribute = (handle: Int, uuid: BluetoothUUID, value: String?)
    /// Descriptor handles the device notified on (at the captured handles only).
    private let notifiedDescriptors: Set<Int>
    private var served: [Int: ServedValue] = [:]
    private var tasks: [Task<Void, Never>] = []
    /// The timed playback, started by the subscription task (which does not hold the actor).
    private let playback = ClonePlayback()
    private let table: CloneReplyTable

    /// Prepares `device` for `bluetooth`'s peripheral role. `pace` scales the captured timing
    /// (``ReplayPace/asFastAsPossible`` sends at once); `sleep` waits a duration (nil: on the
    /// clock of `bluetooth`, ``Bluetooth/Configuration/clock`` — the world's clock in a
    /// ``VirtualWorld``, so a clone in a world on a ``ManualClock`` plays in virtual time).
    public init(
        bluetooth: Bluetooth, device: ClonedDevice, pace: ReplayPace = .original,
        sleep: (@Sendable (Duration) async throws -> Void)? = nil
    ) {
        self.bluetooth = bluetooth
        self.device = device
        self.pace = pace
        let clock = bluetooth.central.clock
        self.sleep = sleep ?? { try await clock.sleep(for: $0) }
        let (eventStream, events) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(4096))
        let (replyStream, replySink) = AsyncStream.makeStream(of: [CloneReply].self, bufferingPolicy: .unbounded)
        self.events = eventStream
        eventSink = events
        replies = replyStream
        self.replySink = replySink
        var limits: [String] = []

        var latest: [Int: [UInt8]] = [:]
        for c in device.characteristics { if let v = c.value, let bytes = try? Hex.parse(v) { latest[c.valueHandle] = bytes } }
        // A renamed clone (emulate --name) answers its new name from the captured GAP service.
        if let name = device.name, let gap = device.services.first(where: { $0.uuid == .genericAccess }),
           let nameCharacteristic = gap.characteristics.first(where: { $0.uuid == .deviceName }) {
            latest[nameCharacteristic.valueHandle] = Array(name.utf8.prefix(248))
        }
        let table = CloneReplyTable(exchanges: device.exchanges, latest: latest)
        self.table = table

        // The database twice: at the captured handles (every service, the captured GAP and GATT
        // ones included), and for the host's layout should the captured handles not hold together.
        var placed: [ClonePlacement.Service] = []
        var definitions: [GATTServiceDefinition] = []
        var handles: [Int] = []
        var placedHandles: [Int] = []
        var notifiedDescriptors: Set<Int> = []
        for service in device.services {
            let hostOwn = service.uuid == .genericAccess || service.uuid == .genericAttribute
            var exact: [GATTCharacteristicDefinition] = []
            var hosted: [GATTCharacteristicDefinition] = []
            var positions: [ClonePlacement.Characteristic] = []
            // A handle the device notified on that discovery showed as a descriptor (no room for
            // a declaration before it): served as that descriptor, notified to every central.
            var members: [(c: CloneCharacteristic, notified: [Attribute])] = []
            for c in service.characteristics {
                if c.declarationHandle == nil, let last = members.last,
                   c.valueHandle - 1 == ([last.c.valueHandle] + last.c.descriptors.map(\.handle) + last.notified.map(\.handle)).max() {
                    members[members.count - 1].notified.append((c.valueHandle, c.uuid, c.value))
                    notifiedDescriptors.insert(c.valueHandle)
                    limits.append("0x\(String(c.valueHandle, radix: 16)) \(c.uuid.shortString): the device notified on it, but discovery showed it as a descriptor of \(last.c.uuid.shortString): served as that descriptor, its notifications sent to every connected central (the device sent them without a subscription)")
                    continue
                }
                members.append((c, []))
            }
            for (c, notified) in members {
                var properties = GATTCharacteristicProperties()
                for name in c.properties {
                    switch name {
                    case "broadcast": properties.insert(.broadcast)
                    case "read": properties.insert(.read)
                    case "write-without-response": properties.insert(.writeWithoutResponse)
                    case "write": properties.insert(.write)
                    case "notify": properties.insert(.notify)
                    case "indicate": properties.insert(.indicate)
                    case "signed-write":
                        properties.insert(.writeWithoutResponse)
                        limits.append("\(c.uuid.shortString): signed writes are served as writes without response")
                    case "extended-properties": break
                    default:
                        limits.append("\(c.uuid.shortString): property \(name) is not served")
                    }
                }
                let handle = c.valueHandle
                let uuid = c.uuid
                let kept = (c.descriptors.filter { $0.uuid != .clientCharacteristicConfiguration }.map { ($0.handle, $0.uuid, $0.value) } + notified)
                    .sorted { $0.handle < $1.handle }
                func definition(_ properties: GATTCharacteristicProperties, _ descriptors: [Attribute]) -> GATTCharacteristicDefinition {
                    GATTCharacteristicDefinition(
                        uuid: uuid, properties: properties,
                        // Readable even without the read property: a value seen notified can be read back.
                        permissions: GATTPermissions.implied(by: properties).union(.readable),
                        value: latest[handle] ?? [],
                        descriptors: descriptors.map { d in GATTDescriptorDefinition(uuid: d.uuid, value: d.value.flatMap { try? Hex.parse($0) } ?? []) },
                        onRead: { _ in .success(table.latest(handle) ?? []) },
                        validateWrite: { context in
                            let (match, answers) = table.answer(handle: handle, value: context.value)
                            events.yield(.wrote(
                                connection: context.connection, characteristic: uuid, value: context.value, match: match,
                                replies: answers.count))
                            if !answers.isEmpty { replySink.yield(answers) }
                            return nil
                        })
                }
                // At the captured handles the declaration says what the capture showed, the
                // Extended Properties descriptor included.
                exact.append(definition(c.properties.contains("extended-properties") ? properties.union(.extendedProperties) : properties, kept))
                hosted.append(definition(properties, kept.filter { $0.uuid != .characteristicExtendedProperties }))
                positions.append(ClonePlacement.Characteristic(
                    declaration: c.declarationHandle, value: handle,
                    configuration: c.descriptors.first { $0.uuid == .clientCharacteristicConfiguration }?.handle,
                    needsConfiguration: !properties.isDisjoint(with: [.notify, .indicate]), descriptors: kept.map(\.handle)))
                placedHandles.append(handle)
                if !hostOwn { handles.append(handle) }
            }
            placed.append(ClonePlacement.Service(
                definition: GATTServiceDefinition(uuid: service.uuid, isPrimary: service.primary, characteristics: exact),
                handle: service.inferred ? nil : service.startHandle, endHandle: service.inferred ? nil : service.endHandle,
                characteristics: positions))
            if !hostOwn {
                definitions.append(GATTServiceDefinition(uuid: service.uuid, isPrimary: service.primary, characteristics: hosted))
            }
        }
        var placements: [GATTServicePlacement]?
        do {
            let layout = try ClonePlacement.place(placed)
            _ = try GATTDatabase(placing: layout)
            placements = layout
        } catch {
            // The host's layout: its GAP and GATT services first, then these back to back.
            var line = "the captured handles cannot be served as they are (\(error)): the host lays out its own GAP and GATT services first, then the services back to back"
            let laidOut = AttributeLayout(definitions).handles.flatMap { $0 }.map { Int($0) }
            if let mismatch = zip(handles, laidOut).first(where: { $0.0 != $0.1 }) {
                line += " (the value at 0x\(String(mismatch.0, radix: 16)) in the capture is at 0x\(String(mismatch.1, radix: 16)))"
            }
            limits.append(line + "; UUIDs, properties and order are the same, the captured GAP and GATT services are the host's")
        }
        self.placements = placements
        self.notifiedDescriptors = placements == nil ? [] : notifiedDescriptors
        serviceDefinitions = placements.map { $0.map(\.definition) } ?? definitions
        originalHandles = placements == nil ? handles : placedHandles

        // Advertising: the captured bytes when they fit legacy advertising, else name and UUIDs.
        let serviceUUIDs = device.services.map(\.uuid).filter { $0 != .genericAccess && $0 != .genericAttribute && !$0.isClonePlaceholder }
        let capturedData = device.advertising.flatMap { try? Hex.parse($0.data) }
        let capturedResponse = device.advertising?.scanResponse.flatMap { try? Hex.parse($0) }
        if let capturedData, capturedData.count <= 31, (capturedResponse?.count ?? 0) <= 31 {
            advertisingData = AdvertisingData(lenient: capturedData)
            scanResponse = capturedResponse.map { AdvertisingData(lenient: $0) }
        } else {
            limits.append(device.advertising == nil
                ? "no advertising in the capture: advertising the name and the service UUIDs of the database"
                : "the captured advertising does not fit legacy advertising (31 bytes): advertising the name and service UUIDs instead")
            let plan = AdvertisingPlan(hints: AdvertisingHints(
                localName: device.name ?? "Bluetide Clone", serviceUUIDs: device.advertising?.serviceUUIDs ?? serviceUUIDs))
            advertisingData = plan.advertisingData
            scanResponse = plan.scanResponse
        }
        if let captured = Self.capturedAddress(device) {
            let served = bluetooth.address
            if served.value != captured.value || served.type != captured.type {
                limits.append(captured.type == .public
                    ? "the captured public address \(captured.string) is not this controller's (\(served)): only a virtual controller takes a chosen public address (emulate --from on the virtual link); the clone advertises from \(served)"
                    : "the clone advertises from \(served), not from the captured \(captured)")
            } else if captured.randomKind == .resolvablePrivate {
                limits.append("the captured address \(captured) is a resolvable private address: it is served as the same random address, unchanged; without the device's IRK the clone cannot make new ones, and a phone bonded to the device resolves it to the device but cannot encrypt without its keys")
            } else if captured.randomKind == .nonResolvablePrivate {
                limits.append("the captured address \(captured) is a non-resolvable private address: it is served as the same random address, unchanged")
            }
        } else if device.address.contains(":") {
            limits.append("the captured address \(device.address) has no known type: the clone advertises from \(bluetooth.address)")
        }
        limitations = limits
    }

    /// The captured address with its type, when the capture showed both.
    public static func capturedAddress(_ device: ClonedDevice) -> BluetoothAddress? {
        guard let kind = device.addressType, kind == "public" || kind == "random",
              let address = try? BluetoothAddress(device.address, type: kind == "public" ? .public : .random),
              address.randomKind != .reserved else { return nil }
        return address
    }

    /// The random address a host can take for `device`: the captured one when it is random —
    /// static, or private (resolvable or not), served unchanged.
    public static func servedAddress(_ device: ClonedDevice) -> BluetoothAddress? {
        guard let address = capturedAddress(device), address.type == .random else { return nil }
        return address
    }

    /// Host settings for serving `device`: its name and its captured address — a random one
    /// (static or private) as the host's own, a public one by using the controller's address
    /// when `publicAddressAvailable` (its controller was given that public address, as
    /// ``VirtualWorld/serveClone(_:pace:address:rssi:snoop:)`` does). `address` (random
    /// static) overrides; otherwise a fresh random static address.
    public static func hostConfiguration(
        for device: ClonedDevice, address: BluetoothAddress? = nil, publicAddressAvailable: Bool = false
    ) -> Bluetooth.Configuration {
        var configuration = Bluetooth.Configuration(address: address ?? servedAddress(device), deviceName: device.name ?? "Bluetide Clone")
        if address == nil, publicAddressAvailable, capturedAddress(device)?.type == .public { configuration.usesControllerAddress = true }
        configuration.keepsPrivateAddress = address == nil
        return configuration
    }

    /// Installs the services, advertises, and starts the reply sender and the timed replay
    /// (which begins at the first subscription). Serving goes on until ``stop()``, ``close()``
    /// or the host closing, whether or not the caller keeps this object.
    public func start() async throws {
        let peripheral = bluetooth.peripheral
        peripheral.maximumCentrals = 8
        let connections = peripheral.connections
        let subscriptions = peripheral.subscriptionChanges
        let values = if let placements {
            try await peripheral.serve(placed: placements).flatMap { $0 }
        } else {
            await peripheral.add(definitions: serviceDefinitions).flatMap { $0 }
        }
        for (original, value) in zip(originalHandles, values) { served[original] = value }
        for handle in notifiedDescriptors { served[handle] = ServedValue(valueHandle: UInt16(handle)) }
        let everyCentral = notifiedDescriptors
        try await peripheral.startAdvertising(advertisingData, scanResponse: scanResponse, interval: .milliseconds(100))
        let served = self.served
        let replies = self.replies
        let table = self.table
        let events = eventSink
        let device = self.device
        let factor = Self.factor(pace)
        let sleep = self.sleep
        tasks.append(Task {
            for await batch in replies {
                var elapsed = 0.0
                for reply in batch {
                    if let factor, reply.delay > elapsed {
                        try? await sleep(.seconds((reply.delay - elapsed) / factor))
                        elapsed = reply.delay
                    }
                    guard let value = served[reply.handle], let bytes = try? Hex.parse(reply.value) else { continue }
                    table.setLatest(reply.handle, bytes)
                    events.yield(.sent(characteristic: device.characteristic(valueHandle: reply.handle)?.uuid ?? .genericAccess, value: bytes))
                    if everyCentral.contains(reply.handle) { peripheral.notifyEveryCentral(bytes, at: value) } else { peripheral.updateValue(bytes, of: value) }
                }
            }
        })
        // These tasks hold what they use, not the actor: the clone serves for as long as the
        // host does (until ``stop()``), also when the caller keeps no reference to it.
        tasks.append(Task {
            for await central in connections { events.yield(.connected(connection: central.handle, peer: central.address)) }
        })
        // Timed notifications start when a central subscribes to one of their characteristics.
        let timedValues = Set(device.notifications.compactMap { served[$0.handle] })
        let playback = self.playback
        tasks.append(Task {
            for await change in subscriptions where !change.configuration.isEmpty && timedValues.contains(change.value) {
                playback.startOnce {
                    Self.play(
                        device: device, served: served, everyCentral: everyCentral, table: table, events: events, peripheral: peripheral,
                        factor: factor, sleep: sleep)
                }
            }
        })
    }

    /// Waits until every timed notification has been sent (at once if playback never began).
    public func waitUntilPlayed() async { await playback.task?.value }

    /// Stops serving and advertising; the host stays up.
    public func stop() async {
        playback.cancel()
        for task in tasks { task.cancel() }
        tasks.removeAll()
        replySink.finish()
        eventSink.finish()
        try? await bluetooth.peripheral.stopAdvertising()
    }

    /// Stops serving and closes the host.
    public func close() async {
        await stop()
        await bluetooth.close()
    }

    /// Sends the timed notifications in captured order, `factor` times the captured pace (nil:
    /// at once), from the playback origin.
    private static func play(
        device: ClonedDevice, served: [Int: ServedValue], everyCentral: Set<Int>, table: CloneReplyTable, events: AsyncStream<Event>.Continuation,
        peripheral: Peripheral, factor: Double?, sleep: @escaping @Sendable (Duration) async throws -> Void
    ) -> Task<Void, Never> {
        let origin = device.playbackOrigin ?? device.notifications.first?.t ?? 0
        return Task {
            var position = origin
            for notification in device.notifications {
                if Task.isCancelled { return }
                if let factor, notification.t > position {
                    do { try await sleep(.seconds((notification.t - position) / factor)) } catch { return }
                    position = notification.t
                }
                guard let value = served[notification.handle], let bytes = try? Hex.parse(notification.value) else { continue }
                table.setLatest(notification.handle, bytes)
                events.yield(.sent(characteristic: device.characteristic(valueHandle: notification.handle)?.uuid ?? .genericAccess, value: bytes))
                if everyCentral.contains(notification.handle) { peripheral.notifyEveryCentral(bytes, at: value) } else { peripheral.updateValue(bytes, of: value) }
            }
        }
    }

    /// Playback speed factor, nil for no waiting.
    private static func factor(_ pace: ReplayPace) -> Double? {
        switch pace {
        case .original: 1
        case let .speed(value): value.isFinite && value > 0 ? value : nil
        case .asFastAsPossible: nil
        }
    }
}

/// The clone's timed playback task, made at most once; shared by the actor (waits, stops) and
/// the subscription task that starts it (one lock, never held across an `await`).
final class ClonePlayback: Sendable {
    private let state = Mutex<(task: Task<Void, Never>?, cancelled: Bool)>((nil, false))

    /// The playback, nil until it began.
    var task: Task<Void, Never>? { state.withLock { $0.task } }

    /// Starts the playback with `make` unless it already began or was cancelled.
    func startOnce(_ make: () -> Task<Void, Never>) {
        state.withLock { s in
            guard s.task == nil, !s.cancelled else { return }
            s.task = make()
        }
    }

    /// Cancels the playback and keeps it from starting later.
    func cancel() {
        state.withLock { s in
            s.cancelled = true
            s.task?.cancel()
        }
    }
}

/// The learned command→reply table and the latest value of each characteristic, shared by the
/// server's synchronous read and write handlers and the clone's tasks (one lock, held for one
/// lookup or update, never across an `await`).
final class CloneReplyTable: Sendable {
    private struct State {
        var latest: [Int: [UInt8]] = [:]
        /// How many times each exchange was used, so a repeated command takes its replies in turn.
        var uses: [Int: Int] = [:]
    }
    private let exchanges: [CloneExchange]
    private let written: [[UInt8]]
    private let state: Mutex<State>

    init(exchanges: [CloneExchange], latest: [Int: [UInt8]]) {
        self.exchanges = exchanges
        written = exchanges.map { (try? Hex.parse($0.value)) ?? [] }
        state = Mutex(State(latest: latest))
    }

    /// The captured replies answering `value` written to `handle`, and how it matched: exact
    /// bytes first, else the most leading bytes in common (at least one).
    func answer(handle: Int, value: [UInt8]) -> (ClonePeripheral.Match, [CloneReply]) {
        var exact: [Int] = []
        var best: (length: Int, indices: [Int]) = (0, [])
        for index in exchanges.indices where exchanges[index].handle == handle {
            let captured = written[index]
            if captured == value {
                exact.append(index)
                continue
            }
            let common = zip(captured, value).prefix { $0 == $1 }.count
            if common > best.length { best = (common, [index]) } else if common == best.length, common > 0 { best.indices.append(index) }
        }
        let match: ClonePeripheral.Match
        let pool: [Int]
        if !exact.isEmpty { (match, pool) = (.exact, exact) } else if best.length > 0 { (match, pool) = (.leadingBytes(best.length), best.indices) } else { return (.unknown, []) }
        let key = pool[0]
        let turn = state.withLock { s in
            let n = s.uses[key, default: 0]
            s.uses[key] = n + 1
            return n
        }
        return (match, exchanges[pool[turn % pool.count]].replies)
    }

    func latest(_ handle: Int) -> [UInt8]? { state.withLock { $0.latest[handle] } }
    func setLatest(_ handle: Int, _ value: [UInt8]) { state.withLock { $0.latest[handle] = value } }
}

extension BluetoothUUID {
    /// Whether this is a placeholder `bluetide clone` gave a characteristic or service known by its handle only.
    var isClonePlaceholder: Bool { high == 0xB1DE_0000_0000_4000 }
}
