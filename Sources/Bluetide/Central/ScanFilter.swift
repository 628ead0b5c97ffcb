import BluetideBase
import Foundation

/// Which advertisements a scan reports. Every criterion that is set must match; an empty
/// filter matches every device.
public struct ScanFilter: Sendable {
    /// How a device's local name must look.
    public enum NameMatch: Sendable, CustomStringConvertible {
        /// The name equals the text (case-sensitive).
        case exact(String)
        /// The name starts with the text (case-sensitive).
        case prefix(String)
        /// The name contains a match of a regular expression (ICU syntax, as NSRegularExpression).
        /// Build it with ``ScanFilter/NameMatch/pattern(_:)``, which validates it.
        case regularExpression(NamePattern)

        /// A regular-expression name match. Throws ``BluetideError/invalidNamePattern(_:reason:)``
        /// naming the pattern and the problem when it does not compile.
        public static func pattern(_ pattern: String, caseInsensitive: Bool = false) throws -> NameMatch {
            .regularExpression(try NamePattern(pattern, caseInsensitive: caseInsensitive))
        }

        /// Whether `name` (nil when the device sent none) matches.
        public func matches(_ name: String?) -> Bool {
            guard let name else { return false }
            switch self {
            case let .exact(text): return name == text
            case let .prefix(text): return name.hasPrefix(text)
            case let .regularExpression(pattern): return pattern.matches(name)
            }
        }

        /// The criterion in words, e.g. `name starts with "HRM"`.
        public var description: String {
            switch self {
            case let .exact(text): "name == \"\(text)\""
            case let .prefix(text): "name starts with \"\(text)\""
            case let .regularExpression(pattern): "name ~ /\(pattern.pattern)/"
            }
        }
    }

    /// A compiled, validated regular expression for names.
    public struct NamePattern: Sendable {
        /// The pattern as given.
        public let pattern: String
        /// Whether letter case is ignored.
        public let caseInsensitive: Bool
        private let expression: CompiledExpression

        /// Compiles `pattern`; throws ``BluetideError/invalidNamePattern(_:reason:)`` when it is
        /// not a valid regular expression.
        public init(_ pattern: String, caseInsensitive: Bool = false) throws {
            self.pattern = pattern
            self.caseInsensitive = caseInsensitive
            do {
                expression = CompiledExpression(
                    try NSRegularExpression(pattern: pattern, options: caseInsensitive ? [.caseInsensitive] : []))
            } catch {
                throw BluetideError.invalidNamePattern(
                    pattern, reason: "not a valid regular expression (\((error as NSError).localizedDescription))")
            }
        }

        /// Whether the pattern matches somewhere in `name` (anchor it with ^…$ for a whole match).
        public func matches(_ name: String) -> Bool { expression.matches(name) }
    }

    /// Any of these service UUIDs must be advertised (empty: no service criterion).
    public var serviceUUIDs: [BluetoothUUID]
    /// The local name criterion, if any.
    public var name: NameMatch?
    /// Manufacturer specific data with this company identifier must be present.
    public var manufacturerID: UInt16?
    /// Reports weaker than this are ignored, dBm.
    public var minimumRSSI: Int?
    /// Only devices that accept connections.
    public var connectableOnly: Bool
    /// Report every advertisement received. When false (the default) a device is reported the
    /// first time it matches and then only when its data (name, services, manufacturer or
    /// service data, TX power, connectable) changes: RSSI-only updates are not reported.
    public var allowDuplicates: Bool

    /// A filter; every argument left out matches everything.
    public init(
        serviceUUIDs: [BluetoothUUID] = [], name: NameMatch? = nil, manufacturerID: UInt16? = nil,
        minimumRSSI: Int? = nil, connectableOnly: Bool = false, allowDuplicates: Bool = false
    ) {
        self.serviceUUIDs = serviceUUIDs
        self.name = name
        self.manufacturerID = manufacturerID
        self.minimumRSSI = minimumRSSI
        self.connectableOnly = connectableOnly
        self.allowDuplicates = allowDuplicates
    }

    /// Whether `advertisement` passes every criterion.
    public func matches(_ advertisement: Advertisement) -> Bool {
        if !serviceUUIDs.isEmpty, !serviceUUIDs.contains(where: advertisement.serviceUUIDs.contains) { return false }
        if let name, !name.matches(advertisement.name) { return false }
        if let manufacturerID, advertisement.manufacturerData[manufacturerID] == nil { return false }
        if let minimumRSSI, advertisement.rssi < minimumRSSI { return false }
        if connectableOnly, !advertisement.isConnectable { return false }
        return true
    }
}

/// An NSRegularExpression shared between tasks.
///
/// Safety of `@unchecked Sendable`: the wrapped expression is immutable after init and
/// NSRegularExpression's matching methods are documented thread-safe ("instances are immutable
/// and may be used from multiple threads"); nothing here mutates it.
private final class CompiledExpression: @unchecked Sendable {
    let regex: NSRegularExpression
    init(_ regex: NSRegularExpression) { self.regex = regex }
    func matches(_ text: String) -> Bool {
        regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }
}
