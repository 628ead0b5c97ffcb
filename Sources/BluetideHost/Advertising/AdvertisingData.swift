import BluetideBase

/// Flags AD type bits (Core Supplement Part A 1.3).
public struct AdvertisingFlags: OptionSet, Hashable, Sendable {
    /// The flags octet.
    public let rawValue: UInt8
    /// Wraps a flags octet.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// LE Limited Discoverable Mode.
    public static let leLimitedDiscoverable = AdvertisingFlags(rawValue: 0x01)
    /// LE General Discoverable Mode.
    public static let leGeneralDiscoverable = AdvertisingFlags(rawValue: 0x02)
    /// BR/EDR Not Supported.
    public static let brEdrNotSupported = AdvertisingFlags(rawValue: 0x04)
    /// Simultaneous LE and BR/EDR (controller).
    public static let simultaneousController = AdvertisingFlags(rawValue: 0x08)
    /// Simultaneous LE and BR/EDR (host; deprecated bit).
    public static let simultaneousHost = AdvertisingFlags(rawValue: 0x10)
}

/// Width of the UUIDs in a service UUID list or service data element.
public enum AdvertisingUUIDSize: Int, Hashable, Sendable {
    /// 2 octets.
    case bits16 = 2
    /// 4 octets.
    case bits32 = 4
    /// 16 octets.
    case bits128 = 16
}

/// AD type codes this module decodes (Assigned Numbers, "Common Data Types").
public enum ADType {
    /// 0x01: Flags.
    public static let flags: UInt8 = 0x01
    /// 0x02: Incomplete List of 16-bit Service UUIDs.
    public static let incompleteUUIDs16: UInt8 = 0x02
    /// 0x03: Complete List of 16-bit Service UUIDs.
    public static let completeUUIDs16: UInt8 = 0x03
    /// 0x04: Incomplete List of 32-bit Service UUIDs.
    public static let incompleteUUIDs32: UInt8 = 0x04
    /// 0x05: Complete List of 32-bit Service UUIDs.
    public static let completeUUIDs32: UInt8 = 0x05
    /// 0x06: Incomplete List of 128-bit Service UUIDs.
    public static let incompleteUUIDs128: UInt8 = 0x06
    /// 0x07: Complete List of 128-bit Service UUIDs.
    public static let completeUUIDs128: UInt8 = 0x07
    /// 0x08: Shortened Local Name.
    public static let shortenedLocalName: UInt8 = 0x08
    /// 0x09: Complete Local Name.
    public static let completeLocalName: UInt8 = 0x09
    /// 0x0A: TX Power Level.
    public static let txPowerLevel: UInt8 = 0x0A
    /// 0x12: Peripheral Connection Interval Range.
    public static let peripheralConnectionIntervalRange: UInt8 = 0x12
    /// 0x16: Service Data - 16-bit UUID.
    public static let serviceData16: UInt8 = 0x16
    /// 0x19: Appearance.
    public static let appearance: UInt8 = 0x19
    /// 0x20: Service Data - 32-bit UUID.
    public static let serviceData32: UInt8 = 0x20
    /// 0x21: Service Data - 128-bit UUID.
    public static let serviceData128: UInt8 = 0x21
    /// 0xFF: Manufacturer Specific Data.
    public static let manufacturerSpecificData: UInt8 = 0xFF
}

/// One AD structure's content, typed where Bluetide knows the AD type.
public enum AdvertisingDataElement: Hashable, Sendable {
    /// 0x01 Flags.
    case flags(AdvertisingFlags)
    /// 0x02–0x07 service class UUID lists; `complete` tells the list is exhaustive.
    case serviceUUIDs([BluetoothUUID], size: AdvertisingUUIDSize, complete: Bool)
    /// 0x08 Shortened Local Name.
    case shortenedLocalName(String)
    /// 0x09 Complete Local Name.
    case completeLocalName(String)
    /// 0x0A TX Power Level, dBm.
    case txPowerLevel(Int8)
    /// 0x12 Peripheral Connection Interval Range, units of 1.25 ms (0xFFFF = no bound).
    case peripheralConnectionIntervalRange(min: UInt16, max: UInt16)
    /// 0x16 / 0x20 / 0x21 Service Data: the service UUID and its data.
    case serviceData(BluetoothUUID, size: AdvertisingUUIDSize, data: [UInt8])
    /// 0x19 Appearance (Assigned Numbers appearance value).
    case appearance(UInt16)
    /// 0xFF Manufacturer Specific Data: company identifier and the bytes after it.
    case manufacturerSpecificData(companyID: UInt16, data: [UInt8])
    /// Any other AD type, or a known type whose data was malformed (lenient decoding):
    /// kept as-is so it is never dropped.
    case raw(type: UInt8, data: [UInt8])

