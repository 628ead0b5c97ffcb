import BluetideBase

/// Parameters of one LE Meta subevent (after the subevent code byte).
public protocol LEMetaSubevent: HCIParameters {
    static var subeventCode: UInt8 { get }
}

extension LEMetaSubevent {
    /// The subevent wrapped in an LE Meta event packet.
    public var packet: HCIPacket { .event(code: HCIEvent.leMetaCode, parameters: [Self.subeventCode] + parameterBytes) }
}

/// An LE Meta event (0x3E): the first parameter byte is the subevent code.
public enum LEMetaEvent: Sendable, Equatable {
    case connectionComplete(LEConnectionComplete)
    case advertisingReport(LEAdvertisingReport)
    case connectionUpdateComplete(LEConnectionUpdateComplete)
    case readRemoteFeaturesComplete(LEReadRemoteFeaturesComplete)
    case longTermKeyRequest(LELongTermKeyRequest)
    case dataLengthChange(LEDataLengthChange)
    case enhancedConnectionComplete(LEEnhancedConnectionComplete)
    case phyUpdateComplete(LEPHYUpdateComplete)
    case extendedAdvertisingReport(LEExtendedAdvertisingReport)
    case advertisingSetTerminated(LEAdvertisingSetTerminated)
    /// Any other subevent, kept as raw bytes (after the subevent code).
    case unknown(subevent: UInt8, parameters: [UInt8])

    /// Decodes the LE Meta parameters (subevent code first).
    public init(parameters: [UInt8]) throws(DecodingError) {
        var reader = ByteReader(parameters)
        let code = try reader.readUInt8("subevent code")
        let rest = reader.readRemaining()
        do {
            switch code {
            case LEConnectionComplete.subeventCode: self = .connectionComplete(try .init(parameters: rest))
            case LEAdvertisingReport.subeventCode: self = .advertisingReport(try .init(parameters: rest))
            case LEConnectionUpdateComplete.subeventCode: self = .connectionUpdateComplete(try .init(parameters: rest))
            case LEReadRemoteFeaturesComplete.subeventCode: self = .readRemoteFeaturesComplete(try .init(parameters: rest))
            case LELongTermKeyRequest.subeventCode: self = .longTermKeyRequest(try .init(parameters: rest))
            case LEDataLengthChange.subeventCode: self = .dataLengthChange(try .init(parameters: rest))
            case LEEnhancedConnectionComplete.subeventCode: self = .enhancedConnectionComplete(try .init(parameters: rest))
            case LEPHYUpdateComplete.subeventCode: self = .phyUpdateComplete(try .init(parameters: rest))
            case LEExtendedAdvertisingReport.subeventCode: self = .extendedAdvertisingReport(try .init(parameters: rest))
            case LEAdvertisingSetTerminated.subeventCode: self = .advertisingSetTerminated(try .init(parameters: rest))
            default: self = .unknown(subevent: code, parameters: rest)
            }
        } catch {
            throw error.within(Self.name(subevent: code))
        }
    }

    /// The subevent code.
    public var subeventCode: UInt8 {
        switch self {
        case .connectionComplete: LEConnectionComplete.subeventCode
        case .advertisingReport: LEAdvertisingReport.subeventCode
        case .connectionUpdateComplete: LEConnectionUpdateComplete.subeventCode
        case .readRemoteFeaturesComplete: LEReadRemoteFeaturesComplete.subeventCode
        case .longTermKeyRequest: LELongTermKeyRequest.subeventCode
        case .dataLengthChange: LEDataLengthChange.subeventCode
        case .enhancedConnectionComplete: LEEnhancedConnectionComplete.subeventCode
        case .phyUpdateComplete: LEPHYUpdateComplete.subeventCode
        case .extendedAdvertisingReport: LEExtendedAdvertisingReport.subeventCode
        case .advertisingSetTerminated: LEAdvertisingSetTerminated.subeventCode
        case let .unknown(code, _): code
        }
    }

