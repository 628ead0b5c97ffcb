import BluetideBase
import BluetideSupport

/// What a GATT client needs from a connection it does not run itself: request/response
/// exchanges and commands on one ATT bearer. Tests connect it to a ``GATTServer`` in memory
/// (a link of a ``HostStack`` needs none: its procedures run inside the host core).
public protocol ATTRequestChannel: Sendable {
    /// Sends a request and returns its response (an Error Response is returned, not thrown).
    /// Throws when the bearer fails (timeout, link loss).
    func request(_ pdu: ATTPDU) async throws -> ATTPDU
    /// Sends a command (Write Command); no response.
    func send(command: ATTPDU) async throws
    /// The current effective ATT MTU, octets.
    func currentMTU() async -> Int
    /// A stream of the values the peer notifies or indicates on `valueHandle`, routed by the
    /// channel itself; nil when the channel leaves routing to the client, which then takes values through ``GATTClient/receiveNotification(handle:value:)``.
    func openValueStream(valueHandle: UInt16) async -> GATTValueSubscription?
    /// Ends every stream ``openValueStream(valueHandle:)`` opened for `valueHandle`.
    func closeValueStreams(valueHandle: UInt16) async
    /// Sends a Write Command of `value` to attribute `handle`; throws
    /// ``GATTClientError/valueTooLong(length:maximum:)`` beyond MTU − 3 octets.
    func sendWriteCommand(handle: UInt16, value: [UInt8]) async throws
}

extension ATTRequestChannel {
    /// Runs `procedure` request by request on this channel and returns its output. The
    /// requests that follow a failure (a long write's cancel) go out even when the calling task
    /// is cancelled: they clean up the server's state.
    public func run<P: GATTProcedure>(_ procedure: P) async throws -> P.Output {
        var procedure = procedure
        var step = procedure.start()
        var cleaningUp = false
        while true {
            switch step {
            case let .finished(result):
                return try result.get()
            case let .send(pdu):
                do {
                    let response = cleaningUp ? try await Task { try await request(pdu) }.value : try await request(pdu)
                    step = procedure.handle(response: response)
                } catch {
                    cleaningUp = true
                    step = procedure.handle(failure: error)
                }
            }
        }
    }
}

extension ATTRequestChannel {
    /// The default: the client routes values itself.
    public func openValueStream(valueHandle: UInt16) async -> GATTValueSubscription? { nil }
    /// The default: nothing to end.
    public func closeValueStreams(valueHandle: UInt16) async {}

    /// The default: checks the value against ``currentMTU()``, then ``send(command:)``.
    public func sendWriteCommand(handle: UInt16, value: [UInt8]) async throws {
        let maximum = await currentMTU() - 3
        guard value.count <= maximum else { throw GATTClientError.valueTooLong(length: value.count, maximum: maximum) }
        try await send(command: .writeCommand(handle: handle, value: value))
    }
}

/// The values of one subscription, and how to end it early.
public struct GATTValueSubscription: Sendable {
    /// Values in arrival order; the stream ends with the subscription or the link.
    public let values: AsyncStream<[UInt8]>
    /// Ends the stream (the subscription failed to start).
    public let end: @Sendable () -> Void

    /// A subscription delivering `values`, ended by `end`.
    public init(values: AsyncStream<[UInt8]>, end: @escaping @Sendable () -> Void) {
        self.values = values
        self.end = end
    }
}