    /// The AD type code of this element.
    public var type: UInt8 {
        switch self {
        case .flags: ADType.flags
        case let .serviceUUIDs(_, size, complete):
            switch size {
            case .bits16: complete ? ADType.completeUUIDs16 : ADType.incompleteUUIDs16
            case .bits32: complete ? ADType.completeUUIDs32 : ADType.incompleteUUIDs32
            case .bits128: complete ? ADType.completeUUIDs128 : ADType.incompleteUUIDs128
            }
        case .shortenedLocalName: ADType.shortenedLocalName
        case .completeLocalName: ADType.completeLocalName
        case .txPowerLevel: ADType.txPowerLevel
        case .peripheralConnectionIntervalRange: ADType.peripheralConnectionIntervalRange
        case let .serviceData(_, size, _):
            switch size {
            case .bits16: ADType.serviceData16
            case .bits32: ADType.serviceData32
            case .bits128: ADType.serviceData128
            }
        case .appearance: ADType.appearance
        case .manufacturerSpecificData: ADType.manufacturerSpecificData
        case let .raw(type, _): type
        }
    }

    /// The AD data (after the type byte).
    public var data: [UInt8] {
        var w = ByteWriter()
        switch self {
        case let .flags(f): w.write(f.rawValue)
        case let .serviceUUIDs(uuids, size, _):
            for u in uuids { w.write(bytes: Self.uuidBytes(u, size)) }
        case let .shortenedLocalName(name), let .completeLocalName(name): w.write(string: name)
        case let .txPowerLevel(dbm): w.write(dbm)
        case let .peripheralConnectionIntervalRange(lo, hi): w.write(lo); w.write(hi)
        case let .serviceData(uuid, size, data): w.write(bytes: Self.uuidBytes(uuid, size)); w.write(bytes: data)
        case let .appearance(a): w.write(a)
        case let .manufacturerSpecificData(company, data): w.write(company); w.write(bytes: data)
        case let .raw(_, data): w.write(bytes: data)
        }
        return w.bytes
    }

    /// The UUID in the given width, little-endian (a UUID that has no such short form is
    /// written in the low bits of its alias position; callers pick a size that fits).
    static func uuidBytes(_ uuid: BluetoothUUID, _ size: AdvertisingUUIDSize) -> [UInt8] {
        switch size {
        case .bits16:
            let v = UInt16(truncatingIfNeeded: uuid.high >> 32)
            return [UInt8(v & 0xFF), UInt8(v >> 8)]
        case .bits32:
            var w = ByteWriter()
            w.write(UInt32(truncatingIfNeeded: uuid.high >> 32))
            return w.bytes
        case .bits128: return uuid.littleEndianBytes128
        }
    }

