import BluetideBase

/// The device file `bluetide clone` writes (`device.json`) and `bluetide emulate --from` serves:
/// every GATT server reconstructed from a capture. The schema is documented in docs/clone.md;
/// handles are the captured device's, values are lower-case hex, times are seconds.
///
/// Its parts are plain values made by the analysis (with their memberwise initialisers, inside
/// this module) and read back from JSON (`Codable`) everywhere else.
public struct CloneDocument: Codable, Sendable, Equatable {
    /// Always ``formatName``.
    public var format: String
    /// Schema version, ``currentVersion``.
    public var version: Int
    /// Where the clone came from.
    public var source: CloneSource
    /// Every GATT server seen (the device first, usually the only one), most traffic first.
    public var devices: [ClonedDevice]
    /// Every LE connection of the capture, in order.
    public var connections: [CloneConnection]
    /// What the reader or the analysis skipped, and why.
    public var warnings: [String]

    /// `"bluetide-clone"`.
    public static let formatName = "bluetide-clone"
    /// The schema version this code writes and reads.
    public static let currentVersion = 1

    /// A document of the current format and version.
    public init(source: CloneSource, devices: [ClonedDevice], connections: [CloneConnection], warnings: [String]) {
        format = Self.formatName
        version = Self.currentVersion
        self.source = source
        self.devices = devices
        self.connections = connections
        self.warnings = warnings
    }
}

/// The capture a clone was made from.
public struct CloneSource: Codable, Sendable, Equatable {
    /// The capture's file name (no directory), or a label for in-memory captures.
    public var capture: String
    /// The format read, e.g. `btsnoop (datalink 1002 H4)`.
    public var format: String
    /// Records in the file.
    public var records: Int
    /// HCI packets kept.
    public var packets: Int
    /// Unix time of the first packet, microseconds (0 when the capture holds none).
    public var startUnixMicroseconds: Int64
    /// Seconds from the first packet to the last.
    public var durationSeconds: Double
}

/// One LE connection of the capture.
public struct CloneConnection: Codable, Sendable, Equatable {
    /// 1, 2, … in the order the connections started.
    public var number: Int
    /// HCI connection handle.
    public var handle: Int
    /// The capturing side's role: `central`, `peripheral`, or `unknown` (the capture began after the connection).
    public var localRole: String
    /// The peer's address (`C6:C5:C4:C3:C2:C1`), when the connection's start was captured.
    public var peer: String?
    /// `public` or `random`.
    public var peerAddressType: String?
    /// Seconds since the capture's first packet.
    public var start: Double
    /// When it ended (Disconnection Complete), seconds since the first packet; nil if still open.
    public var end: Double?
    /// Whether the link was encrypted (an Encryption Change turned it on). An HCI capture still
    /// shows the payloads: the controller encrypts below it.
    public var encrypted: Bool
    /// ATT PDUs followed.
    public var attPDUs: Int
    /// L2CAP payloads that could not be read (cut records, malformed PDUs).
    public var unreadablePDUs: Int
    /// The value log written for it (file name in the output directory), when written.
    public var valueLog: String?
}

/// One GATT server reconstructed from the capture: its identity, advertising, database and
/// behaviour (values read, notifications, writes and what answered them).
public struct ClonedDevice: Codable, Sendable, Equatable {
    /// Its address, or `local` / `connection-N` when the capture does not show it.
    public var address: String
    /// `public` or `random`, when known.
    public var addressType: String?
    /// The advertised or GAP device name, when seen.
    public var name: String?
    /// `remote` (the capturing phone's peer, the usual case) or `local` (the capturing side served GATT).
    public var side: String
    /// The role it had on its links: `peripheral`, `central` or `unknown`.
    public var role: String
    /// Its advertising, when seen.
    public var advertising: CloneAdvertising?
    /// Connection numbers (see ``CloneDocument/connections``) it served GATT on.
    public var connections: [Int]
    /// The largest ATT MTU agreed, octets.
    public var mtu: Int?
    /// The GATT database, services in handle order.
    public var services: [CloneService]
    /// Writes of the client with the notifications and indications that answered them, in
    /// capture order (the command→reply table).
    public var exchanges: [CloneExchange]
    /// Notifications and indications that answered no write, replayed by time.
    public var notifications: [CloneNotification]
    /// When the first client subscribed, seconds since the capture's first packet: timed
    /// notifications are replayed relative to it.
    public var playbackOrigin: Double?