/// Why a GATT client procedure failed.
public enum GATTClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The server answered with an Error Response.
    case att(ATTErrorCode, handle: UInt16, request: ATTOpcode)
    /// The server answered with a PDU that does not belong to the request.
    case unexpectedResponse(ATTPDU, request: ATTOpcode)
    /// A response could not be understood.
    case malformedResponse(DecodingError)
    /// A response that does not fit the request it answers: handles outside the range asked
    /// for or not rising (a response to an earlier request, sent twice), a backwards range, a
    /// value handle that is not its characteristic's. The text says what came and what was asked.
    case protocolViolation(String)
    /// A Prepare Write Response did not echo the data we sent (long write cancelled).
    case writeVerificationFailed(handle: UInt16, offset: UInt16)
    /// The value does not fit (Write Command is limited to MTU − 3 octets).
    case valueTooLong(length: Int, maximum: Int)
    /// The characteristic has no Client Characteristic Configuration descriptor.
    case noClientConfiguration(valueHandle: UInt16)
    /// The characteristic supports neither notifications nor indications.
    case notSubscribable(valueHandle: UInt16)

    /// A sentence for logs and CLI output.
    public var description: String {
        switch self {
        case let .att(code, handle, request): "ATT error \(code) on handle \(handle) for request \(request)"
        case let .unexpectedResponse(pdu, request):
            "protocol error: the device answered \(request.aName) with \(pdu.opcode.aName) that does not fit it"
        case let .protocolViolation(text): "protocol error: \(text)"
        case let .malformedResponse(e): "malformed response: \(e)"
        case let .writeVerificationFailed(handle, offset): "prepared write echo mismatch on handle \(handle) at offset \(offset)"
        case let .valueTooLong(length, maximum): "value of \(length) bytes exceeds \(maximum)"
        case let .noClientConfiguration(h): "characteristic value \(h) has no CCCD"
        case let .notSubscribable(h): "characteristic value \(h) supports neither notify nor indicate"
        }
    }
}

