import Bluetide
import Synchronization

/// How a ``SerialServer`` presents itself.
public struct SerialServerOptions: Sendable, Equatable {
    /// The advertised name (also the GAP device name when the host is opened with it).
    public var name: String
    /// The service served: ``SerialProfile/nordicUART`` (RX written by centrals, TX notified) or
    /// ``SerialProfile/hm10`` (FFE1 both ways, 20-byte notifications), or a custom one.
    public var profile: SerialProfile
    /// Most centrals connected at once; an HM-10 module takes one.
    public var maximumCentrals: Int
    /// Most received bytes held for the reader of ``SerialServer/received`` (at least 1024);
    /// writes arriving while it is full are dropped and counted (a peripheral cannot pause a
    /// central's Write Commands).
    public var receiveBufferLimit: Int

    /// Options; `maximumCentrals` defaults to 1 for HM-10 (as the module) and 4 otherwise.
    public init(name: String, profile: SerialProfile = .nordicUART, maximumCentrals: Int? = nil, receiveBufferLimit: Int = 65_536) {
        self.name = name
        self.profile = profile
        self.maximumCentrals = max(maximumCentrals ?? (profile.kind == .hm10 ? 1 : 4), 1)
        self.receiveBufferLimit = max(receiveBufferLimit, 1024)
    }
}

/// Bytes one central wrote to the server, in the order they came.
public struct SerialServerChunk: Sendable, Equatable {
    /// The central that wrote them; nil in the rare case its link was gone before the server
    /// learnt its address.
    public var central: BluetoothAddress?
    /// The bytes.
    public var bytes: [UInt8]
}

/// What happens to a ``SerialServer``, in order.
public enum SerialServerEvent: Sendable, Equatable, CustomStringConvertible {
    /// Advertising `name` with the profile's service.
    case advertising(name: String, profile: SerialProfile)
    /// A central connected (it receives data once it subscribes).
    case connected(central: BluetoothAddress)
    /// A central turned notifications on: data sent from now on reaches it, `chunkSize` bytes a
    /// notification (ATT MTU − 3, 20 for HM-10).
    case subscribed(central: BluetoothAddress, chunkSize: Int)
    /// A central turned notifications off.
    case unsubscribed(central: BluetoothAddress)
    /// A central's link ended; `reason` in words.
    case disconnected(central: BluetoothAddress, reason: String)
    /// A central beyond ``SerialServerOptions/maximumCentrals`` was disconnected.
    case refused(central: BluetoothAddress, maximum: Int)
    /// The server was closed.
    case closed

    /// A short name for JSON: advertising, connected, subscribed, unsubscribed, disconnected, refused, closed.
    public var name: String {
        switch self {
        case .advertising: "advertising"
        case .connected: "connected"
        case .subscribed: "subscribed"
        case .unsubscribed: "unsubscribed"
        case .disconnected: "disconnected"
        case .refused: "refused"
        case .closed: "closed"
        }
    }

    /// The event in words.
    public var description: String {
        switch self {
        case let .advertising(name, profile): "advertising as \(name): \(profile)"
        case let .connected(central): "central \(central) connected"
        case let .subscribed(central, chunk): "central \(central) subscribed, \(chunk)-byte notifications"
        case let .unsubscribed(central): "central \(central) unsubscribed"
        case let .disconnected(central, reason): "central \(central) left: \(reason)"
        case let .refused(central, maximum): "central \(central) refused: \(maximum) connected already (the most)"
        case .closed: "closed"
        }
    }
}

