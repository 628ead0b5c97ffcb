/// One D-Bus value with its type (the D-Bus type system: basic types, arrays, dictionaries,
/// structures and variants), as libdbus marshals it. Containers carry their element types so an
/// empty array or dictionary still has a signature.
///
/// ```swift
/// let filter: DBusValue = .dictionary(["Transport": .variant(.string("le")), "RSSI": .variant(.int16(-80))])
/// ```
public indirect enum DBusValue: Sendable, Hashable, CustomStringConvertible {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A file descriptor passed with the message (received ones are owned by the receiver).
    case unixFD(Int32)
    /// An array whose elements have the single complete type `element` (e.g. `y`, `s`, `(ss)`).
    case array(element: String, [DBusValue])
    /// An array of dictionary entries: keys of basic type `key`, values of type `value`.
    case dictionary(key: String, value: String, [DBusDictionaryEntry])
    case structure([DBusValue])
    case variant(DBusValue)

    /// An `ay` of `bytes`.
    public static func bytes(_ bytes: [UInt8]) -> DBusValue { .array(element: "y", bytes.map(DBusValue.byte)) }
    /// An `a{sv}` of `entries` (values wrapped in variants), keys sorted so the bytes are stable.
    public static func dictionary(_ entries: [String: DBusValue]) -> DBusValue {
        .dictionary(key: "s", value: "v", entries.keys.sorted().map { DBusDictionaryEntry(key: .string($0), value: .variant(entries[$0]!)) })
    }
    /// An `as` of `strings`.
    public static func strings(_ strings: [String]) -> DBusValue { .array(element: "s", strings.map(DBusValue.string)) }

    /// The value's D-Bus signature (`s`, `ay`, `a{sv}`, `(ss)`, …).
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case let .array(element, _): "a" + element
        case let .dictionary(key, value, _): "a{" + key + value + "}"
        case let .structure(fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    public var description: String {
        switch self {
        case let .byte(v): "\(v)"
        case let .boolean(v): "\(v)"
        case let .int16(v): "\(v)"
        case let .uint16(v): "\(v)"
        case let .int32(v): "\(v)"
        case let .uint32(v): "\(v)"
        case let .int64(v): "\(v)"
        case let .uint64(v): "\(v)"
        case let .double(v): "\(v)"
        case let .string(v): "\"\(v)\""
        case let .objectPath(v): v
        case let .signature(v): "signature \(v)"
        case let .unixFD(v): "fd \(v)"
        case let .array(_, items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case let .dictionary(_, _, entries): "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case let .structure(fields): "(" + fields.map(\.description).joined(separator: ", ") + ")"
        case let .variant(inner): "<\(inner)>"
        }
    }

    // MARK: Reading values back

    /// The value inside any number of variants.
    public var unwrapped: DBusValue {
        if case let .variant(inner) = self { return inner.unwrapped }
        return self
    }

    /// A string, object path or signature.
    public var string: String? {
        switch unwrapped {
        case let .string(v), let .objectPath(v), let .signature(v): v
        default: nil
        }
    }

    public var bool: Bool? {
        if case let .boolean(v) = unwrapped { return v }
        return nil
    }

    /// Any integer type, widened (nil for a `uint64` beyond `Int64.max`).
    public var integer: Int64? {
        switch unwrapped {
        case let .byte(v): Int64(v)
        case let .int16(v): Int64(v)
        case let .uint16(v): Int64(v)
        case let .int32(v): Int64(v)
        case let .uint32(v): Int64(v)
        case let .int64(v): v
        case let .uint64(v): Int64(exactly: v)
        default: nil
        }
    }

    /// The bytes of an `ay`.
    public var bytes: [UInt8]? {
        guard case let .array(_, items) = unwrapped else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(items.count)
        for item in items {
            guard case let .byte(b) = item else { return nil }
            result.append(b)
        }
        return result
    }

    /// The elements of an array.
    public var array: [DBusValue]? {
        if case let .array(_, items) = unwrapped { return items }
        return nil
    }

    /// The strings of an `as` (or `ao`).
    public var strings: [String]? { array?.compactMap(\.string) }

    /// A dictionary with string (or object path) keys, e.g. `a{sv}`, `a{oa{sa{sv}}}`; variant values
    /// are kept as they are (read them with the accessors above, which look through variants).
    public var dictionary: [String: DBusValue]? {
        guard case let .dictionary(_, _, entries) = unwrapped else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.string else { return nil }
            result[key] = entry.value
        }
        return result
    }

    /// A dictionary with integer keys, e.g. `a{qv}` (BlueZ's ManufacturerData).
    public var integerKeyedDictionary: [Int64: DBusValue]? {
        guard case let .dictionary(_, _, entries) = unwrapped else { return nil }
        var result: [Int64: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.integer else { return nil }
            result[key] = entry.value
        }
        return result
    }
}

/// One entry of a ``DBusValue/dictionary(key:value:_:)``.
public struct DBusDictionaryEntry: Sendable, Hashable {
    public var key: DBusValue
    public var value: DBusValue
    public init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}

/// Checks of the names libdbus refuses (it aborts the process on an invalid one), so a bad name
/// is a thrown error instead.
enum DBusNames {
    /// An object path: `/` or `/`-separated elements of `[A-Za-z0-9_]`, no trailing `/`.
    static func isObjectPath(_ path: String) -> Bool {
        guard path.hasPrefix("/") else { return false }
        if path == "/" { return true }
        let elements = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        return elements.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") } }
    }

    /// An interface or bus name (`org.bluez.Adapter1`, `:1.42`): at least two `.`-separated
    /// elements of `[A-Za-z0-9_-]`, at most 255 characters.
    static func isDottedName(_ name: String) -> Bool {
        guard name.count <= 255 else { return false }
        let body = name.hasPrefix(":") ? name.dropFirst() : Substring(name)
        let elements = body.split(separator: ".", omittingEmptySubsequences: false)
        return elements.count >= 2
            && elements.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") } }
    }

    /// A member name (`GetManagedObjects`): `[A-Za-z0-9_]`, not starting with a digit.
    static func isMember(_ name: String) -> Bool {
        guard let first = name.first, !first.isNumber, name.count <= 255 else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }

    /// A single complete type signature made of the types ``DBusValue`` knows.
    static func isSingleType(_ signature: String) -> Bool {
        var characters = Substring(signature)
        return parseType(&characters) && characters.isEmpty
    }

    private static func parseType(_ s: inout Substring) -> Bool {
        guard let c = s.popFirst() else { return false }
        switch c {
        case "y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "h", "v": return true
        case "a":
            if s.first == "{" {
                s.removeFirst()
                guard let key = s.popFirst(), "ybnqiuxtdsogh".contains(key), parseType(&s), s.popFirst() == "}" else { return false }
                return true
            }
            return parseType(&s)
        case "(":
            var count = 0
            while s.first != ")" {
                guard parseType(&s) else { return false }
                count += 1
            }
            s.removeFirst()
            return count > 0
        default: return false
        }
    }
}
