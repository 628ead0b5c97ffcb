import BluetideBase

/// A Device Information string characteristic (manufacturer name 0x2A29, model number 0x2A24,
/// serial number 0x2A25, hardware 0x2A27 / firmware 0x2A26 / software 0x2A28 revision).
///
/// No length prefix and no terminator: the whole value is the text. Decoding is lenient: UTF-8,
/// falling back to Latin-1 when invalid, trailing NULs and whitespace trimmed.
public struct DeviceInformationString: Equatable, Hashable, Sendable, Encodable, GATTCodable {
    /// The text, trimmed.
    public var text: String

    public init(_ text: String) { self.text = text }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        text = try reader.readLenientString(nil, "Device Information string")
    }

    public func encode(to writer: inout ByteWriter) { writer.write(string: text) }

    /// The text in quotes, e.g. `"Wahoo Fitness"`.
    public var summary: String { "\"\(text)\"" }
}

/// System ID (0x2A23): a uint64, little-endian. The low 40 bits are a manufacturer-defined
/// identifier, the high 24 bits the manufacturer's IEEE OUI.
///
/// Example: OUI 0x123456 with identifier 0xFFFE9ABCDE is 0x123456FFFE9ABCDE, sent as
/// `DE BC 9A FE FF 56 34 12`.
public struct SystemID: Equatable, Hashable, Sendable, Encodable, GATTCodable {
    /// Manufacturer-defined identifier, 40 bits (0…0xFF_FFFF_FFFF).
    public var manufacturerIdentifier: UInt64
    /// Organizationally unique identifier of the manufacturer, 24 bits (0…0xFFFFFF).
    public var organizationallyUniqueIdentifier: UInt32

    /// Builds a System ID; values wider than their fields are truncated to 40 and 24 bits.
    public init(manufacturerIdentifier: UInt64, organizationallyUniqueIdentifier: UInt32) {
        self.manufacturerIdentifier = manufacturerIdentifier & 0xFF_FFFF_FFFF
        self.organizationallyUniqueIdentifier = organizationallyUniqueIdentifier & 0xFF_FFFF
    }

    /// Splits the 64-bit value.
    public init(rawValue: UInt64) {
        self.init(manufacturerIdentifier: rawValue, organizationallyUniqueIdentifier: UInt32(truncatingIfNeeded: rawValue >> 40))
    }

    /// The 64-bit value: OUI in the high 24 bits, identifier in the low 40.
    public var rawValue: UInt64 {
        UInt64(organizationallyUniqueIdentifier & 0xFF_FFFF) << 40 | manufacturerIdentifier & 0xFF_FFFF_FFFF
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        self.init(rawValue: try reader.read(UInt64.self, "System ID"))
    }

    public func encode(to writer: inout ByteWriter) { writer.write(rawValue) }

    /// One line, e.g. `OUI 12:34:56, identifier FF:FE:9A:BC:DE`.
    public var summary: String {
        let oui = [16, 8, 0].map { UInt8(truncatingIfNeeded: organizationallyUniqueIdentifier >> $0) }
        let id = [32, 24, 16, 8, 0].map { UInt8(truncatingIfNeeded: manufacturerIdentifier >> UInt64($0)) }
        return "OUI \(oui.spacedHex.replacingSpaces()), identifier \(id.spacedHex.replacingSpaces())"
    }
}

extension String {
    /// `12 34 56` → `12:34:56`.
    fileprivate func replacingSpaces() -> String { String(map { $0 == " " ? ":" : $0 }) }
}

/// PnP ID (0x2A50): who made the device and which product and version it is (7 bytes).
///
/// Example: `02 6B 1D 46 02 10 01` → USB-IF vendor 0x1D6B, product 0x0246, version 0x0110 (1.1.0).
public struct PnPID: Equatable, Hashable, Sendable, Encodable, GATTCodable {
    /// Who assigned ``vendorID``.
    public enum VendorIDSource: Equatable, Hashable, Sendable, Encodable {
        /// 1: a Bluetooth SIG company identifier.
        case bluetoothSIG
        /// 2: a USB Implementers Forum vendor ID.
        case usbImplementersForum
        /// Any other value (reserved).
        case reserved(UInt8)

        public init(rawValue: UInt8) {
            switch rawValue {
            case 1: self = .bluetoothSIG
            case 2: self = .usbImplementersForum
            default: self = .reserved(rawValue)
            }
        }

        public var rawValue: UInt8 {
            switch self {
            case .bluetoothSIG: return 1
            case .usbImplementersForum: return 2
            case let .reserved(value): return value
            }
        }

        /// JSON: `"bluetoothSIG"`, `"usbImplementersForum"` or `"reserved(0x07)"`.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .bluetoothSIG: try c.encode("bluetoothSIG")
            case .usbImplementersForum: try c.encode("usbImplementersForum")
            case let .reserved(value): try c.encode("reserved(\(FitnessFormat.hex(value)))")
            }
        }
    }

    /// Who assigned the vendor ID.
    public var vendorIDSource: VendorIDSource
    /// Vendor (company) identifier.
    public var vendorID: UInt16
    /// Vendor-assigned product identifier.
    public var productID: UInt16
    /// Product version, conventionally 0xJJMN = JJ.M.N.
    public var productVersion: UInt16

    public init(vendorIDSource: VendorIDSource, vendorID: UInt16, productID: UInt16, productVersion: UInt16) {
        self.vendorIDSource = vendorIDSource
        self.vendorID = vendorID
        self.productID = productID
        self.productVersion = productVersion
    }

    /// ``productVersion`` read as JJ.M.N, e.g. 0x0110 → `1.1.0`.
    public var versionText: String {
        "\(productVersion >> 8).\((productVersion >> 4) & 0x0F).\(productVersion & 0x0F)"
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        do throws(DecodingError) {
            vendorIDSource = VendorIDSource(rawValue: try reader.readUInt8("vendor ID source"))
            vendorID = try reader.read(UInt16.self, "vendor ID")
            productID = try reader.read(UInt16.self, "product ID")
            productVersion = try reader.read(UInt16.self, "product version")
        } catch {
            throw error.within("PnP ID")
        }
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(vendorIDSource.rawValue)
        writer.write(vendorID)
        writer.write(productID)
        writer.write(productVersion)
    }

    /// One line, e.g. `USB-IF vendor 0x1D6B, product 0x0246, version 1.1.0`.
    public var summary: String {
        let source: String
        switch vendorIDSource {
        case .bluetoothSIG: source = "Bluetooth SIG"
        case .usbImplementersForum: source = "USB-IF"
        case let .reserved(value): source = "source \(value)"
        }
        return "\(source) vendor \(Self.hex16(vendorID)), product \(Self.hex16(productID)), version \(versionText)"
    }

    static func hex16(_ value: UInt16) -> String {
        "0x" + [UInt8(value >> 8), UInt8(value & 0xFF)].hexString.uppercased()
    }
}
