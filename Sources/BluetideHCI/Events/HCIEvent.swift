import BluetideBase

/// Parameters of one HCI event code.
public protocol HCIEventParameters: HCIParameters {
    /// The event code.
    static var eventCode: UInt8 { get }
}

extension HCIEventParameters {
    /// The event as an HCI packet.
    public var packet: HCIPacket { .event(code: Self.eventCode, parameters: parameterBytes) }
}

/// An HCI event as an LE host needs it, decoded from (or encoded to) event code and parameters.
///
/// Events this library does not model, and LE subevents it does not model, decode to
/// ``unknown(code:parameters:)`` / ``LEMetaEvent/unknown(subevent:parameters:)``: an unknown
/// event is never an error. A known event with short parameters throws ``DecodingError``.
public enum HCIEvent: Sendable, Equatable {
    case disconnectionComplete(HCIDisconnectionComplete)
    case encryptionChange(HCIEncryptionChange)
    case commandComplete(HCICommandComplete)
    case commandStatus(HCICommandStatus)
    case numberOfCompletedPackets(HCINumberOfCompletedPackets)
    /// LE Meta event (0x3E) with its subevent.
    case leMeta(LEMetaEvent)
    /// Any other event, kept as raw bytes.
    case unknown(code: UInt8, parameters: [UInt8])

    /// Event codes.
    public static let disconnectionCompleteCode: UInt8 = 0x05
    /// Event code of Encryption Change.
    public static let encryptionChangeCode: UInt8 = 0x08
    /// Event code of Command Complete.
    public static let commandCompleteCode: UInt8 = 0x0E
    /// Event code of Command Status.
    public static let commandStatusCode: UInt8 = 0x0F
    /// Event code of Number Of Completed Packets.
    public static let numberOfCompletedPacketsCode: UInt8 = 0x13
    /// Event code of LE Meta events.
    public static let leMetaCode: UInt8 = 0x3E

    /// Decodes an event from its code and parameter bytes.
    public init(code: UInt8, parameters: [UInt8]) throws(DecodingError) {
        do {
            switch code {
            case Self.disconnectionCompleteCode: self = .disconnectionComplete(try .init(parameters: parameters))
            case Self.encryptionChangeCode: self = .encryptionChange(try .init(parameters: parameters))
            case Self.commandCompleteCode: self = .commandComplete(try .init(parameters: parameters))
            case Self.commandStatusCode: self = .commandStatus(try .init(parameters: parameters))
            case Self.numberOfCompletedPacketsCode: self = .numberOfCompletedPackets(try .init(parameters: parameters))
            case Self.leMetaCode: self = .leMeta(try LEMetaEvent(parameters: parameters))
            default: self = .unknown(code: code, parameters: parameters)
            }
        } catch {
            throw error.within(Self.name(code: code))
        }
    }

    /// Decodes an event packet; returns nil for packets that are not events (ACL and others).
    public init?(packet: HCIPacket) throws(DecodingError) {
        guard case let .event(code, parameters) = packet else { return nil }
        try self.init(code: code, parameters: parameters)
    }

    /// The event code.
    public var code: UInt8 {
        switch self {
        case .disconnectionComplete: Self.disconnectionCompleteCode
        case .encryptionChange: Self.encryptionChangeCode
        case .commandComplete: Self.commandCompleteCode
        case .commandStatus: Self.commandStatusCode
        case .numberOfCompletedPackets: Self.numberOfCompletedPacketsCode
        case .leMeta: Self.leMetaCode
        case let .unknown(code, _): code
        }
    }

    /// The encoded parameter bytes.
    public var parameters: [UInt8] {
        switch self {
        case let .disconnectionComplete(e): e.parameterBytes
        case let .encryptionChange(e): e.parameterBytes
        case let .commandComplete(e): e.parameterBytes
        case let .commandStatus(e): e.parameterBytes
        case let .numberOfCompletedPackets(e): e.parameterBytes
        case let .leMeta(e): e.parameterBytes
        case let .unknown(_, parameters): parameters
        }
    }

    /// The event as an HCI packet.
    public var packet: HCIPacket { .event(code: code, parameters: parameters) }

    /// The specification's name of an event code, for logs and error context.
    public static func name(code: UInt8) -> String {
        switch code {
        case 0x05: "Disconnection Complete"
        case 0x08: "Encryption Change"
        case 0x0E: "Command Complete"
        case 0x0F: "Command Status"
        case 0x10: "Hardware Error"
        case 0x13: "Number Of Completed Packets"
        case 0x1A: "Data Buffer Overflow"
        case 0x30: "Encryption Key Refresh Complete"
        case 0x3E: "LE Meta"
        case 0x57: "Authenticated Payload Timeout Expired"
        case 0x59: "Encryption Change v2"
        default: "HCI event 0x" + (code < 0x10 ? "0" : "") + String(code, radix: 16, uppercase: true)
        }
    }
}

/// Command Complete (0x0E): a command finished; carries its return parameters and how many
/// more commands the controller accepts now.
public struct HCICommandComplete: HCIEventParameters, Equatable {
    public static let eventCode: UInt8 = 0x0E
    /// Commands the host may send now (command credits).
    public var numHCICommandPackets: UInt8
    /// The command this completes (0x0000 = credits only).
    public var opcode: HCIOpcode
    /// The raw return parameters; decode with ``decodeReturn(_:)``.
    public var returnParameters: [UInt8]

    public init(numHCICommandPackets: UInt8 = 1, opcode: HCIOpcode, returnParameters: [UInt8]) {
        self.numHCICommandPackets = numHCICommandPackets
        self.opcode = opcode
        self.returnParameters = returnParameters
    }