    /// Decodes the data of one AD structure of the given type.
    public init(type: UInt8, data: [UInt8]) throws(DecodingError) {
        var r = ByteReader(data)
        func exact(_ n: Int, _ name: String) throws(DecodingError) {
            guard data.count == n else { throw .invalid(name, expected: "\(n) bytes", found: "\(data.count) bytes") }
        }
        func uuidList(_ size: AdvertisingUUIDSize, complete: Bool) throws(DecodingError) -> AdvertisingDataElement {
            guard data.count % size.rawValue == 0 else {
                throw .invalid("service UUID list", expected: "a multiple of \(size.rawValue) bytes", found: "\(data.count) bytes")
            }
            var uuids: [BluetoothUUID] = []
            while !r.isAtEnd { uuids.append(try BluetoothUUID(littleEndian: try r.readBytes(size.rawValue, "UUID"))) }
            return .serviceUUIDs(uuids, size: size, complete: complete)
        }
        func serviceData(_ size: AdvertisingUUIDSize) throws(DecodingError) -> AdvertisingDataElement {
            let uuid = try BluetoothUUID(littleEndian: try r.readBytes(size.rawValue, "service data UUID"))
            return .serviceData(uuid, size: size, data: r.readRemaining())
        }
        switch type {
        case ADType.flags:
            try exact(1, "flags")  // Supplement: flags is one octet (longer forms are reserved)
            self = .flags(AdvertisingFlags(rawValue: try r.readUInt8("flags")))
        case ADType.incompleteUUIDs16: self = try uuidList(.bits16, complete: false)
        case ADType.completeUUIDs16: self = try uuidList(.bits16, complete: true)
        case ADType.incompleteUUIDs32: self = try uuidList(.bits32, complete: false)
        case ADType.completeUUIDs32: self = try uuidList(.bits32, complete: true)
        case ADType.incompleteUUIDs128: self = try uuidList(.bits128, complete: false)
        case ADType.completeUUIDs128: self = try uuidList(.bits128, complete: true)
        case ADType.shortenedLocalName: self = .shortenedLocalName(String(decoding: data, as: UTF8.self))
        case ADType.completeLocalName: self = .completeLocalName(String(decoding: data, as: UTF8.self))
        case ADType.txPowerLevel:
            try exact(1, "TX power level")
            self = .txPowerLevel(try r.read(Int8.self, "TX power level"))
        case ADType.peripheralConnectionIntervalRange:
            try exact(4, "peripheral connection interval range")
            self = .peripheralConnectionIntervalRange(min: try r.read(UInt16.self, "interval min"), max: try r.read(UInt16.self, "interval max"))
        case ADType.serviceData16: self = try serviceData(.bits16)
        case ADType.serviceData32: self = try serviceData(.bits32)
        case ADType.serviceData128: self = try serviceData(.bits128)
        case ADType.appearance:
            try exact(2, "appearance")
            self = .appearance(try r.read(UInt16.self, "appearance"))
        case ADType.manufacturerSpecificData:
            self = .manufacturerSpecificData(companyID: try r.read(UInt16.self, "company identifier"), data: r.readRemaining())
        default:
            self = .raw(type: type, data: data)
        }
    }
}

/// Advertising or scan response data: a sequence of AD structures (length u8, type u8, data),
/// Core Vol 3 Part C 11. Order is kept, unknown types are kept.
public struct AdvertisingData: Hashable, Sendable {
    /// The elements in the order they appear.
    public var elements: [AdvertisingDataElement]

    /// Data made of `elements`, in order.
    public init(_ elements: [AdvertisingDataElement] = []) { self.elements = elements }

    /// Longest legacy advertising or scan response payload, octets.
    public static let legacyMaximumLength = 31

    /// Decodes strictly: a length running past the end, or malformed data for a known type,
    /// throws. A zero length octet ends the significant part (the rest is padding).
    public init(bytes: [UInt8]) throws(DecodingError) {
        var r = ByteReader(bytes)
        var elements: [AdvertisingDataElement] = []
        while let length = r.peek() {
            if length == 0 { break }
            let start = r.offset
            _ = try r.readUInt8("AD length")
            let type = try r.readUInt8("AD type")
            let data = try r.readBytes(Int(length) - 1, "AD data")
            do {
                elements.append(try AdvertisingDataElement(type: type, data: data))
            } catch {
                var e = error.within("AD structure 0x\(String(type, radix: 16))")
                e.offset = start
                throw e
            }
        }
        self.elements = elements
    }

    /// Decodes leniently for scanning: malformed known types are kept as ``AdvertisingDataElement/raw(type:data:)``,
    /// a truncated final structure is reported in `truncatedTail` instead of throwing.
    public init(lenient bytes: [UInt8]) {
        var elements: [AdvertisingDataElement] = []
        var index = 0
        var tail: [UInt8]? = nil
        while index < bytes.count {
            let length = Int(bytes[index])
            if length == 0 { break }
            guard index + 1 + length <= bytes.count else {
                tail = Array(bytes[index...])
                break
            }
            let type = bytes[index + 1]
            let data = Array(bytes[(index + 2)..<(index + 1 + length)])
            elements.append((try? AdvertisingDataElement(type: type, data: data)) ?? .raw(type: type, data: data))
            index += 1 + length
        }
        self.elements = elements
        self.truncatedTail = tail
    }

