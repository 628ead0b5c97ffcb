import BluetideCore

/// What a GATT client needs from a connection: request/response exchanges and commands on
/// one ATT bearer. The stack implements it over its ``ATTBearer``; tests connect it to a
/// ``GATTServer`` in memory.
public protocol ATTRequestChannel: Sendable {
    /// Sends a request and returns its response (an Error Response is returned, not thrown).
    /// Throws when the bearer fails (timeout, link loss).
    func request(_ pdu: ATTPDU) async throws -> ATTPDU
    /// Sends a command (Write Command); no response.
    func send(command: ATTPDU) async throws
    /// The current effective ATT MTU, octets.
    func currentMTU() async -> Int
    /// A stream of the values the peer notifies or indicates on `valueHandle`, routed by the
    /// channel itself (the host stack hands values straight to it); nil when the channel leaves
    /// routing to the client, which then takes values through ``GATTClient/receiveNotification(handle:value:)``.
    func openValueStream(valueHandle: UInt16) async -> GATTValueSubscription?
    /// Ends every stream ``openValueStream(valueHandle:)`` opened for `valueHandle`.
    func closeValueStreams(valueHandle: UInt16) async
    /// Sends a Write Command of `value` to attribute `handle`; throws
    /// ``GATTClientError/valueTooLong(length:maximum:)`` beyond MTU − 3 octets.
    func sendWriteCommand(handle: UInt16, value: [UInt8]) async throws
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
        case let .unexpectedResponse(pdu, request): "unexpected response \(pdu.opcode) to request \(request)"
        case let .malformedResponse(e): "malformed response: \(e)"
        case let .writeVerificationFailed(handle, offset): "prepared write echo mismatch on handle \(handle) at offset \(offset)"
        case let .valueTooLong(length, maximum): "value of \(length) bytes exceeds \(maximum)"
        case let .noClientConfiguration(h): "characteristic value \(h) has no CCCD"
        case let .notSubscribable(h): "characteristic value \(h) supports neither notify nor indicate"
        }
    }
}

