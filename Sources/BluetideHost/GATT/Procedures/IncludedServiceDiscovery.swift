import BluetideBase

/// Find Included Services (Core Vol 3 Part G 4.5.1): Read By Type on 0x2802 across a service's
/// handles. An included service with a 128-bit UUID lists no UUID in its include declaration,
/// so the UUID is read from the included service's declaration (a read, long if need be).
public struct IncludedServiceDiscovery: GATTProcedure {
    /// The service searched.
    public let service: GATTServiceRange
    /// The effective ATT MTU at the start, octets (for the UUID reads).
    public let mtu: Int
    private var walk: HandleRangeWalk
    private var found: [GATTIncludedService] = []
    /// Entries of the last response not handled yet, and that response's last handle.
    private var pending: ArraySlice<ATTHandleValue> = []
    private var last: UInt16 = 0
    /// The UUID read under way: the include declaration and the included range it is for.
    private var uuidRead: (read: ReadValue, declaration: UInt16, start: UInt16, end: UInt16)?

    /// Finds the include declarations of `service` at ATT MTU `mtu`.
    public init(in service: GATTServiceRange, mtu: Int) {
        self.service = service
        self.mtu = mtu
        walk = HandleRangeWalk(service.startHandle, service.endHandle)
    }

    private var request: ATTPDU { .readByTypeRequest(start: walk.start, end: walk.end, type: .include) }

    public mutating func start() -> GATTProcedureStep<[GATTIncludedService]> {
        walk.isEmpty ? .finished(.success([])) : .send(request)
    }

    public mutating func handle(response: ATTPDU) -> GATTProcedureStep<[GATTIncludedService]> {
        do {
            if let step = uuidRead?.read.handle(response: response) { return try follow(step) }
            guard let response = try GATTResponse.discovery(response, answering: .readByTypeRequest) else {
                return .finished(.success(found))
            }
            guard case let .readByTypeResponse(entries) = response, let lastEntry = entries.last else {
                throw GATTClientError.unexpectedResponse(response, request: .readByTypeRequest)
            }
            try GATTResponse.checkHandles(entries.map(\.handle), from: walk.start, to: walk.end, in: response.opcode)
            pending = entries[...]
            last = lastEntry.handle
            return try next()
        } catch {
            return .finished(.failure(error))
        }
    }

    /// Takes the pending entries in order — each found at once, or after reading its UUID —
    /// then moves the walk on.
    private mutating func next() throws -> GATTProcedureStep<[GATTIncludedService]> {
        while let entry = pending.popFirst() {
            var r = ByteReader(entry.value)
            let first: UInt16
            let end: UInt16
            do {
                first = try r.read(UInt16.self, "included service handle")
                end = try r.read(UInt16.self, "end group handle")
            } catch {
                throw GATTClientError.malformedResponse(error)
            }
            try GATTResponse.checkRanges([(first, end)], from: 1, to: 0xFFFF, in: .readByTypeResponse)
            if r.isAtEnd {
                var read = ReadValue(handle: first, mtu: mtu)
                let step = read.start()
                uuidRead = (read, entry.handle, first, end)
                return try follow(step)
            }
            let uuid = try GATTResponse.uuid(r.readRemaining(), "included service UUID")
            found.append(GATTIncludedService(
                declarationHandle: entry.handle, service: GATTServiceRange(uuid: uuid, startHandle: first, endHandle: end)))
        }
        return walk.advance(past: last) ? .send(request) : .finished(.success(found))
    }

    /// Carries on with the UUID read's step: its request, or the entry found with the UUID read.
    private mutating func follow(_ step: GATTProcedureStep<[UInt8]>) throws -> GATTProcedureStep<[GATTIncludedService]> {
        let result: Result<[UInt8], any Error>
        switch step {
        case let .send(pdu): return .send(pdu)
        case let .finished(r): result = r
        }
        guard let reading = uuidRead.take() else { return try next() }
        let uuid = try GATTResponse.uuid(try result.get(), "included service UUID")
        found.append(GATTIncludedService(
            declarationHandle: reading.declaration,
            service: GATTServiceRange(uuid: uuid, startHandle: reading.start, endHandle: reading.end)))
        return try next()
    }
}
