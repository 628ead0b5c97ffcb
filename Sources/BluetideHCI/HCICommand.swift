import BluetideBase

/// How the controller answers a command.
public enum HCICommandCompletion: Sendable {
    /// With Command Complete, carrying the return parameters.
    case commandComplete
    /// With Command Status, then later a completion event of its own.
    case commandStatus
}

/// A typed HCI command: its opcode, its parameters, and the return parameters its Command
/// Complete event carries. The host encodes commands and decodes returns; a controller does the
/// reverse, so both directions are implemented by every command.
public protocol HCICommand: HCIParameters {
    /// The type of the Command Complete return parameters.
    associatedtype ReturnParameters: HCIReturnParameters = HCIStatusReturn
    /// The command's opcode.
    static var opcode: HCIOpcode { get }
    /// The specification's name, for logs (`"LE Set Scan Enable"`).
    static var name: String { get }
    /// Whether the controller answers with Command Complete or Command Status.
    static var completion: HCICommandCompletion { get }
}

extension HCICommand {
    public static var completion: HCICommandCompletion { .commandComplete }

    /// The command as an HCI packet, ready for a transport.
    public var packet: HCIPacket { .command(opcode: Self.opcode, parameters: parameterBytes) }

    /// Decodes the command from a packet; throws when the packet is not this command.
    public init(packet: HCIPacket) throws(DecodingError) {
        guard case let .command(opcode, parameters) = packet else {
            throw .invalid("\(Self.name) packet", expected: "an HCI command packet", found: "packet type \(packet.h4Type)")
        }
        guard opcode == Self.opcode else {
            throw .invalid("\(Self.name) opcode", expected: Self.opcode.description, found: opcode.description)
        }
        do { try self.init(parameters: parameters) } catch { throw error.within(Self.name) }
    }
}

/// Commands whose parameters are empty.
public protocol HCIParameterlessCommand: HCICommand {
    init()
}

extension HCIParameterlessCommand {
    public init(from reader: inout ByteReader) throws(DecodingError) { self.init() }
    public func encode(to writer: inout ByteWriter) {}
}

extension HCIOpcode {
    /// The opcode 0x0000, used by a Command Complete that only returns command credits.
    public static let noOperation = HCIOpcode(rawValue: 0x0000)
}