/// The GATT client procedures (Core Vol 3 Part G 4) over one ``ATTRequestChannel``: discovery,
/// reads (long ones via Read Blob), writes (long ones via Prepare/Execute Write with echo
/// verification), and subscriptions through the CCCD with routing of notifications and
/// indications to subscribers. Requests go out one at a time (the bearer queues them).
public actor GATTClient {
    private let channel: any ATTRequestChannel
    private var subscribers: [UInt16: [Int: AsyncStream<[UInt8]>.Continuation]] = [:]
    private var nextSubscriberID = 0
    /// The server keeps one prepared-write queue per connection, so long writes run one at a
    /// time: a cancel or a refused execute in one must not discard another's parts.
    private var longWriteInProgress = false
    private var longWriteWaiters: [CheckedContinuation<Void, Never>] = []

    /// A client issuing its requests on `channel`.
    public init(channel: any ATTRequestChannel) {
        self.channel = channel
    }

    // MARK: Plumbing

    /// Sends `pdu`, turns an Error Response into ``GATTClientError/att(_:handle:request:)`` and
    /// checks the response opcode.
    private func exchange(_ pdu: ATTPDU) async throws -> ATTPDU {
        let response = try await channel.request(pdu)
        if case let .errorResponse(op, handle, code) = response { throw GATTClientError.att(code, handle: handle, request: op) }
        guard response.opcode == pdu.opcode.responseOpcode else {
            throw GATTClientError.unexpectedResponse(response, request: pdu.opcode)
        }
        return response
    }

    /// Like `exchange`, but Attribute Not Found (the normal end of a discovery) gives nil.
    private func discoveryExchange(_ pdu: ATTPDU) async throws -> ATTPDU? {
        do {
            return try await exchange(pdu)
        } catch GATTClientError.att(.attributeNotFound, _, _) {
            return nil
        }
    }

    private static func uuid(_ bytes: [UInt8], _ what: String) throws -> BluetoothUUID {
        do { return try BluetoothUUID(littleEndian: bytes) } catch { throw GATTClientError.malformedResponse(error.within(what)) }
    }

    private func unexpected(_ pdu: ATTPDU, _ request: ATTOpcode) -> GATTClientError {
        .unexpectedResponse(pdu, request: request)
    }

    // MARK: MTU

    /// Exchanges the ATT MTU (at most once per connection); returns the server's receive MTU.
    /// The effective MTU (the smaller of both) is applied by the bearer.
    public func exchangeMTU(clientMTU: Int = ATTBearer.maximumMTU) async throws -> Int {
        let response = try await exchange(.exchangeMTURequest(clientMTU: UInt16(clamping: clientMTU)))
        guard case let .exchangeMTUResponse(serverMTU) = response else { throw unexpected(response, .exchangeMTURequest) }
        return Int(serverMTU)
    }

    // MARK: Discovery

    /// Discovers every primary service (Read By Group Type 0x2800 until Attribute Not Found).
    public func discoverPrimaryServices() async throws -> [GATTServiceRange] {
        var services: [GATTServiceRange] = []
        var start: UInt16 = 1
        while true {
            guard let response = try await discoveryExchange(.readByGroupTypeRequest(start: start, end: 0xFFFF, type: .primaryService)) else { break }
            guard case let .readByGroupTypeResponse(entries) = response, let last = entries.last else { throw unexpected(response, .readByGroupTypeRequest) }
            for e in entries {
                services.append(GATTServiceRange(uuid: try Self.uuid(e.value, "service UUID"), startHandle: e.handle, endHandle: e.endGroupHandle))
            }
            // Stop at the end of the handle space, and never loop on a server that does not advance.
            guard last.endGroupHandle < 0xFFFF, last.endGroupHandle >= start else { break }
            start = last.endGroupHandle + 1
        }
        return services
    }

    /// Discovers the primary services with a given UUID (Find By Type Value on 0x2800).
    public func discoverPrimaryServices(uuid: BluetoothUUID) async throws -> [GATTServiceRange] {
        var services: [GATTServiceRange] = []
        var start: UInt16 = 1
        while true {
            guard let response = try await discoveryExchange(
                .findByTypeValueRequest(start: start, end: 0xFFFF, type: 0x2800, value: uuid.littleEndianBytes)) else { break }
            guard case let .findByTypeValueResponse(ranges) = response, let last = ranges.last else { throw unexpected(response, .findByTypeValueRequest) }
            for r in ranges { services.append(GATTServiceRange(uuid: uuid, startHandle: r.start, endHandle: r.end)) }
            guard last.end < 0xFFFF, last.end >= start else { break }
            start = last.end + 1
        }
        return services
    }

    /// Finds the include declarations of a service (Read By Type 0x2802). An included service
    /// with a 128-bit UUID has it read from its declaration.
    public func findIncludedServices(in service: GATTServiceRange) async throws -> [GATTIncludedService] {
        var found: [GATTIncludedService] = []
        var start = service.startHandle
        while start <= service.endHandle {
            guard let response = try await discoveryExchange(.readByTypeRequest(start: start, end: service.endHandle, type: .include)) else { break }
            guard case let .readByTypeResponse(entries) = response, let last = entries.last else { throw unexpected(response, .readByTypeRequest) }
            for e in entries {
                var r = ByteReader(e.value)
                do {
                    let first = try r.read(UInt16.self, "included service handle")
                    let end = try r.read(UInt16.self, "end group handle")
                    let uuid: BluetoothUUID
                    if r.isAtEnd {
                        uuid = try Self.uuid(try await read(handle: first), "included service UUID")
                    } else {
                        uuid = try Self.uuid(r.readRemaining(), "included service UUID")
                    }
                    found.append(GATTIncludedService(declarationHandle: e.handle, service: GATTServiceRange(uuid: uuid, startHandle: first, endHandle: end)))
                } catch let error as DecodingError {
                    throw GATTClientError.malformedResponse(error)
                }
            }
            guard last.handle < service.endHandle, last.handle >= start else { break }
            start = last.handle + 1
        }
        return found
    }

    /// Discovers the characteristics of a service (Read By Type 0x2803).
    public func discoverCharacteristics(in service: GATTServiceRange) async throws -> [GATTCharacteristic] {
        var found: [GATTCharacteristic] = []
        var start = service.startHandle
        while start <= service.endHandle {
            guard let response = try await discoveryExchange(.readByTypeRequest(start: start, end: service.endHandle, type: .characteristicDeclaration)) else { break }
            guard case let .readByTypeResponse(entries) = response, let last = entries.last else { throw unexpected(response, .readByTypeRequest) }
            for e in entries {
                var r = ByteReader(e.value)
                do {
                    let properties = GATTCharacteristicProperties(rawValue: try r.readUInt8("properties"))
                    let valueHandle = try r.read(UInt16.self, "value handle")
                    let uuid = try Self.uuid(r.readRemaining(), "characteristic UUID")
                    found.append(GATTCharacteristic(uuid: uuid, declarationHandle: e.handle, valueHandle: valueHandle,
                                                    endHandle: service.endHandle, properties: properties))
                } catch let error as DecodingError {
                    throw GATTClientError.malformedResponse(error)
                }
            }
            guard last.handle < service.endHandle, last.handle >= start else { break }
            start = last.handle + 1
        }
        // Each characteristic ends just before the next declaration.
        for i in found.indices.dropLast() where found[i + 1].declarationHandle > found[i].declarationHandle {
            found[i].endHandle = found[i + 1].declarationHandle - 1
        }
        return found
    }

    /// Discovers the descriptors of a characteristic (Find Information after its value handle).
    public func discoverDescriptors(of characteristic: GATTCharacteristic) async throws -> [GATTDescriptor] {
        var found: [GATTDescriptor] = []
        guard characteristic.valueHandle < characteristic.endHandle else { return [] }
        var start = characteristic.valueHandle + 1
        while start <= characteristic.endHandle {
            guard let response = try await discoveryExchange(.findInformationRequest(start: start, end: characteristic.endHandle)) else { break }
            guard case let .findInformationResponse(entries) = response, let last = entries.last else { throw unexpected(response, .findInformationRequest) }
            for e in entries { found.append(GATTDescriptor(uuid: e.uuid, handle: e.handle)) }
            guard last.handle < characteristic.endHandle, last.handle >= start else { break }
            start = last.handle + 1
        }
        return found
    }

    /// Discovers every primary service with its characteristics and their descriptors.
    public func discoverDatabase() async throws -> [GATTRemoteService] {
        var out: [GATTRemoteService] = []
        for service in try await discoverPrimaryServices() {
            var characteristics: [GATTRemoteCharacteristic] = []
            for c in try await discoverCharacteristics(in: service) {
                characteristics.append(GATTRemoteCharacteristic(characteristic: c, descriptors: try await discoverDescriptors(of: c)))
            }
            out.append(GATTRemoteService(service: service, characteristics: characteristics))
        }
        return out
    }

    // MARK: Reads

    /// Reads a value. When the first response fills the MTU, the rest is read with Read Blob
    /// until a short part (or Attribute Not Long / Invalid Offset at the end).
    public func read(handle: UInt16) async throws -> [UInt8] {
        let mtu = await channel.currentMTU()
        let response = try await exchange(.readRequest(handle: handle))
        guard case var .readResponse(value) = response else { throw unexpected(response, .readRequest) }
        var last = value.count
        while last == mtu - 1, value.count < Int(UInt16.max) {
            let part: [UInt8]
            do {
                let blob = try await exchange(.readBlobRequest(handle: handle, offset: UInt16(value.count)))
                guard case let .readBlobResponse(p) = blob else { throw unexpected(blob, .readBlobRequest) }
                part = p
            } catch GATTClientError.att(.attributeNotLong, _, _) {
                break
            } catch GATTClientError.att(.invalidOffset, _, _) {
                break
            }
            value += part
            last = part.count
        }
        return value
    }

    /// Reads several values in one request (Read Multiple); the result is their concatenation,
    /// cut by the server at MTU − 1 octets.
    public func readMultiple(handles: [UInt16]) async throws -> [UInt8] {
        let response = try await exchange(.readMultipleRequest(handles: handles))
        guard case let .readMultipleResponse(values) = response else { throw unexpected(response, .readMultipleRequest) }
        return values
    }

    /// Reads several variable-length values in one request (Read Multiple Variable). A value
    /// cut by the server at the MTU comes back short; read it alone to get all of it.
    public func readMultipleVariable(handles: [UInt16]) async throws -> [[UInt8]] {
        let response = try await exchange(.readMultipleVariableRequest(handles: handles))
        guard case let .readMultipleVariableResponse(tuples) = response else { throw unexpected(response, .readMultipleVariableRequest) }
        return tuples.map(\.value)
    }

    // MARK: Writes

    /// Writes a value with acknowledgement: Write Request when it fits in MTU − 3 octets, else a
    /// long write (Prepare Write parts of MTU − 5 octets, then Execute Write).
    public func write(handle: UInt16, value: [UInt8]) async throws {
        let mtu = await channel.currentMTU()
        if value.count <= mtu - 3 {
            let response = try await exchange(.writeRequest(handle: handle, value: value))
            guard case .writeResponse = response else { throw unexpected(response, .writeRequest) }
        } else {
            try await writeLong(handle: handle, value: value)
        }
    }

    /// Writes a value without acknowledgement (Write Command); it must fit in MTU − 3 octets.
    public func writeWithoutResponse(handle: UInt16, value: [UInt8]) async throws {
        try await channel.sendWriteCommand(handle: handle, value: value)
    }

    /// Long write: queues the value in parts with Prepare Write, checking that each echo matches
    /// what was sent, then executes. On any mismatch or error the queue is cancelled.
    public func writeLong(handle: UInt16, value: [UInt8], offset: UInt16 = 0) async throws {
        if longWriteInProgress {
            await withCheckedContinuation { longWriteWaiters.append($0) }
        }
        longWriteInProgress = true
        defer {
            if longWriteWaiters.isEmpty { longWriteInProgress = false } else { longWriteWaiters.removeFirst().resume() }
        }
        let chunk = max(await channel.currentMTU() - 5, 1)
        var position = 0
        do {
            repeat {
                let part = Array(value[position..<min(position + chunk, value.count)])
                let partOffset = UInt16(clamping: Int(offset) + position)
                let response = try await exchange(.prepareWriteRequest(handle: handle, offset: partOffset, value: part))
                guard case let .prepareWriteResponse(h, o, echoed) = response else { throw unexpected(response, .prepareWriteRequest) }
                guard h == handle, o == partOffset, echoed == part else {
                    throw GATTClientError.writeVerificationFailed(handle: handle, offset: partOffset)
                }
                position += part.count
            } while position < value.count
        } catch {
            // Empty the server's queue even when the caller was cancelled (an unstructured task
            // does not inherit the cancellation), or its parts would join the next long write.
            let channel = self.channel
            _ = await Task { try? await channel.request(.executeWriteRequest(flags: ATTPDU.executeWriteCancel)) }.value
            throw error
        }
        let response = try await exchange(.executeWriteRequest(flags: ATTPDU.executeWriteCommit))
        guard case .executeWriteResponse = response else { throw unexpected(response, .executeWriteRequest) }
    }

    // MARK: Subscriptions

    /// Subscribes to a characteristic's notifications (or indications when it cannot notify, or
    /// when `preferIndications` and it can indicate) by writing its CCCD, and returns the
    /// stream of values. Indications are confirmed by the bearer.
    public func subscribe(to characteristic: GATTCharacteristic, preferIndications: Bool = false) async throws -> AsyncStream<[UInt8]> {
        let props = characteristic.properties
        let config: GATTClientConfiguration
        if props.contains(.indicate), preferIndications || !props.contains(.notify) {
            config = .indication
        } else if props.contains(.notify) {
            config = .notification
        } else {
            throw GATTClientError.notSubscribable(valueHandle: characteristic.valueHandle)
        }
        let cccd = try await clientConfigurationHandle(of: characteristic)
        let valueHandle = characteristic.valueHandle
        let subscription: GATTValueSubscription
        var localID: Int?
        if let routed = await channel.openValueStream(valueHandle: valueHandle) {
            subscription = routed
        } else {
            let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .unbounded)
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
            try await write(handle: cccd, value: [UInt8(config.rawValue & 0xFF), UInt8(config.rawValue >> 8)])
        } catch {
            if let localID { subscribers[valueHandle]?[localID] = nil }
            subscription.end()
            throw error
        }
        return subscription.values
    }

    /// Writes 0x0000 to the CCCD and ends every stream for the characteristic. Idempotent.
    public func unsubscribe(from characteristic: GATTCharacteristic) async throws {
        let cccd = try await clientConfigurationHandle(of: characteristic)
        try await write(handle: cccd, value: [0, 0])
        let ended = subscribers.removeValue(forKey: characteristic.valueHandle) ?? [:]
        for c in ended.values { c.finish() }
        await channel.closeValueStreams(valueHandle: characteristic.valueHandle)
    }

    private func removeSubscriber(_ handle: UInt16, _ id: Int) {
        subscribers[handle]?[id] = nil
        if subscribers[handle]?.isEmpty == true { subscribers[handle] = nil }
    }

    private func clientConfigurationHandle(of characteristic: GATTCharacteristic) async throws -> UInt16 {
        let descriptors = try await discoverDescriptors(of: characteristic)
        guard let cccd = descriptors.first(where: { $0.uuid == .clientCharacteristicConfiguration }) else {
            throw GATTClientError.noClientConfiguration(valueHandle: characteristic.valueHandle)
        }
        return cccd.handle
    }

    /// Hands a received notification to the subscribers of `handle`. Returns false when nobody
    /// listens.
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