    /// The LE Meta parameters: subevent code, then the subevent's fields.
    public var parameterBytes: [UInt8] {
        let body: [UInt8] = switch self {
        case let .connectionComplete(e): e.parameterBytes
        case let .advertisingReport(e): e.parameterBytes
        case let .connectionUpdateComplete(e): e.parameterBytes
        case let .readRemoteFeaturesComplete(e): e.parameterBytes
        case let .longTermKeyRequest(e): e.parameterBytes
        case let .dataLengthChange(e): e.parameterBytes
        case let .enhancedConnectionComplete(e): e.parameterBytes
        case let .phyUpdateComplete(e): e.parameterBytes
        case let .extendedAdvertisingReport(e): e.parameterBytes
        case let .advertisingSetTerminated(e): e.parameterBytes
        case let .unknown(_, parameters): parameters
        }
        return [subeventCode] + body
    }

    /// The specification's name of a subevent code.
    public static func name(subevent code: UInt8) -> String {
        switch code {
        case 0x01: "LE Connection Complete"
        case 0x02: "LE Advertising Report"
        case 0x03: "LE Connection Update Complete"
        case 0x04: "LE Read Remote Features Complete"
        case 0x05: "LE Long Term Key Request"
        case 0x06: "LE Remote Connection Parameter Request"
        case 0x07: "LE Data Length Change"
        case 0x0A: "LE Enhanced Connection Complete"
        case 0x0C: "LE PHY Update Complete"
        case 0x0D: "LE Extended Advertising Report"
        case 0x12: "LE Advertising Set Terminated"
        case 0x14: "LE Channel Selection Algorithm"
        default: "LE subevent 0x" + (code < 0x10 ? "0" : "") + String(code, radix: 16, uppercase: true)
        }
    }
}

/// LE Connection Complete (subevent 0x01).
public struct LEConnectionComplete: LEMetaSubevent, HCIFieldTable, Equatable {
    public static let subeventCode: UInt8 = 0x01
    /// Outcome (0x00 success).
    public var status: HCIStatus
    /// Connection handle (12 bits).
    public var handle: UInt16
    /// Whether this side is the central or the peripheral.
    public var role: HCIRole
    /// The peer address type as sent (0 public, 1 random, 2/3 identity addresses).
    public var peerAddressType: LEAddressType
    /// The peer's device address (its type follows the peer address type).
    public var peerAddress: BluetoothAddress
    /// Connection interval, 1.25 ms units.
    public var interval: UInt16
    /// Peripheral latency, connection events.
    public var latency: UInt16
    /// Supervision timeout, 10 ms units.
    public var supervisionTimeout: UInt16
    /// Central clock accuracy code (0 = 500 ppm ... 7 = 20 ppm).
    public var centralClockAccuracy: UInt8

    public init(status: HCIStatus = .success, handle: UInt16, role: HCIRole, peerAddress: BluetoothAddress,
                interval: UInt16, latency: UInt16, supervisionTimeout: UInt16, centralClockAccuracy: UInt8 = 0) {
        self.status = status
        self.handle = handle
        self.role = role
        self.peerAddressType = LEAddressType(peerAddress.type)
        self.peerAddress = peerAddress
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
        self.centralClockAccuracy = centralClockAccuracy
    }
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .raw(\.role, "role"), .raw(\.peerAddressType, "peer address type"),
        .address(\.peerAddress, "peer address", typeFrom: \.peerAddressType),
        .integer(\.interval, "connection interval"), .integer(\.latency, "peripheral latency"),
        .integer(\.supervisionTimeout, "supervision timeout"),
        .integer(\.centralClockAccuracy, "central clock accuracy"),
    ]
    public static let blank = Self(handle: 0, role: .central, peerAddress: BluetoothAddress(value: 0, type: .public), interval: 0, latency: 0, supervisionTimeout: 0)
}

