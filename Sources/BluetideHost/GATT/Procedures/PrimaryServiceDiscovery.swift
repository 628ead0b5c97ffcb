import BluetideBase

/// Discover All Primary Services (Read By Group Type on 0x2800) or, with a UUID, Discover
/// Primary Services By Service UUID (Find By Type Value on 0x2800), over handles 1…0xFFFF until
/// Attribute Not Found (Core Vol 3 Part G 4.4).
public struct PrimaryServiceDiscovery: GATTProcedure {
    /// The service UUID looked for; nil for every primary service.
    public let uuid: BluetoothUUID?
    private var walk = HandleRangeWalk(1, 0xFFFF)
    private var found: [GATTServiceRange] = []

    /// Discovers the primary services with `uuid`, or all of them when nil.
    public init(uuid: BluetoothUUID? = nil) {
        self.uuid = uuid
    }

    private var request: ATTPDU {
        if let uuid {
            .findByTypeValueRequest(start: walk.start, end: walk.end, type: 0x2800, value: uuid.littleEndianBytes)
        } else {
            .readByGroupTypeRequest(start: walk.start, end: walk.end, type: .primaryService)
        }
    }

    public mutating func start() -> GATTProcedureStep<[GATTServiceRange]> { .send(request) }

    public mutating func handle(response: ATTPDU) -> GATTProcedureStep<[GATTServiceRange]> {
        let opcode = request.opcode
        do {
            guard let response = try GATTResponse.discovery(response, answering: opcode) else { return .finished(.success(found)) }
            let last: UInt16
            switch response {
            case let .readByGroupTypeResponse(entries) where uuid == nil && !entries.isEmpty:
                try GATTResponse.checkRanges(
                    entries.map { ($0.handle, $0.endGroupHandle) }, from: walk.start, to: walk.end, in: response.opcode)
                for e in entries {
                    found.append(GATTServiceRange(
                        uuid: try GATTResponse.uuid(e.value, "service UUID"), startHandle: e.handle, endHandle: e.endGroupHandle))
                }
                last = entries[entries.count - 1].endGroupHandle
            case let .findByTypeValueResponse(ranges) where !ranges.isEmpty:
                guard let uuid else { throw GATTClientError.unexpectedResponse(response, request: opcode) }
                try GATTResponse.checkRanges(ranges.map { ($0.start, $0.end) }, from: walk.start, to: walk.end, in: response.opcode)
                for r in ranges { found.append(GATTServiceRange(uuid: uuid, startHandle: r.start, endHandle: r.end)) }
                last = ranges[ranges.count - 1].end
            default:
                throw GATTClientError.unexpectedResponse(response, request: opcode)
            }
            return walk.advance(past: last) ? .send(request) : .finished(.success(found))
        } catch {
            return .finished(.failure(error))
        }
    }
}