/// The computer as a BLE serial device (a Nordic UART or HM-10 peripheral), on a host's public
/// ``Peripheral``: centrals (a phone app, a microcontroller, `bluetide uart`) connect, write
/// bytes that come out of ``received``, and subscribe to get what ``send(_:)`` is given.
///
/// - **Sending**: ``send(_:)`` queues bytes; one writer notifies them in order, in chunks of the
///   smallest ATT MTU − 3 among the subscribed centrals (20 for HM-10), to every subscribed
///   central, each chunk after every such link has room in the controller's buffers
///   (``ConnectedCentral/waitForRoom()``), so nothing is dropped or reordered and memory stays
///   bounded. `send` waits while more than 4 KB are queued, and nothing goes out while no central
///   is subscribed: a bridge stops reading its input until one is (back-pressure).
/// - **Receiving**: writes from every central come out of ``received`` in the order they arrived,
///   each with its central. They wait for the reader in a bounded buffer
///   (``SerialServerOptions/receiveBufferLimit``); what arrives while it is full is dropped and
///   counted in ``droppedBytes`` (a peripheral cannot hold a central's writes back).
/// - **Status**: ``events`` reports advertising, centrals connecting, subscribing and leaving.
public actor SerialServer {
    /// The options the server runs with.
    public nonisolated let options: SerialServerOptions
    /// Bytes written by centrals, in order, with who wrote them; ends when the server closes.
    /// Iterate once, and keep reading.
    public nonisolated let received: AsyncStream<SerialServerChunk>
    /// Server events, in order; ends when the server closes. Iterate once.
    public nonisolated let events: AsyncStream<SerialServerEvent>
    /// Received bytes dropped because the reader of ``received`` left the buffer full.
    public nonisolated var droppedBytes: Int { buffer.dropped }

    private let peripheral: Peripheral
    private let buffer: ReceiveBuffer
    private let origins: OriginLog
    private let eventSink: AsyncStream<SerialServerEvent>.Continuation
    private var transmit: ServedValue?
    private var centrals: [UInt16: Member] = [:]
    private var tasks: [Task<Void, Never>] = []
    private var writer: Task<Void, Never>?
    private var queue: [UInt8] = []
    private var head = 0
    private var sentBytes = 0
    private var isClosed = false
    private var writerWake: CheckedContinuation<Void, Never>?
    private var roomWaiters: [CheckedContinuation<Void, any Error>] = []
    private var drainWaiters: [CheckedContinuation<Void, any Error>] = []
    private var subscriberWaiters: [CheckedContinuation<Void, any Error>] = []

    /// Bytes queued before ``send(_:)`` waits.
    static let highWaterMark = 4096

    /// One connected central.
    private struct Member {
        let central: ConnectedCentral
        var subscribed = false
        var mtu = 23
    }

    /// Who wrote each chunk held in the receive buffer, oldest first (chunks leave it whole and
    /// in order, so the two queues stay in step).
    private final class OriginLog: Sendable {
        struct State {
            var handles: [UInt16] = []
            var head = 0
            /// Addresses of the connection handles seen (kept after a link ends, for its last writes).
            var addresses: [UInt16: BluetoothAddress] = [:]
        }
        let state = Mutex(State())
        func withLock<T>(_ body: (inout State) -> T) -> T { state.withLock { body(&$0) } }
    }

    private init(peripheral: Peripheral, options: SerialServerOptions) {
        let peripheral = peripheral
        self.peripheral = peripheral
        self.options = options
        let buffer = ReceiveBuffer(limit: options.receiveBufferLimit)
        self.buffer = buffer
        let origins = OriginLog()
        self.origins = origins
        received = AsyncStream(unfolding: {
            guard let bytes = await buffer.next() else { return nil }
            let handle = origins.withLock { o -> UInt16 in
                let handle = o.handles[o.head]
                o.head += 1
                if o.head == o.handles.count || o.head >= 1024 {
                    o.handles.removeFirst(o.head)
                    o.head = 0
                }
                return handle
            }
            let central = origins.withLock { $0.addresses[handle] }
                ?? peripheral.connectedCentrals.first { $0.handle == handle }?.address
            return SerialServerChunk(central: central, bytes: bytes)
        })
        (events, eventSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1024))
    }

    /// Serves the profile's service on `peripheral` (which should serve nothing else: it owns
    /// the host's advertising) and starts advertising `options.name` with the service UUID.
    public static func start(on peripheral: Peripheral, options: SerialServerOptions) async throws -> SerialServer {
        let server = SerialServer(peripheral: peripheral, options: options)
        try await server.begin()
        return server
    }

    private func begin() async throws {
        let profile = options.profile
        peripheral.maximumCentrals = options.maximumCentrals
        let connections = peripheral.connections
        let subscriptions = peripheral.subscriptionChanges
        let buffer = buffer
        let origins = origins
        // Writes arrive on the host's executor, one at a time, in order.
        let accept: @Sendable (GATTWriteContext) -> ATTErrorCode? = { context in
            guard !context.value.isEmpty else { return nil }
            origins.withLock { o in
                o.handles.append(context.connection)
                if !buffer.push(context.value) { o.handles.removeLast() }
            }
            return nil
        }
        let characteristics: [GATTCharacteristicDefinition]
        if profile.write == profile.notify {
            characteristics = [GATTCharacteristicDefinition(
                uuid: profile.write, properties: [.read, .writeWithoutResponse, .write, .notify], validateWrite: accept)]
        } else {
            characteristics = [
                GATTCharacteristicDefinition(uuid: profile.write, properties: [.write, .writeWithoutResponse], validateWrite: accept),
                GATTCharacteristicDefinition(uuid: profile.notify, properties: [.notify]),
            ]
        }
        let values = await peripheral.add(definitions: [GATTServiceDefinition(uuid: profile.service, characteristics: characteristics)])
        guard let served = values.first, let tx = profile.write == profile.notify ? served.first : served.last else {
            throw SerialServerError.cannotServe("the peripheral did not take the service")
        }
        transmit = tx
        tasks.append(Task { for await central in connections { await self.connected(central) } })
        tasks.append(Task {
            for await change in subscriptions where change.value == tx {
                await self.subscriptionChanged(change.central, on: change.configuration.contains(.notification) || change.configuration.contains(.indication))
            }
        })
        writer = Task { await self.runWriter() }
        do {
            try await peripheral.startAdvertising(name: options.name, serviceUUIDs: [profile.service])
        } catch {
            await close()
            throw SerialServerError.cannotServe("cannot advertise \(options.name): \(error)")
        }
        eventSink.yield(.advertising(name: options.name, profile: profile))
    }

    private func connected(_ central: ConnectedCentral) async {
        guard !isClosed else { return }
        if centrals.count >= options.maximumCentrals {
            eventSink.yield(.refused(central: central.address, maximum: options.maximumCentrals))
            try? await central.disconnect()
            return
        }
        centrals[central.handle] = Member(central: central)
        origins.withLock { $0.addresses[central.handle] = central.address }
        eventSink.yield(.connected(central: central.address))
        tasks.append(Task {
            let reason = await central.waitForDisconnection()
            await self.disconnected(central, reason: "\(reason)")
        })
    }

    private func disconnected(_ central: ConnectedCentral, reason: String) {
        guard centrals.removeValue(forKey: central.handle) != nil, !isClosed else { return }
        eventSink.yield(.disconnected(central: central.address, reason: reason))
    }

    private func subscriptionChanged(_ central: ConnectedCentral, on: Bool) async {
        guard !isClosed, centrals[central.handle] != nil else { return }
        let mtu = await central.mtu()
        guard var member = centrals[central.handle] else { return }
        guard member.subscribed != on else { return }
        member.subscribed = on
        member.mtu = mtu
        centrals[central.handle] = member
        if on {
            eventSink.yield(.subscribed(central: central.address, chunkSize: options.profile.chunkSize(mtu: mtu)))
            for waiter in subscriberWaiters { waiter.resume() }
            subscriberWaiters = []
            wakeWriter()
        } else {
            eventSink.yield(.unsubscribed(central: central.address))
        }
    }

    // MARK: Sending

    /// Centrals subscribed now.
    public var subscribers: [BluetoothAddress] { centrals.values.filter(\.subscribed).map(\.central.address) }
    /// Centrals connected now.
    public var connectedCentrals: [BluetoothAddress] { centrals.values.map(\.central.address) }
    /// Bytes waiting to be notified.
    public var queuedBytes: Int { queue.count - head }
    /// Bytes notified since the server started.
    public var notifiedBytes: Int { sentBytes }

    /// Queues `bytes` for every subscribed central, in order after everything sent before;
    /// waits while more than 4 KB are queued. Throws ``SerialServerError/closed`` once closed.
    public func send(_ bytes: [UInt8]) async throws {
        if isClosed { throw SerialServerError.closed }
        guard !bytes.isEmpty else { return }
        queue.append(contentsOf: bytes)
        wakeWriter()
        while !isClosed, queuedBytes > Self.highWaterMark {
            try await withCheckedThrowingContinuation { roomWaiters.append($0) }
        }
        if isClosed { throw SerialServerError.closed }
    }

    /// Waits until every queued byte has been notified; throws once the server is closed.
    public func drain() async throws {
        while queuedBytes > 0 {
            if isClosed { throw SerialServerError.closed }
            try await withCheckedThrowingContinuation { drainWaiters.append($0) }
        }
    }

    /// Waits until at least one central is subscribed; throws once the server is closed.
    public func waitForSubscriber() async throws {
        while !centrals.values.contains(where: \.subscribed) {
            if isClosed { throw SerialServerError.closed }
            try await withCheckedThrowingContinuation { subscriberWaiters.append($0) }
        }
    }

    private func wakeWriter() {
        writerWake?.resume()
        writerWake = nil
    }

    private func runWriter() async {
        while true {
            while !isClosed, queuedBytes == 0 || !centrals.values.contains(where: \.subscribed) {
                await withCheckedContinuation { writerWake = $0 }
            }
            guard !isClosed, let transmit else { return }
            let members = centrals.values.filter(\.subscribed)
            var mtu = Int.max
            for member in members { mtu = min(mtu, await member.central.mtu()) }
            for member in members { try? await member.central.waitForRoom() }
            guard !isClosed else { return }
            let size = options.profile.chunkSize(mtu: mtu == .max ? 23 : mtu)
            let end = min(head + size, queue.count)
            guard end > head else { continue }
            let chunk = Array(queue[head..<end])
            await peripheral.notify(chunk, of: transmit)
            head = end
            sentBytes += chunk.count
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
                for waiter in drainWaiters { waiter.resume() }
                drainWaiters = []
            } else if head > 65_536 {
                queue.removeFirst(head)
                head = 0
            }
            if queuedBytes <= Self.highWaterMark {
                for waiter in roomWaiters { waiter.resume() }
                roomWaiters = []
            }
        }
    }

    /// Stops advertising, disconnects every central and ends ``received`` and ``events``;
    /// queued bytes are dropped. Idempotent.
    public func close() async {
        guard !isClosed else { return }
        isClosed = true
        wakeWriter()
        for waiter in roomWaiters + drainWaiters + subscriberWaiters { waiter.resume(throwing: SerialServerError.closed) }
        roomWaiters = []; drainWaiters = []; subscriberWaiters = []
        for task in tasks { task.cancel() }
        tasks = []
        try? await peripheral.stopAdvertising()
        for member in centrals.values { try? await member.central.disconnect(timeout: 2) }
        centrals = [:]
        eventSink.yield(.closed)
        eventSink.finish()
        buffer.finish()
    }
}

/// Why a ``SerialServer`` could not do what was asked.
public enum SerialServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server could not start (advertising refused, the service not taken).
    case cannotServe(String)
    /// The server is closed.
    case closed

    /// The error in words.
    public var description: String {
        switch self {
        case let .cannotServe(reason): "cannot serve: \(reason)"
        case .closed: "the UART server is closed"
        }
    }
}
