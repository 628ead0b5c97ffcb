import BluetideBase

/// Read Characteristic Value, and Read Long Characteristic Value when the first part fills the
/// MTU (Core Vol 3 Part G 4.8.1, 4.8.3): Read Request, then Read Blob from the length read so far
/// until a part shorter than MTU − 1 octets, Attribute Not Long or Invalid Offset, or 65 535
/// octets.
public struct ReadValue: GATTProcedure {
    /// The attribute read.
    public let handle: UInt16
    /// The effective ATT MTU at the start, octets.
    public let mtu: Int
    private var value: [UInt8] = []
    /// True once the Read Response came: later responses answer Read Blob Requests.
    private var readingBlobs = false

    /// Reads attribute `handle` at ATT MTU `mtu`.
    public init(handle: UInt16, mtu: Int) {
        self.handle = handle
        self.mtu = mtu
    }

    public mutating func start() -> GATTProcedureStep<[UInt8]> { .send(.readRequest(handle: handle)) }

    public mutating func handle(response: ATTPDU) -> GATTProcedureStep<[UInt8]> {
        let part: [UInt8]
        do {
            if !readingBlobs {
                guard case let .readResponse(first) = try GATTResponse.check(response, answering: .readRequest) else {
                    throw GATTClientError.unexpectedResponse(response, request: .readRequest)
                }
                readingBlobs = true
                part = first
            } else {
                switch response {
                case .errorResponse(_, _, .attributeNotLong), .errorResponse(_, _, .invalidOffset):
                    return .finished(.success(value))
                default:
                    guard case let .readBlobResponse(blob) = try GATTResponse.check(response, answering: .readBlobRequest) else {
                        throw GATTClientError.unexpectedResponse(response, request: .readBlobRequest)
                    }
                    part = blob
                }
            }
        } catch {
            return .finished(.failure(error))
        }
        value += part
        guard part.count == mtu - 1, value.count < Int(UInt16.max) else { return .finished(.success(value)) }
        return .send(.readBlobRequest(handle: handle, offset: UInt16(value.count)))
    }
}

/// Read Multiple Characteristic Values (Core Vol 3 Part G 4.8.4): the values of two or more
/// handles concatenated, cut by the server at MTU − 1 octets.
public struct ReadMultiple: GATTProcedure {
    /// The attributes read, in order.
    public let handles: [UInt16]

    /// Reads `handles` in one request.
    public init(handles: [UInt16]) { self.handles = handles }

    public mutating func start() -> GATTProcedureStep<[UInt8]> { .send(.readMultipleRequest(handles: handles)) }

    public mutating func handle(response: ATTPDU) -> GATTProcedureStep<[UInt8]> {
        GATTResponse.finish(response, answering: .readMultipleRequest) {
            if case let .readMultipleResponse(values) = $0 { values } else { nil }
        }
    }
}

/// Read Multiple Variable Length Characteristic Values (Core Vol 3 Part G 4.8.5): each value
/// on its own; a value cut by the server at the MTU comes back short.
public struct ReadMultipleVariable: GATTProcedure {
    /// The attributes read, in order.
    public let handles: [UInt16]

    /// Reads `handles` in one request.
    public init(handles: [UInt16]) { self.handles = handles }

    public mutating func start() -> GATTProcedureStep<[[UInt8]]> { .send(.readMultipleVariableRequest(handles: handles)) }

    public mutating func handle(response: ATTPDU) -> GATTProcedureStep<[[UInt8]]> {
        GATTResponse.finish(response, answering: .readMultipleVariableRequest) {
            if case let .readMultipleVariableResponse(tuples) = $0 { tuples.map(\.value) } else { nil }
        }
    }
}