    /// (Lenient decoding) the bytes of a final structure whose length ran past the end.
    public var truncatedTail: [UInt8]? = nil

    /// The encoded bytes. An element whose data exceeds 254 octets is cut to fit its length octet.
    public var bytes: [UInt8] {
        var w = ByteWriter()
        for e in elements {
            let data = e.data.prefix(254)
            w.write(UInt8(data.count + 1))
            w.write(e.type)
            w.write(bytes: data)
        }
        return w.bytes
    }

    /// True when the encoding fits a legacy advertising PDU (31 octets).
    public var fitsLegacyAdvertising: Bool { bytes.count <= Self.legacyMaximumLength }

    /// The advertisement with a scan response's elements appended (what a scanner shows as one
    /// device record).
    public func merged(withScanResponse response: AdvertisingData) -> AdvertisingData {
        AdvertisingData(elements + response.elements)
    }

    // MARK: Accessors

    /// The Flags element, if present.
    public var flags: AdvertisingFlags? {
        for case let .flags(f) in elements { return f }
        return nil
    }

    /// The complete local name when present, else the shortened one.
    public var localName: String? {
        for case let .completeLocalName(n) in elements { return n }
        for case let .shortenedLocalName(n) in elements { return n }
        return nil
    }

    /// Every advertised service UUID (all list elements, in order, without duplicates).
    public var serviceUUIDs: [BluetoothUUID] {
        var seen = Set<BluetoothUUID>()
        var out: [BluetoothUUID] = []
        for case let .serviceUUIDs(list, _, _) in elements {
            for u in list where seen.insert(u).inserted { out.append(u) }
        }
        return out
    }

    /// TX power level in dBm.
    public var txPowerLevel: Int8? {
        for case let .txPowerLevel(p) in elements { return p }
        return nil
    }

    /// Appearance value.
    public var appearance: UInt16? {
        for case let .appearance(a) in elements { return a }
        return nil
    }

    /// Service data by service UUID (first occurrence wins).
    public var serviceData: [BluetoothUUID: [UInt8]] {
        var out: [BluetoothUUID: [UInt8]] = [:]
        for case let .serviceData(u, _, d) in elements where out[u] == nil { out[u] = d }
        return out
    }

    /// Manufacturer specific data elements (company identifier and bytes), in order.
    public var manufacturerData: [(companyID: UInt16, data: [UInt8])] {
        var out: [(companyID: UInt16, data: [UInt8])] = []
        for case let .manufacturerSpecificData(c, d) in elements { out.append((c, d)) }
        return out
    }

    /// The peripheral's preferred connection interval range (1.25 ms units).
    public var connectionIntervalRange: (min: UInt16, max: UInt16)? {
        for case let .peripheralConnectionIntervalRange(lo, hi) in elements { return (lo, hi) }
        return nil
    }
}

extension AdvertisingDataElement {
    /// Service UUID list elements for `uuids`, one element per UUID width in use (16-bit
    /// aliases first, then 32-bit, then 128-bit), so each UUID is written in its shortest form.
    public static func serviceUUIDLists(_ uuids: [BluetoothUUID], complete: Bool) -> [AdvertisingDataElement] {
        let short = uuids.filter { $0.uuid16 != nil }
        let medium = uuids.filter { $0.uuid16 == nil && $0.uuid32 != nil }
        let long = uuids.filter { $0.uuid32 == nil }
        var out: [AdvertisingDataElement] = []
        if !short.isEmpty { out.append(.serviceUUIDs(short, size: .bits16, complete: complete)) }
        if !medium.isEmpty { out.append(.serviceUUIDs(medium, size: .bits32, complete: complete)) }
        if !long.isEmpty { out.append(.serviceUUIDs(long, size: .bits128, complete: complete)) }
        return out
    }

    /// A Service Data element for `uuid` in its shortest form.
    public static func serviceData(_ uuid: BluetoothUUID, _ data: [UInt8]) -> AdvertisingDataElement {
        let size: AdvertisingUUIDSize = uuid.uuid16 != nil ? .bits16 : uuid.uuid32 != nil ? .bits32 : .bits128
        return .serviceData(uuid, size: size, data: data)
    }
}
