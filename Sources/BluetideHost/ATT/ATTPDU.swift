import BluetideBase

/// One attribute handle with the UUID of its type (Find Information Response entry).
public struct ATTHandleUUID: Hashable, Sendable {
    /// The attribute handle.
    public var handle: UInt16
    /// The attribute type.
    public var uuid: BluetoothUUID
    /// An entry for `handle` of type `uuid`.
    public init(handle: UInt16, uuid: BluetoothUUID) {
        self.handle = handle
        self.uuid = uuid
    }
}

/// One handle range found by Find By Type Value (found attribute handle, group end handle).
public struct ATTHandleRange: Hashable, Sendable {
    /// Handle of the attribute that matched.
    public var start: UInt16
    /// Last handle of its group (equal to `start` for non-grouping attributes).
    public var end: UInt16
    /// A range from `start` to `end` (inclusive).
    public init(start: UInt16, end: UInt16) {
        self.start = start
        self.end = end
    }
}

/// One handle with (part of) its value (Read By Type Response entry).
public struct ATTHandleValue: Hashable, Sendable {
    /// The attribute handle.
    public var handle: UInt16
    /// The value bytes (possibly truncated by the server to fit the MTU).
    public var value: [UInt8]
    /// An entry for `handle` with `value`.
    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// One group with its value (Read By Group Type Response entry).
public struct ATTGroupValue: Hashable, Sendable {
    /// Handle of the grouping attribute (e.g. a service declaration).
    public var handle: UInt16
    /// Last handle of the group.
    public var endGroupHandle: UInt16
    /// The grouping attribute's value (e.g. the service UUID).
    public var value: [UInt8]
    /// A group from `handle` to `endGroupHandle` with the grouping attribute's `value`.
    public init(handle: UInt16, endGroupHandle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.endGroupHandle = endGroupHandle
        self.value = value
    }
}

/// One value with its full length (Read Multiple Variable Response tuple). The value may be
/// shorter than `length` in the last tuple when the server cut the response at the MTU.
public struct ATTLengthValue: Hashable, Sendable {
    /// The attribute value's full length, octets.
    public var length: UInt16
    /// The value bytes carried (all of them, or the first part for a cut last tuple).
    public var value: [UInt8]
    /// A tuple whose `length` is the value's own length.
    public init(_ value: [UInt8]) {
        self.length = UInt16(clamping: value.count)
        self.value = value
    }
    /// A tuple with an explicit full length.
    public init(length: UInt16, value: [UInt8]) {
        self.length = length
        self.value = value
    }
}

/// Every ATT PDU (Core Vol 3 Part F 3.4) as a typed value with its parameters.
///
/// `decode` never traps: a truncated or malformed PDU throws ``DecodingError`` naming the field;
/// an opcode this type does not model decodes to ``unknown(opcode:parameters:)``. Fixed-size PDUs
/// with trailing bytes are rejected as invalid.
public enum ATTPDU: Hashable, Sendable {
    /// 0x01: a request failed.
    case errorResponse(requestOpcode: ATTOpcode, handle: UInt16, error: ATTErrorCode)
    /// 0x02: the client's receive MTU (octets).
    case exchangeMTURequest(clientMTU: UInt16)
    /// 0x03: the server's receive MTU (octets).
    case exchangeMTUResponse(serverMTU: UInt16)
    /// 0x04: list handles and types in a range.
    case findInformationRequest(start: UInt16, end: UInt16)
    /// 0x05: handle/type pairs, all 16-bit or all 128-bit UUIDs.
    case findInformationResponse([ATTHandleUUID])
    /// 0x06: find attributes of a 16-bit type with an exact value.
    case findByTypeValueRequest(start: UInt16, end: UInt16, type: UInt16, value: [UInt8])
    /// 0x07: the ranges found.
    case findByTypeValueResponse([ATTHandleRange])
    /// 0x08: read the values of attributes of a type in a range.
    case readByTypeRequest(start: UInt16, end: UInt16, type: BluetoothUUID)
    /// 0x09: handle/value pairs, all values the same length.
    case readByTypeResponse([ATTHandleValue])
    /// 0x0A: read a value.
    case readRequest(handle: UInt16)
    /// 0x0B: the value (up to MTU − 1 octets).
    case readResponse(value: [UInt8])
    /// 0x0C: read a value from an offset.
    case readBlobRequest(handle: UInt16, offset: UInt16)
    /// 0x0D: the part of the value from the offset.
    case readBlobResponse(value: [UInt8])
    /// 0x0E: read several values (two or more handles).
    case readMultipleRequest(handles: [UInt16])
    /// 0x0F: the values concatenated.
    case readMultipleResponse(values: [UInt8])
    /// 0x10: read grouping attributes (services) in a range.
    case readByGroupTypeRequest(start: UInt16, end: UInt16, type: BluetoothUUID)
    /// 0x11: group entries, all values the same length.
    case readByGroupTypeResponse([ATTGroupValue])
    /// 0x20: read several variable-length values (two or more handles).
    case readMultipleVariableRequest(handles: [UInt16])
    /// 0x21: length-prefixed values, in request order.
    case readMultipleVariableResponse([ATTLengthValue])
    /// 0x23: several handle/value pairs pushed at once (each value length-prefixed on the wire).
    case multipleHandleValueNotification([ATTHandleValue])
    /// 0x12: write a value, acknowledged.
    case writeRequest(handle: UInt16, value: [UInt8])
    /// 0x13: the write succeeded.
    case writeResponse
    /// 0x52: write a value, not acknowledged.
    case writeCommand(handle: UInt16, value: [UInt8])
    /// 0xD2: write a value with a 12-octet authentication signature.
    case signedWriteCommand(handle: UInt16, value: [UInt8], signature: [UInt8])
    /// 0x16: queue part of a value.
    case prepareWriteRequest(handle: UInt16, offset: UInt16, value: [UInt8])
    /// 0x17: echo of the queued part.
    case prepareWriteResponse(handle: UInt16, offset: UInt16, value: [UInt8])
    /// 0x18: write (flags 0x01) or cancel (flags 0x00) the queued parts.
    case executeWriteRequest(flags: UInt8)
    /// 0x19: the execute write finished.
    case executeWriteResponse
    /// 0x1B: a value pushed without confirmation.
    case handleValueNotification(handle: UInt16, value: [UInt8])
    /// 0x1D: a value pushed with confirmation.
    case handleValueIndication(handle: UInt16, value: [UInt8])
    /// 0x1E: the indication was received.
    case handleValueConfirmation
    /// Any other opcode, with its parameters undecoded.
    case unknown(opcode: ATTOpcode, parameters: [UInt8])

