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
public struct LEConnectionComplete: LEMetaSubevent, Equatable {
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
    public init(from reader: inout ByteReader) throws(DecodingError) {
        status = try HCIStatus(from: &reader)
        handle = try reader.readHandle()
        role = HCIRole(rawValue: try reader.readUInt8("role"))
        peerAddressType = LEAddressType(rawValue: try reader.readUInt8("peer address type"))
        peerAddress = try reader.readAddress("peer address", type: peerAddressType)
        interval = try reader.read(UInt16.self, "connection interval")
        latency = try reader.read(UInt16.self, "peripheral latency")
        supervisionTimeout = try reader.read(UInt16.self, "supervision timeout")
        centralClockAccuracy = try reader.readUInt8("central clock accuracy")
    }
    public func encode(to writer: inout ByteWriter) {
        status.encode(to: &writer)
        writer.write(handle)
        writer.write(role.rawValue)
        writer.write(peerAddressType.rawValue)
        writer.write(address: peerAddress)
        writer.write(interval)
        writer.write(latency)
        writer.write(supervisionTimeout)
        writer.write(centralClockAccuracy)
    }
}

/// LE Enhanced Connection Complete v1 (subevent 0x0A): LE Connection Complete plus the
/// resolvable private addresses in use.
public struct LEEnhancedConnectionComplete: LEMetaSubevent, Equatable {
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
    public init(from reader: inout ByteReader) throws(DecodingError) {
        status = try HCIStatus(from: &reader)
        handle = try reader.readHandle()
        role = HCIRole(rawValue: try reader.readUInt8("role"))
        peerAddressType = LEAddressType(rawValue: try reader.readUInt8("peer address type"))
        peerAddress = try reader.readAddress("peer address", type: peerAddressType)
        localResolvablePrivateAddress = try reader.readAddress("local resolvable private address", type: .random)
        peerResolvablePrivateAddress = try reader.readAddress("peer resolvable private address", type: .random)
        interval = try reader.read(UInt16.self, "connection interval")
        latency = try reader.read(UInt16.self, "peripheral latency")
        supervisionTimeout = try reader.read(UInt16.self, "supervision timeout")
        centralClockAccuracy = try reader.readUInt8("central clock accuracy")
    }
    public func encode(to writer: inout ByteWriter) {
        status.encode(to: &writer)
        writer.write(handle)
        writer.write(role.rawValue)
        writer.write(peerAddressType.rawValue)
        writer.write(address: peerAddress)
        writer.write(address: localResolvablePrivateAddress)
        writer.write(address: peerResolvablePrivateAddress)
        writer.write(interval)
        writer.write(latency)
        writer.write(supervisionTimeout)
        writer.write(centralClockAccuracy)
    }
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
public struct LEAdvertisingReport: LEMetaSubevent, Equatable {
    public static let subeventCode: UInt8 = 0x02

    /// One received advertising or scan response PDU.
    public struct Report: Hashable, Sendable {
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
    }

    /// The reports, in the order received.
    public var reports: [Report]
    public init(reports: [Report]) { self.reports = reports }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let count = try reader.readUInt8("number of reports")
        var reports: [Report] = []
        for index in 0..<Int(count) {
            do {
                let eventType = LEAdvertisingReportType(rawValue: try reader.readUInt8("event type"))
                let addressType = LEAddressType(rawValue: try reader.readUInt8("address type"))
                let address = try reader.readAddress("address", type: addressType)
                let length = try reader.readUInt8("data length")
                let data = try reader.readBytes(Int(length), "data")
                let rssi = try reader.read(Int8.self, "RSSI")
                reports.append(Report(eventType: eventType, addressType: addressType, address: address, data: data, rssi: rssi))
            } catch {
                throw error.within("report[\(index)]")
            }
        }
        self.reports = reports
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(UInt8(truncatingIfNeeded: reports.count))
        for report in reports.prefix(255) {
            writer.write(report.eventType.rawValue)
            writer.write(report.addressType.rawValue)
            writer.write(address: report.address)
            let data = report.data.prefix(255)
            writer.write(UInt8(data.count))
            writer.write(bytes: data)
            writer.write(report.rssi)
        }
    }
}

/// LE Connection Update Complete (subevent 0x03).
public struct LEConnectionUpdateComplete: LEMetaSubevent, Equatable {
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
    public init(from reader: inout ByteReader) throws(DecodingError) {
        status = try HCIStatus(from: &reader)
        handle = try reader.readHandle()
        interval = try reader.read(UInt16.self, "connection interval")
        latency = try reader.read(UInt16.self, "peripheral latency")
        supervisionTimeout = try reader.read(UInt16.self, "supervision timeout")
    }
    public func encode(to writer: inout ByteWriter) {
        status.encode(to: &writer)
        writer.write(handle)
        writer.write(interval)
        writer.write(latency)
        writer.write(supervisionTimeout)
    }
}

/// LE Read Remote Features Complete (subevent 0x04).
public struct LEReadRemoteFeaturesComplete: LEMetaSubevent, Equatable {
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
    public init(from reader: inout ByteReader) throws(DecodingError) {
        status = try HCIStatus(from: &reader)
        handle = try reader.readHandle()
        features = LEFeatures(rawValue: try reader.read(UInt64.self, "LE features"))
    }
    public func encode(to writer: inout ByteWriter) {
        status.encode(to: &writer)
        writer.write(handle)
        writer.write(features.rawValue)
    }
}

