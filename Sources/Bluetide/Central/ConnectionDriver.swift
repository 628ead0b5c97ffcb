import BluetideBase
import BluetideHCI
import BluetideHost
import BluetideSupport

/// Runs one ``Connection``: carries out what its ``ConnectionMachine`` decides (makes links,
/// waits on the central's clock, sets links up, restores subscriptions, tells the user) and
/// owns the connection's state — the current link, the discovered services, subscriptions and
/// the order of operations. One owner of that state (principle 2): operations take their turn
/// here (an ``AsyncLock`` waited on from this actor: no hop) rather than on a lock actor of
/// their own.
actor ConnectionDriver {
    /// One characteristic's subscription: the user's sequences and the pump that feeds them from
    /// the current link's GATT client.
    private struct Subscription {
        let streams: NotificationFanout
        var pump: Task<Void, Never>?
    }

    /// How a run of the machine ended the connect call.
    private enum Outcome {
        case connected
        case failed(BluetideError)
    }

    private let central: Central
    private let address: BluetoothAddress
    private let policy: ConnectionPolicy
    private let slot: Int
    private let hub: EventHub
    /// Values the user's full notification sequences gave up (``Connection/droppedNotifications``).
    nonisolated let drops: NotificationDrops
    private let operations = AsyncLock()
    /// The decisions: connect, retry, time limits, reconnect with back-off, give up.
    private var machine: ConnectionMachine
    /// The current link, set up; nil while connecting or reconnecting and once closed.
    private var link: (any CentralLink)?
    /// The link an attempt just made, while it is set up.
    private var newLink: (any CentralLink)?
    /// Why the connection closed (nil: closed by the user, or still open).
    private var closeError: BluetideError?
    private var closed = false
    private var services: [GATTRemoteService] = []
    private var mtuExchanged = false
    private var requestedMTU: Int?
    private var subscriptions: [BluetoothUUID: Subscription] = [:]
    private var nextStreamID = 0
    private var linkWaiters: [CheckedContinuation<any CentralLink, any Error>] = []

    init(central: Central, address: BluetoothAddress, policy: ConnectionPolicy, slot: Int, hub: EventHub) {
        self.central = central
        self.address = address
        self.policy = policy
        self.slot = slot
        self.hub = hub
        self.drops = NotificationDrops()
        self.requestedMTU = policy.preferredMTU
        self.machine = ConnectionMachine(address: address, policy: policy, attemptTimeout: central.defaultConnectTimeout)
    }

    // MARK: Life cycle

    /// Makes and sets up the first link: `policy.retry.attempts` attempts of at most
    /// `attemptTimeout` each, the whole within `total` when given. Returns once connected.
    func connect(attemptTimeout: Duration, within total: Duration?) async throws {
        machine = ConnectionMachine(address: address, policy: policy, attemptTimeout: attemptTimeout, within: total)
        switch try await run(.connect) {
        case .connected: return
        case let .failed(error): throw error
        case nil: throw closeError ?? BluetideError.disconnected(reason: .localHostTerminated)
        }
    }

    /// Feeds `first` to the machine and carries out its actions, feeding each outcome back,
    /// until it asks for nothing more. Returns how the connect call ends when this run decided
    /// it. Throws `CancellationError` when the connect call is cancelled (the connection is then
    /// closed).
    @discardableResult
    private func run(_ first: ConnectionMachine.Input) async throws -> Outcome? {
        let clock = central.clock
        var next: ConnectionMachine.Input? = first
        var outcome: Outcome?
        while let input = next {
            next = nil
            for action in machine.handle(input, now: clock.now) {
                switch action {
                case let .emit(event):
                    hub.emit(event)
                case .connected:
                    outcome = .connected
                case let .failConnect(error):
                    outcome = .failed(error)
                case let .close(error):
                    await close(error)
                case .dropLink:
                    if let made = newLink {
                        newLink = nil
                        _ = try? await made.disconnect()
                    }
                case let .attempt(timeout):
                    do {
                        newLink = try await central.establishLink(to: address, timeout: timeout)
                        next = .linkUp
                    } catch {
                        try await stopIfCancelled()
                        next = .attemptFailed(BluetideError.from(error))
                    }
                case let .wait(until):
                    do { try await clock.sleep(until: until) } catch { try await stopIfCancelled() }
                    next = .waitOver
                case let .setUp(limit):
                    guard let made = newLink else { break }
                    let first = machine.phase == .settingUp
                    do {
                        try await attach(made, within: limit)
                        newLink = nil
                        next = .setUpDone
                    } catch {
                        try await stopIfCancelled()
                        next = .setUpFailed(first ? BluetideError.from(error, operation: "connection set-up") : BluetideError.from(error))
                    }
                }
            }
        }
        return outcome
    }

    /// When the connect call was cancelled: closes and throws `CancellationError`.
    private func stopIfCancelled() async throws {
        guard Task.isCancelled else { return }
        for action in machine.handle(.disconnectRequested, now: central.clock.now) {
            if case let .close(error) = action { await close(error) }
        }
        if let made = newLink {
            newLink = nil
            _ = try? await made.disconnect()
        }
        throw CancellationError()
    }

    /// Prepares `link` (MTU exchange, discovery, subscriptions restored) and makes it current,
    /// each step within `limit`.
    private func attach(_ link: any CentralLink, within limit: Duration) async throws {
        let clock = central.clock
        let mtu = requestedMTU
        let discovered = try await withTimeLimit(limit, clock: clock, onTimeout: { BluetideError.timedOut(operation: "MTU exchange and service discovery", seconds: limit.seconds) }) {
            if let mtu { _ = try? await link.exchangeMTU(mtu) }
            return try await link.discoverDatabase()
        }
        mtuExchanged = mtu != nil
        services = discovered
        // Old pumps end with the old link's streams; wait so no late value overtakes new ones.
        for (_, subscription) in subscriptions { await subscription.pump?.value }
        for uuid in subscriptions.keys.sorted(by: { $0.description < $1.description }) {
            subscriptions[uuid]?.pump = nil
            do {
                let values = try await withTimeLimit(limit, clock: clock, onTimeout: { BluetideError.timedOut(operation: "subscribe to \(uuid)", seconds: limit.seconds) }) {
                    try await self.hostSubscribe(uuid, on: link)
                }
                if let streams = subscriptions[uuid]?.streams { subscriptions[uuid]?.pump = pump(values, into: streams) }
            } catch {
                // The characteristic is gone or refuses: its sequences end with the reason.
                let failure = BluetideError.from(error, characteristic: uuid, operation: "subscribe")
                subscriptions.removeValue(forKey: uuid)?.streams.finish(throwing: failure)
            }
        }
        if machine.isClosed {
            _ = try? await link.disconnect()
            throw BluetideError.disconnected(reason: .localHostTerminated)
        }
        self.link = link
        for waiter in linkWaiters { waiter.resume(returning: link) }
        linkWaiters.removeAll()
        Task { [weak self] in
            let reason = await link.waitForDisconnection()
            await self?.linkDown(link, reason: reason)
        }
    }

    /// The link ended: the machine closes, or reconnects when the policy says so (this task
    /// runs the reconnection).
    private func linkDown(_ lost: any CentralLink, reason: DisconnectReason) async {
        guard let current = link, current === lost else { return }
        link = nil
        _ = try? await run(.linkLost(reason, jitterSeed: central.nextJitterSeed()))
    }

    /// Closes for good: sequences end (cleanly when `error` is nil), waiters fail, the slot is
    /// freed.
    private func close(_ error: BluetideError?) async {
        guard !closed else { return }
        closed = true
        closeError = error
        link = nil
        // The slot is free before anyone hears of the close.
        await central.registry.release(slot)
        for (_, subscription) in subscriptions {
            subscription.pump?.cancel()
            subscription.streams.finish(throwing: error)
        }
        subscriptions = [:]
        let failure = error ?? .disconnected(reason: .localHostTerminated)
        for waiter in linkWaiters { waiter.resume(throwing: failure) }
        linkWaiters.removeAll()
        hub.finish()
    }

    func disconnect() async {
        _ = try? await run(.disconnectRequested)
        guard let current = link, machine.isConnected else { return }
        let reason = (try? await current.disconnect()) ?? .localHostTerminated
        // Unless the link's loss was handled meanwhile (it then closed).
        guard link === current else { return }
        link = nil
        _ = try? await run(.disconnectDone(reason))
    }

    var isConnected: Bool { link != nil }

    // MARK: Operations

    /// The current link, waiting while reconnecting. With `replacing`, a link that was seen to
    /// fail is not handed out again: the call waits for the next one (or the close).
    private func currentLink(replacing failed: (any CentralLink)? = nil) async throws -> any CentralLink {
        if let link, link !== failed { return link }
        if closed { throw closeError ?? BluetideError.disconnected(reason: .localHostTerminated) }
        return try await withCheckedThrowingContinuation { linkWaiters.append($0) }
    }

    /// Runs `body` with the current link, after the operations called before it, within the
    /// policy's time limit. When the link is lost under it and the policy reconnects, it runs
    /// again on the new link (so a write interrupted by a link loss is delivered at least once).
    @discardableResult
    private func perform<T: Sendable>(
        _ operation: String, _ characteristic: BluetoothUUID? = nil,
        _ body: @escaping @Sendable (any CentralLink) async throws -> T
    ) async throws -> T {
        await operations.acquireUncancellable()
        let what = characteristic.map { "\(operation) of \($0)" } ?? operation
        do {
            let limit = policy.operationTimeout
            let retries = policy.reconnect.isEnabled
            let value = try await withTimeLimit(limit, clock: central.clock, onTimeout: { BluetideError.timedOut(operation: what, seconds: limit.seconds) }) {
                var failed: (any CentralLink)?
                while true {
                    let link = try await self.currentLink(replacing: failed)
                    // Timed out while waiting for the link: do not act late.
                    try Task.checkCancellation()
                    do {
                        return try await self.runPairingWhenRequired(body, on: link)
                    } catch {
                        guard retries, !(error is BluetideError), await !link.isOpen() else { throw error }
                        failed = link
                    }
                }
            }
            operations.release()
            return value
        } catch {
            operations.release()
            throw BluetideError.from(error, characteristic: characteristic, operation: operation)
        }
    }

    // MARK: Security

    /// Runs `body`; when the device refuses it for want of security (ATT 0x05, 0x0C, 0x0F) and
    /// the central's policy allows, secures the link (encrypting with the bond, or pairing) and
    /// runs it once more.
    private func runPairingWhenRequired<T: Sendable>(
        _ body: @escaping @Sendable (any CentralLink) async throws -> T, on link: any CentralLink
    ) async throws -> T {
        do {
            return try await body(link)
        } catch let GATTClientError.att(code, handle, request)
            where central.pairsWhenRequired && link.pairsOnSecurityErrors && Self.securityCodes.contains(code) {
            let current = await link.securityLevel()
            // Encrypted but not enough (0x05 on an encrypted link): pair again for MITM keys —
            // unless this host cannot authenticate (NoInputNoOutput): another Just Works pairing
            // would only replace good keys (BlueZ refuses it with 0x0C), so the device's answer stands.
            let encrypted = current >= .encrypted
            if encrypted && code == .insufficientAuthentication && !central.canAuthenticate {
                throw GATTClientError.att(code, handle: handle, request: request)
            }
            _ = try await secure(link, force: encrypted)
            return try await body(link)
        }
    }

    /// The ATT errors that mean "secure the link first".
    private static let securityCodes: Set<ATTErrorCode> = [.insufficientEncryption, .insufficientAuthentication, .insufficientEncryptionKeySize]

    /// Secures `link` through the host, translating a pairing failure into the API's words.
    private func secure(_ link: any CentralLink, force: Bool) async throws -> SecurityLevel {
        do {
            return try await link.pair(force: force)
        } catch let error as SMPPairingError {
            throw BluetideError.pairingFailed(error)
        }
    }

    func pair(force: Bool) async throws -> SecurityLevel {
        // Not in turn with the operations: one of them may be waiting for this very pairing.
        let link = try await currentLink()
        return try await secure(link, force: force)
    }

    var securityLevel: SecurityLevel {
        get async {
            guard let link else { return .none }
            return await link.securityLevel()
        }
    }

    /// The discovered characteristic with `uuid`, or a clear error listing the services.
    private func characteristic(_ uuid: BluetoothUUID) throws -> GATTCharacteristic {
        for service in services {
            if let found = service.characteristics.first(where: { $0.characteristic.uuid == uuid }) { return found.characteristic }
        }
        throw BluetideError.characteristicNotFound(uuid, services: services.map(\.service.uuid))
    }

    func discoveredServices() async throws -> [GATTRemoteService] {
        _ = try await currentLink()
        return services
    }

    func read(_ uuid: BluetoothUUID) async throws -> [UInt8] {
        try await perform("read", uuid) { link in
            let found = try await self.characteristic(uuid)
            return try await link.read(found)
        }
    }

    func readDescriptor(_ uuid: BluetoothUUID, of characteristicUUID: BluetoothUUID) async throws -> [UInt8] {
        try await perform("read of descriptor \(uuid)", characteristicUUID) { link in
            let found = try await self.descriptor(uuid, of: characteristicUUID)
            return try await link.read(found, of: try await self.characteristic(characteristicUUID))
        }
    }

    /// The descriptor `uuid` of the discovered characteristic `characteristicUUID`.
    private func descriptor(_ uuid: BluetoothUUID, of characteristicUUID: BluetoothUUID) throws -> GATTDescriptor {
        _ = try characteristic(characteristicUUID)
        for service in services {
            for remote in service.characteristics where remote.characteristic.uuid == characteristicUUID {
                if let found = remote.descriptors.first(where: { $0.uuid == uuid }) { return found }
                throw BluetideError.descriptorNotFound(uuid, characteristic: characteristicUUID, descriptors: remote.descriptors.map(\.uuid))
            }
        }
        throw BluetideError.characteristicNotFound(characteristicUUID, services: services.map(\.service.uuid))
    }

    func write(_ bytes: [UInt8], to uuid: BluetoothUUID, withResponse: Bool) async throws {
        try await perform(withResponse ? "write" : "write without response", uuid) { link in
            let found = try await self.characteristic(uuid)
            if withResponse {
                try await link.write(bytes, to: found, withResponse: true)
            } else {
                // An attribute value holds at most 512 octets; a longer Write Command would be
                // dropped by the server without a word, so refuse it here.
                let maximum = min(await link.mtu() - 3, 512)
                guard bytes.count <= maximum else {
                    throw BluetideError.valueTooLong(uuid, length: bytes.count, maximum: maximum)
                }
                try await link.write(bytes, to: found, withResponse: false)
            }
        }
    }

    func send(_ bytes: [UInt8], to uuid: BluetoothUUID) async throws {
        var position = 0
        repeat {
            let start = position
            position = try await perform("send", uuid) { link in
                let found = try await self.characteristic(uuid)
                // MTU − 3 octets per Write Command, and never more than an attribute value
                // may hold (512 octets), which servers refuse silently.
                let chunk = min(max(await link.mtu() - 3, 1), 512)
                let end = min(start + chunk, bytes.count)
                try await link.write(Array(bytes[start..<end]), to: found, withResponse: false)
                return end
            }
        } while position < bytes.count
    }

    func requestMTU(_ mtu: Int) async throws -> Int {
        guard (23...517).contains(mtu) else { throw BluetideError.invalidArgument("MTU \(mtu) out of range 23…517") }
        if mtuExchanged { throw BluetideError.mtuAlreadyExchanged(current: await self.mtu) }
        let result = try await perform("MTU exchange") { link in
            try await link.exchangeMTU(mtu)
        }
        mtuExchanged = true
        requestedMTU = mtu
        return result
    }

    var mtu: Int {
        get async {
            guard let link else { return 23 }
            return await link.mtu()
        }
    }

    func rssi() async throws -> Int {
        try await perform("RSSI read") { link in Int(try await link.rssi()) }
    }

    func parameters() async -> ConnectionParameters? {
        guard let link else { return nil }
        return await link.parameters()
    }

    func requestParameters(_ parameters: LEConnectionParameters) async throws {
        try await perform("connection parameter update") { link in
            try await link.requestParameters(
                intervalMin: parameters.intervalMin, intervalMax: parameters.intervalMax, latency: parameters.maxLatency,
                supervisionTimeout: parameters.supervisionTimeout)
        }
    }

    // MARK: Subscriptions

    func subscribe(_ uuid: BluetoothUUID, buffering: NotificationBuffering) async throws -> AsyncThrowingStream<[UInt8], any Error> {
        let (stream, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream(bufferingPolicy: buffering.policy(of: [UInt8].self))
        let id = nextStreamID
        nextStreamID += 1
        try await perform("subscribe", uuid) { link in
            try await self.addStream(continuation, id: id, for: uuid, on: link)
        }
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeStream(id, of: uuid) }
        }
        return stream
    }

    private func addStream(
        _ continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation, id: Int, for uuid: BluetoothUUID,
        on link: any CentralLink
    ) async throws {
        if subscriptions[uuid] != nil {
            subscriptions[uuid]?.streams.add(continuation, id: id)
            return
        }
        let values = try await hostSubscribe(uuid, on: link)
        var subscription = Subscription(streams: NotificationFanout(drops: drops))
        subscription.streams.add(continuation, id: id)
        subscription.pump = pump(values, into: subscription.streams)
        subscriptions[uuid] = subscription
    }

    /// Subscribes on `link`'s GATT client (one subscription per characteristic and link).
    private func hostSubscribe(_ uuid: BluetoothUUID, on link: any CentralLink) async throws -> AsyncStream<[UInt8]> {
        let found = try characteristic(uuid)
        guard !found.properties.isDisjoint(with: [.notify, .indicate]) else { throw BluetideError.notSubscribable(uuid) }
        return try await link.subscribe(to: found)
    }

    /// Forwards one link's values of `uuid` to the user's sequences, in order, straight from
    /// the link's stream (no hop through this actor per value).
    private func pump(_ values: AsyncStream<[UInt8]>, into streams: NotificationFanout) -> Task<Void, Never> {
        Task {
            for await value in values { streams.yield(value) }
        }
    }

    private func removeStream(_ id: Int, of uuid: BluetoothUUID) async {
        guard subscriptions[uuid]?.streams.remove(id) == true else { return }
        let subscription = subscriptions.removeValue(forKey: uuid)
        subscription?.pump?.cancel()
        guard link != nil else { return }
        // In turn with other operations, so a new subscription made meanwhile is not undone.
        _ = try? await perform("unsubscribe", uuid) { link in
            guard await self.subscriptions[uuid] == nil else { return }
            try await link.unsubscribe(from: try await self.characteristic(uuid))
        }
    }
}