    /// Execute Write flags value that cancels all prepared writes.
    public static let executeWriteCancel: UInt8 = 0x00
    /// Execute Write flags value that writes all prepared values.
    public static let executeWriteCommit: UInt8 = 0x01

    /// The opcode of this PDU.
    public var opcode: ATTOpcode {
        switch self {
        case .errorResponse: .errorResponse
        case .exchangeMTURequest: .exchangeMTURequest
        case .exchangeMTUResponse: .exchangeMTUResponse
        case .findInformationRequest: .findInformationRequest
        case .findInformationResponse: .findInformationResponse
        case .findByTypeValueRequest: .findByTypeValueRequest
        case .findByTypeValueResponse: .findByTypeValueResponse
        case .readByTypeRequest: .readByTypeRequest
        case .readByTypeResponse: .readByTypeResponse
        case .readRequest: .readRequest
        case .readResponse: .readResponse
        case .readBlobRequest: .readBlobRequest
        case .readBlobResponse: .readBlobResponse
        case .readMultipleRequest: .readMultipleRequest
        case .readMultipleResponse: .readMultipleResponse
        case .readByGroupTypeRequest: .readByGroupTypeRequest
        case .readByGroupTypeResponse: .readByGroupTypeResponse
        case .readMultipleVariableRequest: .readMultipleVariableRequest
        case .readMultipleVariableResponse: .readMultipleVariableResponse
        case .multipleHandleValueNotification: .multipleHandleValueNotification
        case .writeRequest: .writeRequest
        case .writeResponse: .writeResponse
        case .writeCommand: .writeCommand
        case .signedWriteCommand: .signedWriteCommand
        case .prepareWriteRequest: .prepareWriteRequest
        case .prepareWriteResponse: .prepareWriteResponse
        case .executeWriteRequest: .executeWriteRequest
        case .executeWriteResponse: .executeWriteResponse
        case .handleValueNotification: .handleValueNotification
        case .handleValueIndication: .handleValueIndication
        case .handleValueConfirmation: .handleValueConfirmation
        case let .unknown(opcode, _): opcode
        }
    }

