import BluetideBase

/// One decoded packet, ready for a person (``summary``) or a program (``value`` as JSON).
public struct DecodedPacket: Sendable {
    /// One readable line, e.g. `78 bpm, contact detected, RR 0.777 s 0.738 s`.
    public var summary: String
    /// The decoded value (a profile type), encoded as the packet's JSON fields.
    public var value: any Encodable & Sendable
    /// Values derived from this packet and the ones before it (speed, cadence, distance), if any.
    public var derived: (any Encodable & Sendable)?

    public init(summary: String, value: any Encodable & Sendable, derived: (any Encodable & Sendable)? = nil) {
        self.summary = summary
        self.value = value
        self.derived = derived
    }
}

/// Decodes successive packets of one profile. Stateless profiles ignore earlier packets;
/// stateful ones (CSC, Cycling Power, FE-C) derive rates from the sequence.
public protocol PacketDecoder: Sendable {
    /// Decodes one packet received at `time` (seconds on the caller's monotonic clock).
    mutating func decode(_ bytes: [UInt8], at time: Double) throws(DecodingError) -> DecodedPacket
}

/// Options that stateful decoders need from the user.
public struct ProfileOptions: Sendable {
    /// Wheel circumference in metres (CSC and Cycling Power speed and distance).
    public var wheelCircumference: Double
    public init(wheelCircumference: Double = 2.105) { self.wheelCircumference = wheelCircumference }
}

/// A profile that `bluetide decode` (and the recorders) can decode by name.
public struct ProfileDescriptor: Sendable {
    /// Command-line name, e.g. `heart-rate`.
    public let name: String
    /// What it decodes, e.g. `Heart Rate Measurement (0x2A37)`.
    public let summary: String
    /// The characteristic whose values it decodes, when there is one.
    public let characteristic: BluetoothUUID?
    /// Whether successive packets yield derived values.
    public let isStateful: Bool
    /// Makes a fresh decoder for one sequence of packets.
    public let makeDecoder: @Sendable (ProfileOptions) -> any PacketDecoder

    public init(
        name: String, summary: String, characteristic: BluetoothUUID?, isStateful: Bool = false,
        makeDecoder: @escaping @Sendable (ProfileOptions) -> any PacketDecoder
    ) {
        self.name = name
        self.summary = summary
        self.characteristic = characteristic
        self.isStateful = isStateful
        self.makeDecoder = makeDecoder
    }
}

/// A decoder for stateless profiles: one closure from bytes to a packet.
public struct StatelessDecoder: PacketDecoder {
    let body: @Sendable ([UInt8]) throws(DecodingError) -> DecodedPacket
    public init(_ body: @escaping @Sendable ([UInt8]) throws(DecodingError) -> DecodedPacket) { self.body = body }
    public mutating func decode(_ bytes: [UInt8], at time: Double) throws(DecodingError) -> DecodedPacket {
        try body(bytes)
    }
}

/// Every profile Bluetide can decode by name.
public enum ProfileCatalog {
    /// All profiles, sorted by name.
    public static let all: [ProfileDescriptor] =
        (fitnessProfiles + trainerProfiles + deviceProfiles).sorted { $0.name < $1.name }

    /// The profile with this command-line name.
    public static func named(_ name: String) -> ProfileDescriptor? {
        all.first { $0.name == name.lowercased() }
    }

    /// The profile that decodes values of this characteristic.
    public static func forCharacteristic(_ uuid: BluetoothUUID) -> ProfileDescriptor? {
        all.first { $0.characteristic == uuid }
    }
}