/// LE Enhanced Connection Complete v1 (subevent 0x0A): LE Connection Complete plus the
/// resolvable private addresses in use.
public struct LEEnhancedConnectionComplete: LEMetaSubevent, HCIFieldTable, Equatable {
    public static let subeventCode: UInt8 = 0x0A
    /// Outcome (0x00 success).
    public var status: HCIStatus
    /// Connection handle (12 bits).
    public var handle: UInt16
    /// Whether this side is the central or the peripheral.
    public var role: HCIRole
    /// 0-3: public, random, public identity, random identity.
    public var peerAddressType: LEAddressType
    /// The peer's device address (its type follows the peer address type).
    public var peerAddress: BluetoothAddress
    /// Our resolvable private address for this connection (all zero when none).
    public var localResolvablePrivateAddress: BluetoothAddress
    /// The peer's resolvable private address (all zero when none).
    public var peerResolvablePrivateAddress: BluetoothAddress
    /// Connection interval, 1.25 ms units.
    public var interval: UInt16
    /// Peripheral latency, connection events.
    public var latency: UInt16
    /// Supervision timeout, 10 ms units.
    public var supervisionTimeout: UInt16
    /// Central clock accuracy code (0 = 500 ppm ... 7 = 20 ppm).
    public var centralClockAccuracy: UInt8

    public init(status: HCIStatus = .success, handle: UInt16, role: HCIRole, peerAddressType: LEAddressType,
                peerAddress: BluetoothAddress,
                localResolvablePrivateAddress: BluetoothAddress = BluetoothAddress(value: 0, type: .random),
                peerResolvablePrivateAddress: BluetoothAddress = BluetoothAddress(value: 0, type: .random),
                interval: UInt16, latency: UInt16, supervisionTimeout: UInt16, centralClockAccuracy: UInt8 = 0) {
        self.status = status
        self.handle = handle
        self.role = role
        self.peerAddressType = peerAddressType
        self.peerAddress = BluetoothAddress(value: peerAddress.value, type: peerAddressType.addressType)
        self.localResolvablePrivateAddress = localResolvablePrivateAddress
        self.peerResolvablePrivateAddress = peerResolvablePrivateAddress
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
        self.centralClockAccuracy = centralClockAccuracy
    }
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .raw(\.role, "role"), .raw(\.peerAddressType, "peer address type"),
        .address(\.peerAddress, "peer address", typeFrom: \.peerAddressType),
        .address(\.localResolvablePrivateAddress, "local resolvable private address", type: .random),
        .address(\.peerResolvablePrivateAddress, "peer resolvable private address", type: .random),
        .integer(\.interval, "connection interval"), .integer(\.latency, "peripheral latency"),
        .integer(\.supervisionTimeout, "supervision timeout"),
        .integer(\.centralClockAccuracy, "central clock accuracy"),
    ]
    public static let blank = Self(handle: 0, role: .central, peerAddressType: .public, peerAddress: BluetoothAddress(value: 0, type: .public), interval: 0, latency: 0, supervisionTimeout: 0)
}

/// The PDU type of a legacy advertising report.
public struct LEAdvertisingReportType: RawRepresentable, Hashable, Sendable {
    /// The value as sent over HCI.
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// ADV_IND: connectable, scannable.
    public static let advInd = LEAdvertisingReportType(rawValue: 0)
    /// ADV_DIRECT_IND: connectable, directed.
    public static let advDirectInd = LEAdvertisingReportType(rawValue: 1)
    /// ADV_SCAN_IND: scannable only.
    public static let advScanInd = LEAdvertisingReportType(rawValue: 2)
    /// ADV_NONCONN_IND: neither.
    public static let advNonconnInd = LEAdvertisingReportType(rawValue: 3)
    /// SCAN_RSP: the scan response to an active scan.
    public static let scanResponse = LEAdvertisingReportType(rawValue: 4)
}

/// LE Advertising Report (subevent 0x02): one or more legacy advertising reports. Each report
/// is laid out in turn (type, address type, address, data length, data, RSSI).
public struct LEAdvertisingReport: LEMetaSubevent, HCIFieldTable, Equatable {
    public static let subeventCode: UInt8 = 0x02