    // MARK: Encoding

    /// The PDU's bytes (opcode first).
    public var bytes: [UInt8] {
        var w = ByteWriter()
        encode(to: &w)
        return w.bytes
    }

    /// Appends the PDU's bytes. Lists are written as given; callers keep entries consistent
    /// (same value length, same UUID size) and within the MTU.
    public func encode(to w: inout ByteWriter) {
        w.write(opcode.rawValue)
        switch self {
        case let .errorResponse(op, handle, error):
            w.write(op.rawValue); w.write(handle); w.write(error.rawValue)
        case let .exchangeMTURequest(mtu), let .exchangeMTUResponse(mtu):
            w.write(mtu)
        case let .findInformationRequest(start, end):
            w.write(start); w.write(end)
        case let .findInformationResponse(entries):
            let short = entries.allSatisfy { $0.uuid.uuid16 != nil }
            w.write(UInt8(short ? 0x01 : 0x02))
            for e in entries {
                w.write(e.handle)
                w.write(bytes: short ? e.uuid.littleEndianBytes : e.uuid.littleEndianBytes128)
            }
        case let .findByTypeValueRequest(start, end, type, value):
            w.write(start); w.write(end); w.write(type); w.write(bytes: value)
        case let .findByTypeValueResponse(ranges):
            for r in ranges { w.write(r.start); w.write(r.end) }
        case let .readByTypeRequest(start, end, type), let .readByGroupTypeRequest(start, end, type):
            w.write(start); w.write(end); w.write(bytes: type.littleEndianBytes)
        case let .readByTypeResponse(entries):
            let length = 2 + (entries.first?.value.count ?? 0)
            w.write(UInt8(truncatingIfNeeded: length))
            for e in entries { w.write(e.handle); w.write(bytes: e.value) }
        case let .readRequest(handle):
            w.write(handle)
        case let .readResponse(value), let .readBlobResponse(value), let .readMultipleResponse(value):
            w.write(bytes: value)
        case let .readBlobRequest(handle, offset):
            w.write(handle); w.write(offset)
        case let .readMultipleRequest(handles), let .readMultipleVariableRequest(handles):
            for h in handles { w.write(h) }
        case let .readMultipleVariableResponse(tuples):
            for t in tuples { w.write(t.length); w.write(bytes: t.value) }
        case let .multipleHandleValueNotification(entries):
            for e in entries { w.write(e.handle); w.write(UInt16(clamping: e.value.count)); w.write(bytes: e.value) }
        case let .readByGroupTypeResponse(entries):
            let length = 4 + (entries.first?.value.count ?? 0)
            w.write(UInt8(truncatingIfNeeded: length))
            for e in entries { w.write(e.handle); w.write(e.endGroupHandle); w.write(bytes: e.value) }
        case let .writeRequest(handle, value), let .writeCommand(handle, value),
            let .handleValueNotification(handle, value), let .handleValueIndication(handle, value):
            w.write(handle); w.write(bytes: value)
        case let .signedWriteCommand(handle, value, signature):
            w.write(handle); w.write(bytes: value); w.write(bytes: signature)
        case let .prepareWriteRequest(handle, offset, value), let .prepareWriteResponse(handle, offset, value):
            w.write(handle); w.write(offset); w.write(bytes: value)
        case let .executeWriteRequest(flags):
            w.write(flags)
        case .writeResponse, .executeWriteResponse, .handleValueConfirmation:
            break
        case let .unknown(_, parameters):
            w.write(bytes: parameters)
        }
    }

    // MARK: Decoding

    /// Decodes one ATT PDU (the whole L2CAP payload on CID 0x0004).
    public init(bytes: [UInt8]) throws(DecodingError) {
        var r = ByteReader(bytes)
        let op = ATTOpcode(try r.readUInt8("ATT opcode"))
        do {
            self = try Self.decodeParameters(op, &r)
        } catch {
            throw error.within("ATT \(op)")
        }
    }