    /// A Command Complete for `command` with typed return parameters.
    public init<C: HCICommand>(_ command: C.Type, numHCICommandPackets: UInt8 = 1, returning value: C.ReturnParameters) {
        self.init(numHCICommandPackets: numHCICommandPackets, opcode: C.opcode, returnParameters: value.parameterBytes)
    }

    /// A Command Complete that carries only a status (how controllers answer unknown commands).
    public init(numHCICommandPackets: UInt8 = 1, opcode: HCIOpcode, status: HCIStatus) {
        self.init(numHCICommandPackets: numHCICommandPackets, opcode: opcode, returnParameters: [status.rawValue])
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        numHCICommandPackets = try reader.readUInt8("num HCI command packets")
        opcode = HCIOpcode(rawValue: try reader.read(UInt16.self, "command opcode"))
        returnParameters = reader.readRemaining()
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(numHCICommandPackets)
        writer.write(opcode.rawValue)
        writer.write(bytes: returnParameters)
    }

    /// The first return byte, which is the status for every command this library models;
    /// nil when there are no return parameters (the no-op opcode).
    public var status: HCIStatus? { returnParameters.first.map(HCIStatus.init(rawValue:)) }

    /// Decodes the return parameters as `command`'s; throws when the opcode differs or the
    /// bytes are short. Check ``status`` first: on failure controllers may send the status alone.
    public func decodeReturn<C: HCICommand>(_ command: C.Type) throws(DecodingError) -> C.ReturnParameters {
        guard opcode == C.opcode else {
            throw .invalid("Command Complete opcode", expected: "\(C.opcode) (\(C.name))", found: opcode.description)
        }
        do { return try C.ReturnParameters(parameters: returnParameters) } catch { throw error.within("\(C.name) return") }
    }
}

/// Command Status (0x0F): a command was accepted (or refused) and will complete with its own event.
public struct HCICommandStatus: HCIEventParameters, HCIFieldTable, Equatable {
    public static let eventCode: UInt8 = 0x0F
    /// Outcome (0x00 success).
    public var status: HCIStatus
    /// Commands the host may send now (command credits).
    public var numHCICommandPackets: UInt8
    public var opcode: HCIOpcode
    public init(status: HCIStatus, numHCICommandPackets: UInt8 = 1, opcode: HCIOpcode) {
        self.status = status
        self.numHCICommandPackets = numHCICommandPackets
        self.opcode = opcode
    }
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .integer(\.numHCICommandPackets, "num HCI command packets"),
        .raw(\.opcode, "command opcode"),
    ]
    public static let blank = Self(status: .success, opcode: HCIOpcode(rawValue: 0))
}

/// Disconnection Complete (0x05): a connection ended (or a Disconnect failed, when status ≠ 0).
public struct HCIDisconnectionComplete: HCIEventParameters, HCIFieldTable, Equatable {
    public static let eventCode: UInt8 = 0x05
    /// Outcome (0x00 success).
    public var status: HCIStatus
    /// Connection handle (12 bits).
    public var handle: UInt16
    /// Why the connection ended (e.g. 0x08 timeout, 0x13 remote user, 0x16 local host).
    public var reason: HCIStatus
    public init(status: HCIStatus = .success, handle: UInt16, reason: HCIStatus) {
        self.status = status
        self.handle = handle
        self.reason = reason
    }
    public static let fields: [HCIField<Self>] = [.status(\.status), .handle(\.handle), .status(\.reason, "reason")]
    public static let blank = Self(handle: 0, reason: .success)
}

/// Encryption Change v1 (0x08): encryption of a connection was switched on or off.
public struct HCIEncryptionChange: HCIEventParameters, HCIFieldTable, Equatable {
    public static let eventCode: UInt8 = 0x08
    /// Outcome (0x00 success).
    public var status: HCIStatus
    /// Connection handle (12 bits).
    public var handle: UInt16
    /// 0 off, 1 on (AES-CCM on LE).
    public var encryptionEnabled: UInt8
    public init(status: HCIStatus = .success, handle: UInt16, encryptionEnabled: UInt8) {
        self.status = status
        self.handle = handle
        self.encryptionEnabled = encryptionEnabled
    }
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .integer(\.encryptionEnabled, "encryption enabled"),
    ]
    public static let blank = Self(handle: 0, encryptionEnabled: 0)
}

/// Number Of Completed Packets (0x13): ACL buffers freed per connection handle (the host's
/// send credits come back). Pairs are interleaved on the wire: handle, count, handle, count...
public struct HCINumberOfCompletedPackets: HCIEventParameters, Equatable {
    public static let eventCode: UInt8 = 0x13

    /// One handle and the number of its packets completed since the last event.
    public struct Entry: Hashable, Sendable {
        /// Connection handle (12 bits).
        public var handle: UInt16
        /// Packets of this handle completed since the last event.
        public var completedPackets: UInt16
        public init(handle: UInt16, completedPackets: UInt16) {
            self.handle = handle
            self.completedPackets = completedPackets
        }
    }

    /// One entry per connection handle.
    public var entries: [Entry]
    public init(entries: [Entry]) { self.entries = entries }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let count = try reader.readUInt8("number of handles")
        try reader.require(Int(count) * 4, "handle/count pairs")
        var entries: [Entry] = []
        for _ in 0..<count {
            let handle = try reader.readHandle()
            let completed = try reader.read(UInt16.self, "num completed packets")
            entries.append(Entry(handle: handle, completedPackets: completed))
        }
        self.entries = entries
    }

    public func encode(to writer: inout ByteWriter) {
        let kept = entries.prefix(63)
        writer.write(UInt8(kept.count))
        for entry in kept {
            writer.write(entry.handle)
            writer.write(entry.completedPackets)
        }
    }
}
