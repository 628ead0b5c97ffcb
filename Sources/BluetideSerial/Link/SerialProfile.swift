import Bluetide

/// Where a device's serial data lives: the service, the characteristic the central writes to,
/// the one the device notifies on, and how big one write may be.
public struct SerialProfile: Sendable, Hashable, CustomStringConvertible {
    /// The known kinds of BLE serial bridge.
    public enum Kind: String, Sendable, Hashable {
        /// HM-10 (and clones): service FFE0, one characteristic FFE1 both ways, 20-byte writes.
        case hm10
        /// Nordic UART Service: RX (write) and TX (notify) characteristics, MTU − 3 bytes per write.
        case nordicUART = "nus"
        /// Service and characteristics named by the user.
        case custom
    }

    /// Which bridge this is.
    public var kind: Kind
    /// The serial service.
    public var service: BluetoothUUID
    /// The characteristic the central writes outgoing bytes to.
    public var write: BluetoothUUID
    /// The characteristic the device notifies incoming bytes on.
    public var notify: BluetoothUUID
    /// A fixed bound on one write, bytes (HM-10: 20, whatever MTU was negotiated); nil means
    /// ATT MTU − 3 (at most 512).
    public var fixedChunkSize: Int?

    /// A profile; see each property.
    public init(kind: Kind, service: BluetoothUUID, write: BluetoothUUID, notify: BluetoothUUID, fixedChunkSize: Int? = nil) {
        self.kind = kind
        self.service = service
        self.write = write
        self.notify = notify
        self.fixedChunkSize = fixedChunkSize
    }

    /// HM-10: FFE0 / FFE1, writes of at most 20 bytes (old firmware keeps ATT MTU 23).
    public static let hm10 = SerialProfile(
        kind: .hm10, service: SerialUUID.hm10Service, write: SerialUUID.hm10Data, notify: SerialUUID.hm10Data,
        fixedChunkSize: SerialChunker.defaultMaxChunkSize)

    /// Nordic UART Service: 6E400001, RX 6E400002 (write), TX 6E400003 (notify), MTU − 3 per write.
    public static let nordicUART = SerialProfile(
        kind: .nordicUART, service: SerialUUID.nordicUARTService, write: SerialUUID.nordicUARTRX, notify: SerialUUID.nordicUARTTX)

    /// The services that mark a device as UART-capable in its advertising.
    public static let advertisedServices: [BluetoothUUID] = [SerialUUID.hm10Service, SerialUUID.nordicUARTService]

    /// The bytes one write carries on a link with ATT MTU `mtu`.
    public func chunkSize(mtu: Int) -> Int {
        let byMTU = min(max(mtu - 3, 1), SerialChunker.maximumAttributeLength)
        return fixedChunkSize.map { min($0, byMTU) } ?? byMTU
    }

    /// "HM-10 (FFE0: write FFE1, notify FFE1)".
    public var description: String {
        let label = switch kind {
        case .hm10: "HM-10"
        case .nordicUART: "Nordic UART"
        case .custom: "custom"
        }
        // Nordic UART's UUIDs differ only in their first 8 digits, which people quote alone.
        let name = { (uuid: BluetoothUUID) in kind == .nordicUART ? String(Self.short(uuid).prefix(8)) : Self.short(uuid) }
        return "\(label) (\(name(service)): write \(name(write)), notify \(name(notify)))"
    }

    /// A UUID as people write it: 4 hex digits for a 16-bit one, else the full 128-bit form.
    public static func short(_ uuid: BluetoothUUID) -> String {
        uuid.uuid16.map { String(hex4: $0) } ?? uuid.uuidString
    }

    /// Finds the serial profile among a device's discovered services: `explicit` when given
    /// (checked against what the device has), else Nordic UART, then HM-10. Throws
    /// ``SerialLinkError/noUARTService(device:services:)`` listing the services when none fits.
    public static func detect(in services: [GATTRemoteService], explicit: SerialProfile? = nil, device: String) throws -> SerialProfile {
        let characteristics = services.flatMap { service in service.characteristics.map { (service.service.uuid, $0.characteristic) } }
        func has(_ uuid: BluetoothUUID, _ wanted: GATTCharacteristicProperties) -> Bool {
            characteristics.contains { $0.1.uuid == uuid && !$0.1.properties.isDisjoint(with: wanted) }
        }
        let writable: GATTCharacteristicProperties = [.write, .writeWithoutResponse]
        let notifying: GATTCharacteristicProperties = [.notify, .indicate]
        if let explicit {
            guard has(explicit.write, writable), has(explicit.notify, notifying) else {
                throw SerialLinkError.noUARTService(device: device, services: summary(services))
            }
            return explicit
        }
        for candidate in [nordicUART, hm10] where services.contains(where: { $0.service.uuid == candidate.service })
            && has(candidate.write, writable) && has(candidate.notify, notifying) {
            return candidate
        }
        throw SerialLinkError.noUARTService(device: device, services: summary(services))
    }

    /// "FFE0 [FFE1 read/write-without-response/notify]" for each service: what an error lists.
    static func summary(_ services: [GATTRemoteService]) -> [String] {
        services.map { service in
            let characteristics = service.characteristics.map { c in
                "\(short(c.characteristic.uuid)) \(propertyWords(c.characteristic.properties))"
            }
            return "\(short(service.service.uuid)) [\(characteristics.joined(separator: ", "))]"
        }
    }

    static func propertyWords(_ properties: GATTCharacteristicProperties) -> String {
        let words: [(GATTCharacteristicProperties, String)] = [
            (.read, "read"), (.write, "write"), (.writeWithoutResponse, "write-without-response"),
            (.notify, "notify"), (.indicate, "indicate"),
        ]
        return words.filter { properties.contains($0.0) }.map(\.1).joined(separator: "/")
    }
}

extension String {
    /// Four upper-case hex digits.
    init(hex4 value: UInt16) {
        let digits = Array("0123456789ABCDEF")
        self = String([12, 8, 4, 0].map { digits[Int((value >> UInt16($0)) & 0xF)] })
    }
}