    /// One received advertising or scan response PDU.
    public struct Report: HCIFieldTable, Hashable, Sendable {
        /// The kind of PDU reported.
        public var eventType: LEAdvertisingReportType
        /// Address type as sent (0 public, 1 random, 2/3 identity, 0xFF anonymous).
        public var addressType: LEAddressType
        /// The device address.
        public var address: BluetoothAddress
        /// AD structures, at most 31 bytes.
        public var data: [UInt8]
        /// Signal strength, dBm (127 = not available).
        public var rssi: Int8
        public init(eventType: LEAdvertisingReportType, address: BluetoothAddress, data: [UInt8], rssi: Int8) {
            self.eventType = eventType
            self.addressType = LEAddressType(address.type)
            self.address = address
            self.data = data
            self.rssi = rssi
        }
        public init(eventType: LEAdvertisingReportType, addressType: LEAddressType, address: BluetoothAddress,
                    data: [UInt8], rssi: Int8) {
            self.eventType = eventType
            self.addressType = addressType
            self.address = BluetoothAddress(value: address.value, type: addressType.addressType)
            self.data = data
            self.rssi = rssi
        }
        public static let fields: [HCIField<Self>] = [
            .raw(\.eventType, "event type"), .raw(\.addressType, "address type"),
            .address(\.address, "address", typeFrom: \.addressType), .lengthPrefixed(\.data, "data"), .integer(\.rssi, "RSSI"),
        ]
        public static let blank = Self(eventType: .advInd, address: BluetoothAddress(value: 0, type: .public), data: [], rssi: 0)
    }

    /// The reports, in the order received.
    public var reports: [Report]
    public init(reports: [Report]) { self.reports = reports }
    public static let fields: [HCIField<Self>] = [.list(\.reports, count: "number of reports", item: "report")]
    public static let blank = Self(reports: [])
}

/// LE Connection Update Complete (subevent 0x03).
public struct LEConnectionUpdateComplete: LEMetaSubevent, HCIFieldTable, Equatable {
    public static let subeventCode: UInt8 = 0x03
    /// Outcome (0x00 success).
    public var status: HCIStatus
    /// Connection handle (12 bits).
    public var handle: UInt16
    /// Connection interval, 1.25 ms units.
    public var interval: UInt16
    /// Peripheral latency, connection events.
    public var latency: UInt16
    /// Supervision timeout, 10 ms units.
    public var supervisionTimeout: UInt16
    public init(status: HCIStatus = .success, handle: UInt16, interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.status = status
        self.handle = handle
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .integer(\.interval, "connection interval"),
        .integer(\.latency, "peripheral latency"), .integer(\.supervisionTimeout, "supervision timeout"),
    ]
    public static let blank = Self(handle: 0, interval: 0, latency: 0, supervisionTimeout: 0)
}

/// LE Read Remote Features Complete (subevent 0x04).
public struct LEReadRemoteFeaturesComplete: LEMetaSubevent, HCIFieldTable, Equatable {
    public static let subeventCode: UInt8 = 0x04
    /// Outcome (0x00 success).
    public var status: HCIStatus
    /// Connection handle (12 bits).
    public var handle: UInt16
    /// The peer's LE features.
    public var features: LEFeatures
    public init(status: HCIStatus = .success, handle: UInt16, features: LEFeatures) {
        self.status = status
        self.handle = handle
        self.features = features
    }
    public static let fields: [HCIField<Self>] = [.status(\.status), .handle(\.handle), .raw(\.features, "LE features")]
    public static let blank = Self(handle: 0, features: [])
}

/// LE Long Term Key Request (subevent 0x05): the central started encryption; the host must
/// answer with the key (or a negative reply).
public struct LELongTermKeyRequest: LEMetaSubevent, HCIFieldTable, Equatable {
    public static let subeventCode: UInt8 = 0x05
    /// Connection handle (12 bits).
    public var handle: UInt16
    /// Random number from the central (0 for LE Secure Connections).
    public var randomNumber: UInt64
    /// Encrypted diversifier (0 for LE Secure Connections).
    public var encryptedDiversifier: UInt16
    public init(handle: UInt16, randomNumber: UInt64, encryptedDiversifier: UInt16) {
        self.handle = handle
        self.randomNumber = randomNumber
        self.encryptedDiversifier = encryptedDiversifier
    }
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .integer(\.randomNumber, "random number"),
        .integer(\.encryptedDiversifier, "encrypted diversifier"),
    ]
    public static let blank = Self(handle: 0, randomNumber: 0, encryptedDiversifier: 0)
}