    /// Every characteristic, in handle order.
    public var characteristics: [CloneCharacteristic] { services.flatMap(\.characteristics) }

    /// The characteristic whose value handle is `handle`.
    public func characteristic(valueHandle handle: Int) -> CloneCharacteristic? {
        characteristics.first { $0.valueHandle == handle }
    }
}

/// Advertising as captured: the last advertisement and scan response seen from the device.
public struct CloneAdvertising: Codable, Sendable, Equatable {
    /// The advertising data, hex.
    public var data: String
    /// The scan response data, hex, when one was seen.
    public var scanResponse: String?
    /// The local name in them.
    public var localName: String?
    /// The service UUIDs in them.
    public var serviceUUIDs: [BluetoothUUID]
    /// Whether it came from extended advertising reports (or extended advertising commands).
    public var extended: Bool
}

/// A service: from discovery, or inferred from handles used.
public struct CloneService: Codable, Sendable, Equatable {
    /// Its UUID (a Bluetide placeholder `B1DE0000-…` for an inferred service of unknown type).
    public var uuid: BluetoothUUID
    /// Its assigned name, when the UUID has one.
    public var name: String?
    /// Handle of its declaration.
    public var startHandle: Int
    /// Last handle of its group.
    public var endHandle: Int
    /// Primary (true) or secondary.
    public var primary: Bool
    /// True when the capture held no discovery of it (built from the handles used).
    public var inferred: Bool
    /// Its characteristics, in handle order.
    public var characteristics: [CloneCharacteristic]
}

/// A characteristic with what was seen of it.
public struct CloneCharacteristic: Codable, Sendable, Equatable {
    /// Its UUID (a placeholder `B1DE0000-…` ending in the handle when only the handle is known).
    public var uuid: BluetoothUUID
    /// Its assigned name, when the UUID has one.
    public var name: String?
    /// Handle of its declaration, when discovered.
    public var declarationHandle: Int?
    /// Handle of its value.
    public var valueHandle: Int
    /// Property names: `broadcast`, `read`, `write-without-response`, `write`, `notify`,
    /// `indicate`, `signed-write`, `extended-properties`.
    public var properties: [String]
    /// True when its declaration was not in the capture (properties from the operations seen).
    public var inferred: Bool
    /// The last value read, hex.
    public var value: String?
    /// Its descriptors (CCCD and others) seen.
    public var descriptors: [CloneDescriptor]
    /// How often each operation was seen.
    public var counts: CloneCounts
}

/// A descriptor seen (by discovery, a read or a write).
public struct CloneDescriptor: Codable, Sendable, Equatable {
    /// Its handle.
    public var handle: Int
    /// Its type (0x2902 for a CCCD inferred from a subscription write).
    public var uuid: BluetoothUUID
    /// Its assigned name.
    public var name: String?
    /// The last value read or written, hex.
    public var value: String?
}

/// Operation counts of one characteristic.
public struct CloneCounts: Codable, Sendable, Equatable {
    public var reads = 0
    public var writes = 0
    public var writesWithoutResponse = 0
    public var notifications = 0
    public var indications = 0
}

/// A notification or indication replayed by time.
public struct CloneNotification: Codable, Sendable, Equatable {
    /// Seconds since the capture's first packet.
    public var t: Double
    /// The connection it was sent on.
    public var connection: Int
    /// The value handle.
    public var handle: Int
    /// The value, hex.
    public var value: String
    /// Indication (true) or notification.
    public var indication: Bool
}

/// A client write and what the server sent in answer (until the next write, with no gap longer
/// than the reply window).
public struct CloneExchange: Codable, Sendable, Equatable {
    /// Seconds since the capture's first packet.
    public var t: Double
    /// The connection.
    public var connection: Int
    /// The handle written.
    public var handle: Int
    /// The bytes written, hex.
    public var value: String
    /// Write Request (true) or Write Command.
    public var withResponse: Bool
    /// The answers, in order.
    public var replies: [CloneReply]
}

/// One notification or indication answering a write.
public struct CloneReply: Codable, Sendable, Equatable {
    /// Seconds after the write.
    public var delay: Double
    /// The value handle it was sent on.
    public var handle: Int
    /// The value, hex.
    public var value: String
    /// Indication (true) or notification.
    public var indication: Bool
}