/// LE Long Term Key Request (subevent 0x05): the central started encryption; the host must
/// answer with the key (or a negative reply).
public struct LELongTermKeyRequest: LEMetaSubevent, Equatable {
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
    public init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try reader.readHandle()
        randomNumber = try reader.read(UInt64.self, "random number")
        encryptedDiversifier = try reader.read(UInt16.self, "encrypted diversifier")
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(randomNumber)
        writer.write(encryptedDiversifier)
    }
}

/// LE Data Length Change (subevent 0x07): the link-layer payload limits of a connection changed.
public struct LEDataLengthChange: LEMetaSubevent, Equatable {
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
    public init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try reader.readHandle()
        maxTxOctets = try reader.read(UInt16.self, "max TX octets")
        maxTxTime = try reader.read(UInt16.self, "max TX time")
        maxRxOctets = try reader.read(UInt16.self, "max RX octets")
        maxRxTime = try reader.read(UInt16.self, "max RX time")
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(maxTxOctets)
        writer.write(maxTxTime)
        writer.write(maxRxOctets)
        writer.write(maxRxTime)
    }
}

/// LE PHY Update Complete (subevent 0x0C).
public struct LEPHYUpdateComplete: LEMetaSubevent, Equatable {
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
    public init(from reader: inout ByteReader) throws(DecodingError) {
        status = try HCIStatus(from: &reader)
        handle = try reader.readHandle()
        txPHY = LEPHY(rawValue: try reader.readUInt8("TX PHY"))
        rxPHY = LEPHY(rawValue: try reader.readUInt8("RX PHY"))
    }
    public func encode(to writer: inout ByteWriter) {
        status.encode(to: &writer)
        writer.write(handle)
        writer.write(txPHY.rawValue)
        writer.write(rxPHY.rawValue)
    }
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
public struct LEExtendedAdvertisingReport: LEMetaSubevent, Equatable {
    public static let subeventCode: UInt8 = 0x0D

    /// One extended report.
    public struct Report: Hashable, Sendable {
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
    }

    /// The reports, in the order received.
    public var reports: [Report]
    public init(reports: [Report]) { self.reports = reports }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let count = try reader.readUInt8("number of reports")
        var reports: [Report] = []
        for index in 0..<Int(count) {
            do {
                let eventType = LEExtendedAdvertisingEventType(rawValue: try reader.read(UInt16.self, "event type"))
                let addressType = LEAddressType(rawValue: try reader.readUInt8("address type"))
                let address = try reader.readAddress("address", type: addressType)
                let primary = LEPHY(rawValue: try reader.readUInt8("primary PHY"))
                let secondary = LEPHY(rawValue: try reader.readUInt8("secondary PHY"))
                let sid = try reader.readUInt8("advertising SID")
                let txPower = try reader.read(Int8.self, "TX power")
                let rssi = try reader.read(Int8.self, "RSSI")
                let periodic = try reader.read(UInt16.self, "periodic advertising interval")
                let directType = LEAddressType(rawValue: try reader.readUInt8("direct address type"))
                let direct = try reader.readAddress("direct address", type: directType)
                let length = try reader.readUInt8("data length")
                let data = try reader.readBytes(Int(length), "data")
                reports.append(Report(
                    eventType: eventType, addressType: addressType, address: address, primaryPHY: primary,
                    secondaryPHY: secondary, advertisingSID: sid, txPower: txPower, rssi: rssi,
                    periodicAdvertisingInterval: periodic, directAddressType: directType, directAddress: direct, data: data))
            } catch {
                throw error.within("report[\(index)]")
            }
        }
        self.reports = reports
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(UInt8(truncatingIfNeeded: reports.count))
        for report in reports.prefix(255) {
            writer.write(report.eventType.rawValue)
            writer.write(report.addressType.rawValue)
            writer.write(address: report.address)
            writer.write(report.primaryPHY.rawValue)
            writer.write(report.secondaryPHY.rawValue)
            writer.write(report.advertisingSID)
            writer.write(report.txPower)
            writer.write(report.rssi)
            writer.write(report.periodicAdvertisingInterval)
            writer.write(report.directAddressType.rawValue)
            writer.write(address: report.directAddress)
            let data = report.data.prefix(255)
            writer.write(UInt8(data.count))
            writer.write(bytes: data)
        }
    }
}

/// LE Advertising Set Terminated (subevent 0x12): an extended advertising set stopped because
/// a connection was made from it (status 0) or its duration or event count ran out.
public struct LEAdvertisingSetTerminated: LEMetaSubevent, Equatable {
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
    public init(from reader: inout ByteReader) throws(DecodingError) {
        status = try HCIStatus(from: &reader)
        advertisingHandle = try reader.readUInt8("advertising handle")
        connectionHandle = try reader.readHandle()
        completedExtendedAdvertisingEvents = try reader.readUInt8("num completed extended advertising events")
    }
    public func encode(to writer: inout ByteWriter) {
        status.encode(to: &writer)
        writer.write(advertisingHandle)
        writer.write(connectionHandle)
        writer.write(completedExtendedAdvertisingEvents)
    }
}