    /// Returns `pdu` when every byte of the reader has been consumed.
    private static func end(_ pdu: ATTPDU, _ r: ByteReader) throws(DecodingError) -> ATTPDU {
        guard r.isAtEnd else {
            throw .invalid(
                "length", expected: "\(r.offset) bytes", found: "\(r.bytes.count) bytes", at: r.offset)
        }
        return pdu
    }

    private static func decodeParameters(_ op: ATTOpcode, _ r: inout ByteReader) throws(DecodingError) -> ATTPDU {
        switch op {
        case .errorResponse:
            let req = ATTOpcode(try r.readUInt8("request opcode"))
            let handle = try r.read(UInt16.self, "attribute handle")
            let code = ATTErrorCode(try r.readUInt8("error code"))
            return try end(.errorResponse(requestOpcode: req, handle: handle, error: code), r)
        case .exchangeMTURequest:
            let mtu = try r.read(UInt16.self, "client rx MTU")
            return try end(.exchangeMTURequest(clientMTU: mtu), r)
        case .exchangeMTUResponse:
            let mtu = try r.read(UInt16.self, "server rx MTU")
            return try end(.exchangeMTUResponse(serverMTU: mtu), r)
        case .findInformationRequest:
            let start = try r.read(UInt16.self, "starting handle")
            let stop = try r.read(UInt16.self, "ending handle")
            return try end(.findInformationRequest(start: start, end: stop), r)
        case .findInformationResponse:
            let format = try r.readUInt8("format")
            let uuidSize: Int
            switch format {
            case 0x01: uuidSize = 2
            case 0x02: uuidSize = 16
            default:
                throw .invalid("format", expected: "0x01 (16-bit) or 0x02 (128-bit)", found: "\(format)", at: 1)
            }
            guard r.remaining > 0 else { throw .truncated("information data", needed: 2 + uuidSize, present: 0, at: r.offset) }
            var entries: [ATTHandleUUID] = []
            while !r.isAtEnd {
                let handle = try r.read(UInt16.self, "handle")
                let uuid = try BluetoothUUID(littleEndian: try r.readBytes(uuidSize, "UUID"))
                entries.append(ATTHandleUUID(handle: handle, uuid: uuid))
            }
            return .findInformationResponse(entries)
        case .findByTypeValueRequest:
            let start = try r.read(UInt16.self, "starting handle")
            let stop = try r.read(UInt16.self, "ending handle")
            let type = try r.read(UInt16.self, "attribute type")
            return .findByTypeValueRequest(start: start, end: stop, type: type, value: r.readRemaining())
        case .findByTypeValueResponse:
            guard r.remaining > 0 else { throw .truncated("handles information list", needed: 4, present: 0, at: r.offset) }
            var ranges: [ATTHandleRange] = []
            while !r.isAtEnd {
                let start = try r.read(UInt16.self, "found attribute handle")
                let stop = try r.read(UInt16.self, "group end handle")
                ranges.append(ATTHandleRange(start: start, end: stop))
            }
            return .findByTypeValueResponse(ranges)
        case .readByTypeRequest, .readByGroupTypeRequest:
            let start = try r.read(UInt16.self, "starting handle")
            let stop = try r.read(UInt16.self, "ending handle")
            let raw = r.readRemaining()
            guard raw.count == 2 || raw.count == 16 else {
                throw .invalid("attribute type", expected: "2 or 16 bytes", found: "\(raw.count) bytes", at: 5)
            }
            let type = try BluetoothUUID(littleEndian: raw)
            return op == .readByTypeRequest
                ? .readByTypeRequest(start: start, end: stop, type: type)
                : .readByGroupTypeRequest(start: start, end: stop, type: type)
        case .readByTypeResponse:
            let length = Int(try r.readUInt8("length"))
            guard length >= 2 else { throw .invalid("length", expected: "at least 2", found: "\(length)", at: 1) }
            try r.require(length, "attribute data")
            var entries: [ATTHandleValue] = []
            while !r.isAtEnd {
                try r.require(length, "attribute data")
                let handle = try r.read(UInt16.self, "handle")
                entries.append(ATTHandleValue(handle: handle, value: try r.readBytes(length - 2, "value")))
            }
            return .readByTypeResponse(entries)
        case .readRequest:
            let handle = try r.read(UInt16.self, "attribute handle")
            return try end(.readRequest(handle: handle), r)
        case .readResponse:
            return .readResponse(value: r.readRemaining())
        case .readBlobRequest:
            let handle = try r.read(UInt16.self, "attribute handle")
            let offset = try r.read(UInt16.self, "value offset")
            return try end(.readBlobRequest(handle: handle, offset: offset), r)
        case .readBlobResponse:
            return .readBlobResponse(value: r.readRemaining())
        case .readMultipleRequest, .readMultipleVariableRequest:
            var handles: [UInt16] = []
            try r.require(4, "set of handles")
            while !r.isAtEnd { handles.append(try r.read(UInt16.self, "handle")) }
            return op == .readMultipleRequest ? .readMultipleRequest(handles: handles) : .readMultipleVariableRequest(handles: handles)
        case .readMultipleVariableResponse:
            var tuples: [ATTLengthValue] = []
            while !r.isAtEnd {
                let length = try r.read(UInt16.self, "value length")
                // Only the last tuple may be cut short (the server stops at the MTU).
                let value = try r.readBytes(min(Int(length), r.remaining), "value")
                tuples.append(ATTLengthValue(length: length, value: value))
            }
            return .readMultipleVariableResponse(tuples)
        case .multipleHandleValueNotification:
            try r.require(4, "handle length value tuple list")
            var entries: [ATTHandleValue] = []
            while !r.isAtEnd {
                let handle = try r.read(UInt16.self, "attribute handle")
                let length = try r.read(UInt16.self, "value length")
                entries.append(ATTHandleValue(handle: handle, value: try r.readBytes(Int(length), "value")))
            }
            return .multipleHandleValueNotification(entries)
        case .readMultipleResponse:
            return .readMultipleResponse(values: r.readRemaining())
        case .readByGroupTypeResponse:
            let length = Int(try r.readUInt8("length"))
            guard length >= 4 else { throw .invalid("length", expected: "at least 4", found: "\(length)", at: 1) }
            try r.require(length, "attribute data")
            var entries: [ATTGroupValue] = []
            while !r.isAtEnd {
                try r.require(length, "attribute data")
                let handle = try r.read(UInt16.self, "attribute handle")
                let stop = try r.read(UInt16.self, "end group handle")
                entries.append(ATTGroupValue(handle: handle, endGroupHandle: stop, value: try r.readBytes(length - 4, "value")))
            }
            return .readByGroupTypeResponse(entries)
        case .writeRequest, .writeCommand, .handleValueNotification, .handleValueIndication:
            let handle = try r.read(UInt16.self, "attribute handle")
            let value = r.readRemaining()
            switch op {
            case .writeRequest: return .writeRequest(handle: handle, value: value)
            case .writeCommand: return .writeCommand(handle: handle, value: value)
            case .handleValueNotification: return .handleValueNotification(handle: handle, value: value)
            default: return .handleValueIndication(handle: handle, value: value)
            }
        case .writeResponse:
            return try end(.writeResponse, r)
        case .signedWriteCommand:
            let handle = try r.read(UInt16.self, "attribute handle")
            try r.require(12, "authentication signature")
            let value = try r.readBytes(r.remaining - 12, "value")
            return .signedWriteCommand(handle: handle, value: value, signature: try r.readBytes(12, "authentication signature"))
        case .prepareWriteRequest, .prepareWriteResponse:
            let handle = try r.read(UInt16.self, "attribute handle")
            let offset = try r.read(UInt16.self, "value offset")
            let value = r.readRemaining()
            return op == .prepareWriteRequest
                ? .prepareWriteRequest(handle: handle, offset: offset, value: value)
                : .prepareWriteResponse(handle: handle, offset: offset, value: value)
        case .executeWriteRequest:
            let flags = try r.readUInt8("flags")
            return try end(.executeWriteRequest(flags: flags), r)
        case .executeWriteResponse:
            return try end(.executeWriteResponse, r)
        case .handleValueConfirmation:
            return try end(.handleValueConfirmation, r)
        default:
            return .unknown(opcode: op, parameters: r.readRemaining())
        }
    }
}
