import Bluetide
import Logging

/// A serial connection to one BLE UART device (HM-10, Nordic UART, or characteristics named
/// in ``SerialLinkOptions/profile``), on the public `Bluetide` API.
///
/// - **Sending**: ``send(_:)`` queues bytes; one writer sends them in order as Write Commands of
///   ``SerialProfile/chunkSize(mtu:)`` bytes, each waiting for room in the controller's buffers
///   (the host's ACL flow control), so nothing is dropped or reordered. While the link is up,
///   `send` returns once its bytes fit under a small high-water mark (back-pressure); while it is
///   down (reconnecting), bytes wait up to ``SerialLinkOptions/outageBufferLimit`` and go out in
///   order once the link is back; beyond that `send` refuses them whole with
///   ``SerialLinkError/linkDown(device:queued:offered:limit:)``, so a caller knows at once what
///   was not sent instead of blocking for the whole outage. A chunk the controller had accepted
///   when the link dropped may be lost with the link; none is sent twice.
/// - **Receiving**: ``bytes`` yields notified bytes in order (one consumer), or ``lines(terminator:)``
///   the same as lines. Bytes the device sends while the link is down are lost (BLE has no buffer).
///   Received bytes wait for the reader in a bounded buffer (``SerialLinkOptions/receiveBufferLimit``):
///   while more than half of it waits, nothing more is written to the device (so ``send(_:)``
///   waits, and a bridge stops reading its input) until the reader has taken it down to a
///   quarter; bytes a device sends on its own into a full buffer are dropped and counted in
///   ``droppedBytes``. Memory stays bounded however slow the reader is.
/// - **Status**: ``status`` reports connected, link lost (with reason), reconnect attempts, back,
///   given up and RSSI readings.
/// - **Giving up**: a lost link that is not back within ``SerialLinkOptions/outageLimit`` (timed
///   on the link's clock) gives up by itself, even when a reconnect attempt overruns its time
///   limit: ``status`` says ``SerialStatus/gaveUp(reason:)``, the link closes and waiting senders
///   fail, so a caller always learns that the device is gone.
public actor SerialLink {
    /// The device's name (as advertised) or address.
    public nonisolated let name: String
    /// The device's address.
    public nonisolated let address: BluetoothAddress
    /// The options the link was made with.
    public nonisolated let options: SerialLinkOptions
    /// Bytes from the device, in order, as notified; ends when the link closes. Iterate once, and
    /// keep reading: a reader that stops holds the link's writes back (see the type's notes).
    public nonisolated let bytes: AsyncStream<[UInt8]>
    /// Received bytes dropped because the reader of ``bytes`` left the buffer full.
    public nonisolated var droppedBytes: Int { received.dropped }
    /// Received bytes waiting for the reader of ``bytes`` now.
    public nonisolated var unreadBytes: Int { received.heldBytes }
    /// Waits until `condition` holds for the receive counters (checked each time they change:
    /// a byte received, read, dropped or written) or the link closed, and returns them; returns
    /// at once when the waiting task is cancelled. Lets a caller follow the back-pressure
    /// (say, "the buffer passed half its limit and everything written has come back") without polling.
    public nonisolated func waitForReceiveLevel(where condition: @escaping @Sendable (ReceiveLevel) -> Bool) async -> ReceiveLevel {
        await received.waitForLevel(where: condition)
    }
    /// Status events, in order; ends when the link closes. Iterate once.
    public nonisolated let status: AsyncStream<SerialStatus>

    private let central: Central
    private let received: ReceiveBuffer
    private let statusSink: AsyncStream<SerialStatus>.Continuation
    private var connection: Connection
    /// The profile of the current link.
    public private(set) var profile: SerialProfile
    private var withResponse: Bool
    private var chunkSize: Int
    private var generation = 0
    private var linkTasks: [Task<Void, Never>] = []
    private var writer: Task<Void, Never>?
    private var rssiTask: Task<Void, Never>?

    private var queue: [UInt8] = []
    private var head = 0
    /// Where writes must end (``send(_:endingWrite:)``), as byte positions counted like
    /// ``sentBytes`` (bytes since the link was made), ascending.
    private var writeEnds: [Int] = []
    private var isLinkUp = true
    private var closeReason: String?
    private var writerWake: CheckedContinuation<Void, Never>?
    private var roomWaiters: [CheckedContinuation<Void, any Error>] = []
    private var drainWaiters: [CheckedContinuation<Void, any Error>] = []
    private var linkWaiters: [CheckedContinuation<Void, any Error>] = []
    private var closeWaiters: [Int: CheckedContinuation<String?, Never>] = [:]
    private var nextWaiter = 0
    private var sentBytes = 0
    private let clock: any Clock<Duration>
    private var outageTimer: Task<Void, Never>?

    /// Bytes queued while the link is up before ``send(_:)`` waits: enough to keep a few writes
    /// in flight, small enough that a caller feels the link's pace.
    static let highWaterMark = 4096

    private init(
        central: Central, connection: Connection, name: String, options: SerialLinkOptions, profile: SerialProfile, withResponse: Bool,
        chunkSize: Int, clock: any Clock<Duration>
    ) {
        self.central = central
        self.clock = clock
        self.connection = connection
        self.name = name
        self.address = connection.address
        self.options = options
        self.profile = profile
        self.withResponse = withResponse
        self.chunkSize = chunkSize
        let received = ReceiveBuffer(limit: options.receiveBufferLimit)
        self.received = received
        bytes = AsyncStream(unfolding: { await received.next() })
        (status, statusSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1024))
    }

    /// Connects to the device at `address` on `central` (retrying as `options` says), finds its
    /// UART, subscribes to it and starts the writer. `name` labels the device in messages;
    /// `clock` times the outage limit (tests pass a manual clock).
    public static func connect(
        to address: BluetoothAddress, name: String? = nil, on central: Central, options: SerialLinkOptions = SerialLinkOptions(),
        clock: any Clock<Duration> = ContinuousClock()
    ) async throws -> SerialLink {
        let label = name ?? "\(address)"
        let (connection, profile, withResponse, chunk, notifications) = try await open(address, label: label, central: central, options: options)
        let link = SerialLink(
            central: central, connection: connection, name: label, options: options, profile: profile,
            withResponse: withResponse, chunkSize: chunk, clock: clock)
        await link.start(notifications: notifications)
        return link
    }

    /// Connects to the device that sent `advertisement`; see ``connect(to:name:on:options:clock:)``.
    public static func connect(
        to advertisement: Advertisement, on central: Central, options: SerialLinkOptions = SerialLinkOptions(),
        clock: any Clock<Duration> = ContinuousClock()
    ) async throws -> SerialLink {
        try await connect(to: advertisement.address, name: advertisement.name, on: central, options: options, clock: clock)
    }

    private static func open(_ address: BluetoothAddress, label: String, central: Central, options: SerialLinkOptions) async throws
        -> (Connection, SerialProfile, Bool, Int, AsyncThrowingStream<[UInt8], any Error>) {
        let connection: Connection
        do {
            connection = try await central.connect(to: address, timeout: options.connectTimeout, policy: options.connectionPolicy)
        } catch BluetideError.tooManyConnections(let limit) {
            throw SerialLinkError.tooManyLinks(limit: limit)
        }
        do {
            let services = try await connection.services()
            let profile = try SerialProfile.detect(in: services, explicit: options.profile, device: label)
            let properties = services.flatMap(\.characteristics).first { $0.characteristic.uuid == profile.write }?.characteristic.properties ?? []
            let withResponse = !properties.contains(.writeWithoutResponse) || (options.writeWithResponse && properties.contains(.write))
            let notifications = try await connection.notifications(of: profile.notify)
            let chunk = profile.chunkSize(mtu: await connection.mtu)
            return (connection, profile, withResponse, chunk, notifications)
        } catch {
            await connection.disconnect()
            throw error
        }
    }

    private func start(notifications: AsyncThrowingStream<[UInt8], any Error>) {
        report(.connected(profile: profile, chunkSize: chunkSize))
        watch(connection, notifications: notifications)
        writer = Task { await self.runWriter() }
        if let interval = options.rssiInterval {
            rssiTask = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    if Task.isCancelled { return }
                    if let dBm = try? await self.rssi() { self.report(.rssi(dBm)) }
                }
            }
        }
    }

    private func report(_ event: SerialStatus) {
        Self.logger.debug("serial \(name): \(event)")
        statusSink.yield(event)
    }

    /// Debug logs of the link's events (connected, lost, reconnecting, gave up): `bluetide.serial`.
    static let logger = Logger(label: "bluetide.serial")

    /// Starts the tasks that follow one connection: its notifications and its events.
    private func watch(_ connection: Connection, notifications: AsyncThrowingStream<[UInt8], any Error>) {
        generation += 1
        let current = generation
        let received = received
        let name = name
        linkTasks = [
            Task {
                do {
                    for try await chunk in notifications {
                        if !received.push(chunk) {
                            Self.logger.debug("serial \(name): \(chunk.count) received bytes dropped: the reader left the buffer full")
                        }
                    }
                } catch {
                    self.lost(generation: current, reason: "\(error)")
                }
            },
            Task {
                for await event in connection.events { self.handle(event, generation: current) }
            },
        ]
    }

    private func handle(_ event: ConnectionEvent, generation current: Int) {
        guard current == generation, closeReason == nil else { return }
        switch event {
        case .connected:
            setLink(up: true)
        case let .disconnected(reason):
            setLink(up: false)
            report(.disconnected(reason: "\(reason)"))
        case let .reconnecting(attempt):
            setLink(up: false)
            report(.reconnecting(attempt: attempt, of: options.reconnectTries))
        case .reconnected:
            Task { await self.refreshChunkSize(generation: current) }
        case let .failed(error):
            lost(generation: current, reason: "\(error)")
        }
    }

    private func refreshChunkSize(generation current: Int) async {
        let mtu = await connection.mtu
        guard current == generation, closeReason == nil else { return }
        chunkSize = profile.chunkSize(mtu: mtu)
        report(.reconnected)
        setLink(up: true)
    }

    private func lost(generation current: Int, reason: String) {
        guard current == generation, closeReason == nil else { return }
        report(.gaveUp(reason: reason))
        finish(reason: "gave up reconnecting: \(reason)")
    }

    private func setLink(up: Bool) {
        isLinkUp = up
        if up {
            outageTimer?.cancel()
            outageTimer = nil
            wakeWriter()
            for waiter in linkWaiters { waiter.resume() }
            linkWaiters = []
        } else {
            // Senders waiting for room keep their bytes queued; they need not wait out the outage.
            for waiter in roomWaiters { waiter.resume() }
            roomWaiters = []
            startOutageTimer()
        }
    }

    /// Starts timing the outage (once per outage): past ``SerialLinkOptions/outageLimit`` the
    /// link gives up by itself.
    private func startOutageTimer() {
        guard outageTimer == nil, closeReason == nil else { return }
        let limit = options.outageLimit
        let clock = clock
        outageTimer = Task {
            do { try await clock.sleep(for: limit) } catch { return }
            self.outageExpired(after: limit)
        }
    }

    private func outageExpired(after limit: Duration) {
        guard !isLinkUp, closeReason == nil else { return }
        outageTimer = nil
        let tries = options.reconnectTries
        let reason = "not back within \(limit.components.seconds) s (\(tries) reconnect \(tries == 1 ? "try" : "tries"))"
        report(.gaveUp(reason: reason))
        finish(reason: "gave up reconnecting: \(reason)")
    }

    // MARK: Sending

    /// Bytes waiting to be written.
    public var queuedBytes: Int { queue.count - head }
    /// Bytes written since the link was made.
    public var writtenBytes: Int { sentBytes }
    /// Whether the link is up now.
    public var isConnected: Bool { isLinkUp && closeReason == nil }
    /// The bytes one write carries on the current link.
    public var writeSize: Int { chunkSize }

    /// Queues `bytes` for the device, in order after everything sent before. See the type's
    /// notes for back-pressure and what happens while the link is down. With `endingWrite`, the
    /// last write carrying them ends with them: what is sent next starts a write of its own (a
    /// line or an AT command reaches the device as one write, not merged with the next; bytes
    /// longer than a write are still cut into writes).
    public func send(_ bytes: [UInt8], endingWrite: Bool = false) async throws {
        if let closeReason { throw SerialLinkError.closed(device: name, reason: closeReason) }
        guard !bytes.isEmpty else { return }
        if !isLinkUp, queuedBytes + bytes.count > options.outageBufferLimit {
            throw SerialLinkError.linkDown(device: name, queued: queuedBytes, offered: bytes.count, limit: options.outageBufferLimit)
        }
        queue.append(contentsOf: bytes)
        if endingWrite { writeEnds.append(sentBytes + queuedBytes) }
        wakeWriter()
        while isLinkUp, closeReason == nil, queuedBytes > Self.highWaterMark {
            try await withCheckedThrowingContinuation { roomWaiters.append($0) }
        }
    }

    /// Sends the UTF-8 bytes of `text`.
    public func send(_ text: String) async throws { try await send(Array(text.utf8)) }

    /// Waits until every queued byte has been written (or the link closes: then throws).
    public func drain() async throws {
        while queuedBytes > 0 {
            if let closeReason { throw SerialLinkError.closed(device: name, reason: closeReason) }
            try await withCheckedThrowingContinuation { drainWaiters.append($0) }
        }
    }

    /// Waits until the link is up (returns at once when it is); throws once it is closed.
    public func waitForLink() async throws {
        while !isLinkUp {
            if let closeReason { throw SerialLinkError.closed(device: name, reason: closeReason) }
            try await withCheckedThrowingContinuation { linkWaiters.append($0) }
        }
        if let closeReason { throw SerialLinkError.closed(device: name, reason: closeReason) }
    }

    private func wakeWriter() {
        writerWake?.resume()
        writerWake = nil
    }

    /// The next chunk to write and where, once there is one and the link is up; nil once closed.
    private func nextChunk() async -> (Connection, BluetoothUUID, Bool, [UInt8])? {
        while closeReason == nil, !isLinkUp || queuedBytes == 0 {
            await withCheckedContinuation { writerWake = $0 }
        }
        guard closeReason == nil else { return nil }
        var end = min(head + chunkSize, queue.count)
        if let writeEnd = writeEnds.first { end = min(end, head + (writeEnd - sentBytes)) }
        return (connection, profile.write, withResponse, Array(queue[head..<end]))
    }

    private func written(_ count: Int) {
        head += count
        sentBytes += count
        while let writeEnd = writeEnds.first, writeEnd <= sentBytes { writeEnds.removeFirst() }
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

    private func writeFailed(_ connection: Connection, _ error: any Error) async {
        // A write that fails because the link dropped is tried again once it is back.
        if await connection.isConnected, closeReason == nil, connection === self.connection {
            report(.gaveUp(reason: "write failed: \(error)"))
            finish(reason: "write failed: \(error)")
        } else if connection === self.connection {
            isLinkUp = false
            // The link may have come back while we asked: then nothing else will say so.
            if await connection.isConnected, connection === self.connection { setLink(up: true) }
        }
    }

    private func runWriter() async {
        while true {
            // Back-pressure from the reader: no more writes while received bytes pile up.
            // (A chunk is at most `chunkSize` bytes: room for that many is asked for.)
            await received.waitForRoom(toWrite: chunkSize)
            guard let (connection, characteristic, withResponse, chunk) = await nextChunk() else { return }
            received.wrote(chunk.count)
            do {
                try await connection.write(chunk, to: characteristic, withResponse: withResponse)
                written(chunk.count)
            } catch {
                await writeFailed(connection, error)
            }
        }
    }

    // MARK: Link

    /// The link's signal strength now, dBm.
    public func rssi() async throws -> Int {
        if let closeReason { throw SerialLinkError.closed(device: name, reason: closeReason) }
        return try await connection.rssi()
    }

    /// Drops the link and makes it again (with the connect retries of ``options``); queued
    /// bytes wait and go out on the new link.
    public func reconnect() async throws {
        if let closeReason { throw SerialLinkError.closed(device: name, reason: closeReason) }
        generation += 1  // the old connection's ending is not a loss
        for task in linkTasks { task.cancel() }
        setLink(up: false)
        await connection.disconnect()
        report(.disconnected(reason: "reconnect asked for"))
        report(.reconnecting(attempt: 1, of: 1))
        do {
            let (connection, profile, withResponse, chunk, notifications) = try await Self.open(address, label: name, central: central, options: options)
            self.connection = connection
            self.profile = profile
            self.withResponse = withResponse
            self.chunkSize = chunk
            watch(connection, notifications: notifications)
            report(.reconnected)
            setLink(up: true)
        } catch {
            report(.gaveUp(reason: "\(error)"))
            finish(reason: "reconnect failed: \(error)")
            throw error
        }
    }

    /// Disconnects and ends ``bytes`` and ``status``; queued bytes are dropped. Idempotent.
    public func close() async {
        guard closeReason == nil else { return }
        report(.closed)
        finish(reason: "closed")
        await connection.disconnect()
    }

    private func finish(reason: String) {
        guard closeReason == nil else { return }
        closeReason = reason
        for task in linkTasks { task.cancel() }
        rssiTask?.cancel()
        outageTimer?.cancel()
        outageTimer = nil
        wakeWriter()
        let error = SerialLinkError.closed(device: name, reason: reason)
        for waiter in roomWaiters + drainWaiters + linkWaiters { waiter.resume(throwing: error) }
        roomWaiters = []; drainWaiters = []; linkWaiters = []
        for waiter in closeWaiters.values { waiter.resume(returning: reason) }
        closeWaiters = [:]
        received.finish()
        statusSink.finish()
        let connection = self.connection
        Task { await connection.disconnect() }
    }

    /// Waits until the link closes and returns why; nil when the waiting task is cancelled first.
    public func waitForClose() async -> String? {
        if let closeReason { return closeReason }
        nextWaiter += 1
        let id = nextWaiter
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                if Task.isCancelled { continuation.resume(returning: nil) } else { closeWaiters[id] = continuation }
            }
        } onCancel: {
            Task { await self.cancelCloseWaiter(id) }
        }
    }

    private func cancelCloseWaiter(_ id: Int) {
        closeWaiters.removeValue(forKey: id)?.resume(returning: nil)
    }

    /// Why the link closed; nil while it is open.
    public var closedReason: String? { closeReason }
}

extension SerialLink {
    /// The received bytes as lines (CR, LF or CRLF by default); a last unfinished line is given
    /// when the link closes. Consumes ``bytes``: use one or the other.
    public nonisolated func lines(terminator: LineAssembler.Terminator = .any) -> AsyncStream<SerialLine> {
        let source = bytes
        return AsyncStream { continuation in
            let task = Task {
                var assembler = LineAssembler(terminator: terminator)
                for await chunk in source {
                    for line in assembler.feed(chunk) { continuation.yield(line) }
                }
                if let last = assembler.flush() { continuation.yield(last) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
