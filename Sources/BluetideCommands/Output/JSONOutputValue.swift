import BluetideRecording
import Foundation

/// A JSON value as `--json` prints it: objects with sorted keys, numbers rounded to at most six
/// decimals (microseconds for seconds), no slashes escaped. Built from dictionaries or from any
/// `Encodable` (a profile's decoded value), so every command writes numbers the same way.
enum JSONOutputValue: Sendable, Equatable, Codable {
    case string(String)
    case number(Double)
    case integer(Int64)
    case bool(Bool)
    case null
    case array([JSONOutputValue])
    case object([String: JSONOutputValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int64.self) { self = .integer(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONOutputValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONOutputValue].self)) }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case let .string(value): try container.encode(value)
        case let .number(value): try container.encode(value)
        case let .integer(value): try container.encode(value)
        case let .bool(value): try container.encode(value)
        case .null: try container.encodeNil()
        case let .array(items): try container.encode(items)
        case let .object(members): try container.encode(members)
        }
    }

    /// `value` as JSON (through its `Encodable` conformance); `.null` when it cannot be encoded.
    static func encoding(_ value: any Encodable) -> JSONOutputValue {
        struct Box: Encodable {
            let value: any Encodable
            func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
        }
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        guard let data = try? encoder.encode(Box(value: value)),
              let decoded = try? JSONDecoder().decode(JSONOutputValue.self, from: data) else { return .null }
        return decoded.withFieldNamesSpelledOneWay
    }

    /// The same value with every object key in the one spelling of docs/json-output.md:
    /// lowerCamelCase (`att_error` → `attError`) and metres, not meters (`distanceMeters` →
    /// `distanceMetres`), whatever the Swift type's property is called.
    var withFieldNamesSpelledOneWay: JSONOutputValue {
        switch self {
        case let .array(items): return .array(items.map(\.withFieldNamesSpelledOneWay))
        case let .object(members):
            var renamed: [String: JSONOutputValue] = [:]
            for (key, value) in members { renamed[Self.fieldName(key)] = value.withFieldNamesSpelledOneWay }
            return .object(renamed)
        default: return self
        }
    }

    /// `att_error` → `attError`, `distanceMeters` → `distanceMetres` (``JSONText/fieldName(_:)``).
    static func fieldName(_ key: String) -> String { JSONText.fieldName(key) }

    /// The same value without the members whose value is unknown (`null`), at every depth: a
    /// record leaves out what it does not know (docs/json-output.md), it never says null.
    var withoutNulls: JSONOutputValue {
        switch self {
        case let .array(items): return .array(items.map(\.withoutNulls))
        case let .object(members): return .object(members.filter { $0.value != .null }.mapValues(\.withoutNulls))
        default: return self
        }
    }

    /// The compact JSON text (one line).
    var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case let .string(value): out += JSONText.quoted(value)
        case let .number(value): out += Self.format(value)
        case let .integer(value): out += String(value)
        case let .bool(value): out += value ? "true" : "false"
        case .null: out += "null"
        case let .array(items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case let .object(members):
            out += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                out += JSONText.quoted(key)
                out += ":"
                members[key]!.write(to: &out)
            }
            out += "}"
        }
    }

    /// At most six decimals, trailing zeros dropped; null for infinities and NaN (``JSONText/number(_:)``).
    static func format(_ value: Double) -> String { JSONText.number(value) }
}

extension JSONOutputValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int64) { self = .integer(value) }
    init(floatLiteral value: Double) { self = .number(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(dictionaryLiteral elements: (String, JSONOutputValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    init(arrayLiteral elements: JSONOutputValue...) { self = .array(elements) }
}