/// LE Data Length Change (subevent 0x07): the link-layer payload limits of a connection changed.
public struct LEDataLengthChange: LEMetaSubevent, HCIFieldTable, Equatable {
    public static let subeventCode: UInt8 = 0x07
    /// Connection handle (12 bits).
    public var handle: UInt16
    /// Octets per LL packet we send / receive (27-251) and their air time in µs.
    public var maxTxOctets: UInt16
    /// Longest air time of a packet we send, µs.
    public var maxTxTime: UInt16
    /// Octets per LL packet we receive.
    public var maxRxOctets: UInt16
    /// Longest air time of a packet we receive, µs.
    public var maxRxTime: UInt16
    public init(handle: UInt16, maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16) {
        self.handle = handle
        self.maxTxOctets = maxTxOctets
        self.maxTxTime = maxTxTime
        self.maxRxOctets = maxRxOctets
        self.maxRxTime = maxRxTime
    }
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .integer(\.maxTxOctets, "max TX octets"), .integer(\.maxTxTime, "max TX time"),
        .integer(\.maxRxOctets, "max RX octets"), .integer(\.maxRxTime, "max RX time"),
    ]
    public static let blank = Self(handle: 0, maxTxOctets: 0, maxTxTime: 0, maxRxOctets: 0, maxRxTime: 0)
}

/// LE PHY Update Complete (subevent 0x0C).
public struct LEPHYUpdateComplete: LEMetaSubevent, HCIFieldTable, Equatable {
    public static let subeventCode: UInt8 = 0x0C
    /// Outcome (0x00 success).
    public var status: HCIStatus
    /// Connection handle (12 bits).
    public var handle: UInt16
    /// PHY this side transmits on.
    public var txPHY: LEPHY
    /// PHY this side receives on.
    public var rxPHY: LEPHY
    public init(status: HCIStatus = .success, handle: UInt16, txPHY: LEPHY, rxPHY: LEPHY) {
        self.status = status
        self.handle = handle
        self.txPHY = txPHY
        self.rxPHY = rxPHY
    }
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .raw(\.txPHY, "TX PHY"), .raw(\.rxPHY, "RX PHY"),
    ]
    public static let blank = Self(handle: 0, txPHY: .le1M, rxPHY: .le1M)
}

/// Event type bits of an extended advertising report.
public struct LEExtendedAdvertisingEventType: OptionSet, Hashable, Sendable {
    /// The value as sent over HCI.
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// A central may connect.
    public static let connectable = LEExtendedAdvertisingEventType(rawValue: 1 << 0)
    /// Answers scan requests with scan response data.
    public static let scannable = LEExtendedAdvertisingEventType(rawValue: 1 << 1)
    /// Aimed at one peer address.
    public static let directed = LEExtendedAdvertisingEventType(rawValue: 1 << 2)
    /// The PDU is a scan response.
    public static let scanResponse = LEExtendedAdvertisingEventType(rawValue: 1 << 3)
    /// The PDU was a legacy one (ADV_IND etc.).
    public static let legacy = LEExtendedAdvertisingEventType(rawValue: 1 << 4)

    /// Bits 5-6: 0 complete, 1 more data to come, 2 truncated.
    public var dataStatus: UInt8 { UInt8(truncatingIfNeeded: rawValue >> 5) & 0x3 }
}

/// LE Extended Advertising Report (subevent 0x0D): one or more reports, each laid out in turn.
public struct LEExtendedAdvertisingReport: LEMetaSubevent, HCIFieldTable, Equatable {
    public static let subeventCode: UInt8 = 0x0D

