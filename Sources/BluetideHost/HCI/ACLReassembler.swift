import BluetideHCI

/// Why incoming ACL data was dropped. Reported, never fatal: the link goes on.
public enum ACLReassemblyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A continuation fragment (PB 0b01) arrived with no PDU in progress on its handle.
    case continuationWithoutStart(handle: UInt16, bytes: Int)
    /// A PDU's L2CAP length says it is longer than the host accepts.
    case pduTooLong(handle: UInt16, length: Int, limit: Int)
    /// A new start arrived before the previous PDU on the handle was complete.
    case incompletePDUReplaced(handle: UInt16, received: Int, expected: Int)
    /// Fragments carried more bytes than the L2CAP length says.
    case excessBytes(handle: UInt16, received: Int, expected: Int)

    public var description: String {
        switch self {
        case let .continuationWithoutStart(handle, bytes):
            "ACL handle \(handle): dropped a \(bytes)-byte continuation fragment with no L2CAP PDU started"
        case let .pduTooLong(handle, length, limit):
            "ACL handle \(handle): dropped an L2CAP PDU of \(length) bytes, longer than the \(limit)-byte limit"
        case let .incompletePDUReplaced(handle, received, expected):
            "ACL handle \(handle): dropped an incomplete L2CAP PDU (\(received) of \(expected) bytes) when a new one started"
        case let .excessBytes(handle, received, expected):
            "ACL handle \(handle): dropped an L2CAP PDU whose fragments carried \(received) bytes, more than the \(expected) its header says"
        }
    }
}

/// What one incoming ACL packet produced: a complete L2CAP PDU, an error, both (an incomplete PDU
/// dropped by a new start that is itself complete), or neither (more fragments needed).
public struct ACLReassemblyOutput: Sendable, Equatable {
    /// A complete L2CAP PDU (basic header included) and its handle.
    public var pdu: (handle: UInt16, bytes: [UInt8])?
    /// Data dropped, and why.
    public var errors: [ACLReassemblyError] = []

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.errors == rhs.errors && lhs.pdu?.handle == rhs.pdu?.handle && lhs.pdu?.bytes == rhs.pdu?.bytes
    }
}

/// Rebuilds L2CAP PDUs from incoming ACL fragments, per connection handle, using the length in
/// the L2CAP basic header (`length u16 | channel id u16 | payload`, total = 4 + length).
///
/// Accepts a whole PDU in one ACL packet however long (Bumble's controller sends PDUs unfragmented
/// beyond its own buffer size) as well as fragments split anywhere, even inside the 4-byte header.
/// Bad input is dropped with an ``ACLReassemblyError``, never a trap.
public struct ACLReassembler: Sendable {
    /// The L2CAP basic header length.
    public static let basicHeaderLength = 4
    /// The longest PDU (header included) accepted; longer ones are dropped with an error.
    public let maximumPDULength: Int
    private var partial: [UInt16: [UInt8]] = [:]
    /// Handles whose current PDU was dropped as too long: their continuations are dropped quietly.
    private var discarding: Set<UInt16> = []

    /// `maximumPDULength` defaults to the largest L2CAP basic-mode PDU, 4 + 65535 bytes.
    public init(maximumPDULength: Int = 4 + 0xFFFF) {
        self.maximumPDULength = max(maximumPDULength, Self.basicHeaderLength)
    }

    /// Bytes collected for the PDU in progress on `handle` (0 when none).
    public func pendingBytes(on handle: UInt16) -> Int { partial[handle & 0x0FFF]?.count ?? 0 }

    /// Bytes collected for PDUs in progress on all handles together.
    public var pendingBytes: Int { partial.values.reduce(0) { $0 + $1.count } }

    /// Feeds one incoming ACL packet; other packet kinds give an empty output.
    public mutating func receive(_ packet: HCIPacket) -> ACLReassemblyOutput {
        guard case let .acl(handle, boundary, _, data) = packet else { return ACLReassemblyOutput() }
        return receive(handle: handle, boundary: boundary, data: data)
    }

    /// Feeds one ACL fragment.
    public mutating func receive(handle: UInt16, boundary: ACLBoundary, data: [UInt8]) -> ACLReassemblyOutput {
        let handle = handle & 0x0FFF
        var output = ACLReassemblyOutput()
        var buffer: [UInt8]
        if boundary.startsPDU {
            discarding.remove(handle)
            if let previous = partial.removeValue(forKey: handle) {
                output.errors.append(.incompletePDUReplaced(handle: handle, received: previous.count, expected: Self.expectedLength(previous) ?? 0))
            }
            buffer = data
        } else {
            guard let previous = partial.removeValue(forKey: handle) else {
                if discarding.contains(handle) { return output }  // rest of a PDU already reported
                output.errors.append(.continuationWithoutStart(handle: handle, bytes: data.count))
                return output
            }
            buffer = previous
            buffer.append(contentsOf: data)
        }
        guard let expected = Self.expectedLength(buffer) else {
            partial[handle] = buffer  // not even the length field yet
            return output
        }
        if expected > maximumPDULength {
            output.errors.append(.pduTooLong(handle: handle, length: expected, limit: maximumPDULength))
            if buffer.count < expected { discarding.insert(handle) }
            return output
        }
        if buffer.count < expected {
            partial[handle] = buffer
        } else if buffer.count == expected {
            output.pdu = (handle, buffer)
        } else {
            output.errors.append(.excessBytes(handle: handle, received: buffer.count, expected: expected))
        }
        return output
    }

    /// Drops the PDU in progress on `handle` (call on Disconnection Complete).
    public mutating func disconnected(_ handle: UInt16) {
        partial[handle & 0x0FFF] = nil
        discarding.remove(handle & 0x0FFF)
    }

    /// 4 + the L2CAP length field, or nil when fewer than 2 bytes are present.
    private static func expectedLength(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        return basicHeaderLength + (Int(bytes[0]) | Int(bytes[1]) << 8)
    }
}
