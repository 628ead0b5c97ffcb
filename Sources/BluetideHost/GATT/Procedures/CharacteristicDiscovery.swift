import BluetideBase

/// Discover All Characteristics of a Service (Core Vol 3 Part G 4.6.1): Read By Type on 0x2803
/// across the service's handles. Each characteristic ends just before the next declaration;
/// the last one at the service's end.
public struct CharacteristicDiscovery: GATTProcedure {
    /// The service searched.
    public let service: GATTServiceRange
    private var walk: HandleRangeWalk
    private var found: [GATTCharacteristic] = []

    /// Discovers the characteristics of `service`.
    public init(in service: GATTServiceRange) {
        self.service = service
        walk = HandleRangeWalk(service.startHandle, service.endHandle)
    }

    private var request: ATTPDU { .readByTypeRequest(start: walk.start, end: walk.end, type: .characteristicDeclaration) }

    public mutating func start() -> GATTProcedureStep<[GATTCharacteristic]> {
        walk.isEmpty ? .finished(.success([])) : .send(request)
    }

    public mutating func handle(response: ATTPDU) -> GATTProcedureStep<[GATTCharacteristic]> {
        do {
            guard let response = try GATTResponse.discovery(response, answering: .readByTypeRequest) else { return finish() }
            guard case let .readByTypeResponse(entries) = response, let last = entries.last else {
                throw GATTClientError.unexpectedResponse(response, request: .readByTypeRequest)
            }
            try GATTResponse.checkHandles(entries.map(\.handle), from: walk.start, to: walk.end, in: response.opcode)
            for e in entries {
                var r = ByteReader(e.value)
                let properties: GATTCharacteristicProperties
                let valueHandle: UInt16
                do {
                    properties = GATTCharacteristicProperties(rawValue: try r.readUInt8("properties"))
                    valueHandle = try r.read(UInt16.self, "value handle")
                } catch {
                    throw GATTClientError.malformedResponse(error)
                }
                let uuid = try GATTResponse.uuid(r.readRemaining(), "characteristic UUID")
                // The value's attribute is the one right after the declaration (Core Vol 3
                // Part G 3.3.2); anything else (0, 0xFFFF, another characteristic's) is not it.
                guard e.handle < 0xFFFF, valueHandle == e.handle + 1 else {
                    throw GATTClientError.protocolViolation(
                        "the characteristic declared at handle \(e.handle) gives value handle \(valueHandle); it must be \(UInt32(e.handle) + 1), the next one")
                }
                found.append(GATTCharacteristic(
                    uuid: uuid, declarationHandle: e.handle, valueHandle: valueHandle, endHandle: service.endHandle,
                    properties: properties))
            }
            return walk.advance(past: last.handle) ? .send(request) : finish()
        } catch {
            return .finished(.failure(error))
        }
    }

    private func finish() -> GATTProcedureStep<[GATTCharacteristic]> {
        var found = found
        for i in found.indices.dropLast() where found[i + 1].declarationHandle > found[i].declarationHandle {
            found[i].endHandle = found[i + 1].declarationHandle - 1
        }
        return .finished(.success(found))
    }
}

/// Discover All Characteristic Descriptors (Core Vol 3 Part G 4.7.1): Find Information from
/// just after the value handle to the characteristic's end.
public struct DescriptorDiscovery: GATTProcedure {
    /// The characteristic searched.
    public let characteristic: GATTCharacteristic
    private var walk: HandleRangeWalk
    private var found: [GATTDescriptor] = []

    /// Discovers the descriptors of `characteristic`.
    public init(of characteristic: GATTCharacteristic) {
        self.characteristic = characteristic
        // A value handle at or past the end leaves no room for descriptors: an empty walk.
        walk = characteristic.valueHandle < characteristic.endHandle
            ? HandleRangeWalk(characteristic.valueHandle + 1, characteristic.endHandle) : HandleRangeWalk(1, 0)
    }

    private var request: ATTPDU { .findInformationRequest(start: walk.start, end: walk.end) }

    public mutating func start() -> GATTProcedureStep<[GATTDescriptor]> {
        walk.isEmpty ? .finished(.success([])) : .send(request)
    }

    public mutating func handle(response: ATTPDU) -> GATTProcedureStep<[GATTDescriptor]> {
        do {
            guard let response = try GATTResponse.discovery(response, answering: .findInformationRequest) else {
                return .finished(.success(found))
            }
            guard case let .findInformationResponse(entries) = response, let last = entries.last else {
                throw GATTClientError.unexpectedResponse(response, request: .findInformationRequest)
            }
            try GATTResponse.checkHandles(entries.map(\.handle), from: walk.start, to: walk.end, in: response.opcode)
            for e in entries { found.append(GATTDescriptor(uuid: e.uuid, handle: e.handle)) }
            return walk.advance(past: last.handle) ? .send(request) : .finished(.success(found))
        } catch {
            return .finished(.failure(error))
        }
    }
}