    /// One extended report.
    public struct Report: HCIFieldTable, Hashable, Sendable {
        /// The kind of PDU reported.
        public var eventType: LEExtendedAdvertisingEventType
        /// 0-3 as for connections, 0xFF anonymous.
        public var addressType: LEAddressType
        /// The device address.
        public var address: BluetoothAddress
        /// PHY of the primary advertising channels.
        public var primaryPHY: LEPHY
        /// 0 = no packets on the secondary channel.
        public var secondaryPHY: LEPHY
        /// Advertising set identifier (0xFF = none).
        public var advertisingSID: UInt8
        /// Transmit power, dBm (127 = not available).
        public var txPower: Int8
        /// Signal strength, dBm (127 = not available).
        public var rssi: Int8
        /// Periodic advertising interval, 1.25 ms units (0 = none).
        public var periodicAdvertisingInterval: UInt16
        /// Type of the address directed advertising targets.
        public var directAddressType: LEAddressType
        /// The address directed advertising targets (zero otherwise).
        public var directAddress: BluetoothAddress
        /// AD structures (up to 229 bytes per report).
        public var data: [UInt8]

        public init(eventType: LEExtendedAdvertisingEventType, addressType: LEAddressType, address: BluetoothAddress,
                    primaryPHY: LEPHY = .le1M, secondaryPHY: LEPHY = LEPHY(rawValue: 0), advertisingSID: UInt8 = 0xFF,
                    txPower: Int8 = 127, rssi: Int8, periodicAdvertisingInterval: UInt16 = 0,
                    directAddressType: LEAddressType = .public, directAddress: BluetoothAddress = BluetoothAddress(value: 0),
                    data: [UInt8]) {
            self.eventType = eventType
            self.addressType = addressType
            self.address = BluetoothAddress(value: address.value, type: addressType.addressType)
            self.primaryPHY = primaryPHY
            self.secondaryPHY = secondaryPHY
            self.advertisingSID = advertisingSID
            self.txPower = txPower
            self.rssi = rssi
            self.periodicAdvertisingInterval = periodicAdvertisingInterval
            self.directAddressType = directAddressType
            self.directAddress = BluetoothAddress(value: directAddress.value, type: directAddressType.addressType)
            self.data = data
        }
        public static let fields: [HCIField<Self>] = [
            .raw(\.eventType, "event type"), .raw(\.addressType, "address type"),
            .address(\.address, "address", typeFrom: \.addressType), .raw(\.primaryPHY, "primary PHY"),
            .raw(\.secondaryPHY, "secondary PHY"), .integer(\.advertisingSID, "advertising SID"), .integer(\.txPower, "TX power"),
            .integer(\.rssi, "RSSI"), .integer(\.periodicAdvertisingInterval, "periodic advertising interval"),
            .raw(\.directAddressType, "direct address type"),
            .address(\.directAddress, "direct address", typeFrom: \.directAddressType), .lengthPrefixed(\.data, "data"),
        ]
        public static let blank = Self(eventType: [], addressType: .public, address: BluetoothAddress(value: 0), rssi: 0, data: [])
    }

    /// The reports, in the order received.
    public var reports: [Report]
    public init(reports: [Report]) { self.reports = reports }
    public static let fields: [HCIField<Self>] = [.list(\.reports, count: "number of reports", item: "report")]
    public static let blank = Self(reports: [])
}

/// LE Advertising Set Terminated (subevent 0x12): an extended advertising set stopped because
/// a connection was made from it (status 0) or its duration or event count ran out.
public struct LEAdvertisingSetTerminated: LEMetaSubevent, HCIFieldTable, Equatable {
    public static let subeventCode: UInt8 = 0x12
    /// Outcome (0x00 success).
    public var status: HCIStatus
    /// The advertising set that stopped.
    public var advertisingHandle: UInt8
    /// The connection made from the set (valid when status is 0).
    public var connectionHandle: UInt16
    /// Advertising events the set completed.
    public var completedExtendedAdvertisingEvents: UInt8
    public init(status: HCIStatus = .success, advertisingHandle: UInt8, connectionHandle: UInt16,
                completedExtendedAdvertisingEvents: UInt8 = 0) {
        self.status = status
        self.advertisingHandle = advertisingHandle
        self.connectionHandle = connectionHandle
        self.completedExtendedAdvertisingEvents = completedExtendedAdvertisingEvents
    }
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .integer(\.advertisingHandle, "advertising handle"), .handle(\.connectionHandle),
        .integer(\.completedExtendedAdvertisingEvents, "num completed extended advertising events"),
    ]
    public static let blank = Self(advertisingHandle: 0, connectionHandle: 0)
}