/// The GATT client procedures (Core Vol 3 Part G 4): discovery, reads (long ones via Read
/// Blob), writes (long ones via Prepare/Execute Write with echo verification), and
/// subscriptions through the CCCD with routing of notifications and indications to subscribers.
///
/// A façade: each procedure is a state machine in `Procedures/` (``DatabaseDiscovery``,
/// ``ReadValue``, ``LongWrite``, …), and this client only hands it to a driver. On a link of a
/// ``HostStack`` the host core runs it (one wait per procedure, however many requests it takes);
/// over an ``ATTRequestChannel`` the client runs it request by request. Either way procedures
/// run one at a time per connection, in the order they were asked for — which also keeps two
/// long writes from sharing the server's one prepared-write queue.
public actor GATTClient {
    private enum Driver: Sendable {
        /// The host core runs procedures; values reach subscribers straight from the stack.
        case link(HostStack, HostLinkToken)
        /// This client runs procedures over the channel.
        case channel(any ATTRequestChannel)
    }

    private nonisolated let driver: Driver
    private var subscribers: [UInt16: [Int: AsyncStream<[UInt8]>.Continuation]] = [:]
    private var nextSubscriberID = 0
    /// Over a channel: one procedure at a time, in the order they were asked for.
    private let procedureTurns = AsyncLock()

    /// A client issuing its requests on `channel`.
    public init(channel: any ATTRequestChannel) {
        driver = .channel(channel)
    }

    /// The client of link `handle` of `stack`, whose procedures run in the stack's core.
    init(stack: HostStack, link: HostLinkToken) {
        driver = .link(stack, link)
    }

    // MARK: Running procedures

    /// Runs `request` to its end.
    private nonisolated func run(_ request: GATTProcedureRequest) async throws -> GATTProcedureResult {
        switch driver {
        case let .link(stack, link): try await stack.runGATTProcedure(request, on: link)
        case let .channel(channel): try await run(request, over: channel)
        }
    }

    /// Runs `request` over `channel` once the procedures before it have ended.
    private func run(_ request: GATTProcedureRequest, over channel: any ATTRequestChannel) async throws -> GATTProcedureResult {
        await procedureTurns.acquireUncancellable()
        defer { procedureTurns.release() }
        return try await channel.run(request.procedure(mtu: await channel.currentMTU()))
    }

    /// Runs `request` and takes its result apart with `extract`.
    private nonisolated func run<T>(_ request: GATTProcedureRequest, _ extract: (GATTProcedureResult) -> T?) async throws -> T {
        let result = try await run(request)
        guard let value = extract(result) else { throw HostError.malformed("GATT \(request): unexpected result \(result)") }
        return value
    }

    // MARK: MTU

    /// Exchanges the ATT MTU (at most once per connection); returns the server's receive MTU.
    /// The effective MTU (the smaller of both) is applied by the bearer.
    public nonisolated func exchangeMTU(clientMTU: Int = ATTBearer.maximumMTU) async throws -> Int {
        try await run(.exchangeMTU(clientMTU: clientMTU)) { if case let .mtu(mtu) = $0 { mtu } else { nil } }
    }

    // MARK: Discovery

    /// Discovers every primary service (Read By Group Type 0x2800 until Attribute Not Found).
    public nonisolated func discoverPrimaryServices() async throws -> [GATTServiceRange] {
        try await run(.discoverPrimaryServices(uuid: nil)) { if case let .services(found) = $0 { found } else { nil } }
    }

    /// Discovers the primary services with a given UUID (Find By Type Value on 0x2800).
    public nonisolated func discoverPrimaryServices(uuid: BluetoothUUID) async throws -> [GATTServiceRange] {
        try await run(.discoverPrimaryServices(uuid: uuid)) { if case let .services(found) = $0 { found } else { nil } }
    }

    /// Finds the include declarations of a service (Read By Type 0x2802). An included service
    /// with a 128-bit UUID has it read from its declaration.
    public nonisolated func findIncludedServices(in service: GATTServiceRange) async throws -> [GATTIncludedService] {
        try await run(.findIncludedServices(service)) { if case let .includedServices(found) = $0 { found } else { nil } }
    }

    /// Discovers the characteristics of a service (Read By Type 0x2803).
    public nonisolated func discoverCharacteristics(in service: GATTServiceRange) async throws -> [GATTCharacteristic] {
        try await run(.discoverCharacteristics(service)) { if case let .characteristics(found) = $0 { found } else { nil } }
    }

    /// Discovers the descriptors of a characteristic (Find Information after its value handle).
    public nonisolated func discoverDescriptors(of characteristic: GATTCharacteristic) async throws -> [GATTDescriptor] {
        try await run(.discoverDescriptors(characteristic)) { if case let .descriptors(found) = $0 { found } else { nil } }
    }

    /// Discovers every primary service with its characteristics and their descriptors.
    public nonisolated func discoverDatabase() async throws -> [GATTRemoteService] {
        try await run(.discoverDatabase) { if case let .database(found) = $0 { found } else { nil } }
    }

    // MARK: Reads

    /// Reads a value. When the first response fills the MTU, the rest is read with Read Blob
    /// until a short part (or Attribute Not Long / Invalid Offset at the end).
    public nonisolated func read(handle: UInt16) async throws -> [UInt8] {
        try await run(.read(handle: handle)) { if case let .value(value) = $0 { value } else { nil } }
    }

    /// Reads several values in one request (Read Multiple); the result is their concatenation,
    /// cut by the server at MTU − 1 octets.
    public nonisolated func readMultiple(handles: [UInt16]) async throws -> [UInt8] {
        try await run(.readMultiple(handles: handles)) { if case let .value(value) = $0 { value } else { nil } }
    }

    /// Reads several variable-length values in one request (Read Multiple Variable). A value
    /// cut by the server at the MTU comes back short; read it alone to get all of it.
    public nonisolated func readMultipleVariable(handles: [UInt16]) async throws -> [[UInt8]] {
        try await run(.readMultipleVariable(handles: handles)) { if case let .values(values) = $0 { values } else { nil } }
    }

    // MARK: Writes

    /// Writes a value with acknowledgement: Write Request when it fits in MTU − 3 octets, else a
    /// long write (Prepare Write parts of MTU − 5 octets, then Execute Write).
    public nonisolated func write(handle: UInt16, value: [UInt8]) async throws {
        try await run(.write(handle: handle, value: value)) { if case .written = $0 { () } else { nil } }
    }

    /// Writes a value without acknowledgement (Write Command); it must fit in MTU − 3 octets.
    public nonisolated func writeWithoutResponse(handle: UInt16, value: [UInt8]) async throws {
        switch driver {
        case let .link(stack, link): try await stack.writeCommand(value, to: handle, on: link)
        case let .channel(channel): try await channel.sendWriteCommand(handle: handle, value: value)
        }
    }

    /// Long write: queues the value in parts with Prepare Write, checking that each echo matches
    /// what was sent, then executes. On any mismatch or error the queue is cancelled.
    public nonisolated func writeLong(handle: UInt16, value: [UInt8], offset: UInt16 = 0) async throws {
        try await run(.writeLong(handle: handle, value: value, offset: offset)) { if case .written = $0 { () } else { nil } }
    }

    // MARK: Subscriptions

    /// Subscribes to a characteristic's notifications (or indications when it cannot notify, or
    /// when `preferIndications` and it can indicate) by writing its CCCD, and returns the
    /// stream of values. Indications are confirmed by the bearer. The stream is open before the
    /// CCCD is written, so no value sent after the write is missed.
    public nonisolated func subscribe(to characteristic: GATTCharacteristic, preferIndications: Bool = false) async throws -> AsyncStream<[UInt8]> {
        switch driver {
        case let .link(stack, link):
            try await stack.subscribe(to: characteristic, preferIndications: preferIndications, on: link)
        case let .channel(channel):
            try await subscribe(to: characteristic, preferIndications: preferIndications, over: channel)
        }
    }

    private func subscribe(
        to characteristic: GATTCharacteristic, preferIndications: Bool, over channel: any ATTRequestChannel
    ) async throws -> AsyncStream<[UInt8]> {
        let valueHandle = characteristic.valueHandle
        let subscription: GATTValueSubscription
        var localID: Int?
        if let routed = await channel.openValueStream(valueHandle: valueHandle) {
            subscription = routed
        } else {
            let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(HostStack.subscriptionBuffer))
            let id = nextSubscriberID
            nextSubscriberID += 1
            localID = id
            subscribers[valueHandle, default: [:]][id] = continuation
            continuation.onTermination = { _ in
                Task { await self.removeSubscriber(valueHandle, id) }
            }
            subscription = GATTValueSubscription(values: stream, end: { continuation.finish() })
        }
        do {
            _ = try await run(.changeSubscription(.subscribe(preferIndications: preferIndications), of: characteristic), over: channel)
        } catch {
            if let localID { subscribers[valueHandle]?[localID] = nil }
            subscription.end()
            throw error
        }
        return subscription.values
    }

    /// Writes 0x0000 to the CCCD and ends every stream for the characteristic. Idempotent.
    public nonisolated func unsubscribe(from characteristic: GATTCharacteristic) async throws {
        switch driver {
        case let .link(stack, link):
            try await stack.unsubscribe(from: characteristic, on: link)
        case let .channel(channel):
            try await unsubscribe(from: characteristic, over: channel)
        }
    }

    private func unsubscribe(from characteristic: GATTCharacteristic, over channel: any ATTRequestChannel) async throws {
        _ = try await run(.changeSubscription(.unsubscribe, of: characteristic), over: channel)
        let ended = subscribers.removeValue(forKey: characteristic.valueHandle) ?? [:]
        for c in ended.values { c.finish() }
        await channel.closeValueStreams(valueHandle: characteristic.valueHandle)
    }

    private func removeSubscriber(_ handle: UInt16, _ id: Int) {
        subscribers[handle]?[id] = nil
        if subscribers[handle]?.isEmpty == true { subscribers[handle] = nil }
    }

    /// Hands a received notification to the subscribers of `handle` (over a channel that leaves
    /// routing to the client). Returns false when nobody listens.
    @discardableResult
    public func receiveNotification(handle: UInt16, value: [UInt8]) -> Bool {
        guard let targets = subscribers[handle], !targets.isEmpty else { return false }
        for c in targets.values { c.yield(value) }
        return true
    }

    /// Hands a received indication to the subscribers of `handle` (the bearer sends the
    /// confirmation). Returns false when nobody listens.
    @discardableResult
    public func receiveIndication(handle: UInt16, value: [UInt8]) -> Bool {
        receiveNotification(handle: handle, value: value)
    }

    /// Ends every subscription stream (the link went down).
    public func connectionClosed() {
        for targets in subscribers.values { for c in targets.values { c.finish() } }
        subscribers = [:]
    }
}
