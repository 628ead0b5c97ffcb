import BluetideRecording
import Foundation

/// A JSON value as the gateway publishes it, written by the rules of docs/json-output.md:
/// sorted keys, numbers rounded to at most six decimals, unknown values left out, field names
/// in lowerCamelCase with metres spelled one way (a profile's `distanceMeters` is published as
/// `distanceMetres`).
public indirect enum GatewayJSON: Sendable, Equatable {
    case string(String)
    case number(Double)
    case integer(Int64)
    case bool(Bool)
    case array([GatewayJSON])
    case object([String: GatewayJSON])

    /// `value` through its `Encodable` conformance, field names spelled one way, `nil` members
    /// left out; nil when it cannot be encoded. One pass, no JSON text in between.
    public static func encoding(_ value: any Encodable) -> GatewayJSON? {
        GatewayJSONEncoder.encode(value)
    }

    /// A value parsed from JSON text as it is (keys unchanged), nil when it is not JSON.
    public static func parse(_ text: String) -> GatewayJSON? {
        (try? JSONDecoder().decode(Decoded.self, from: Data(text.utf8)))?.value
    }

    /// Reads any JSON as it is; `null` members are dropped.
    private struct Decoded: Decodable {
        let value: GatewayJSON?
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { value = nil }
            else if let item = try? container.decode(Bool.self) { value = .bool(item) }
            else if let item = try? container.decode(Int64.self) { value = .integer(item) }
            else if let item = try? container.decode(Double.self) { value = .number(item) }
            else if let item = try? container.decode(String.self) { value = .string(item) }
            else if let items = try? container.decode([Decoded].self) { value = .array(items.compactMap(\.value)) }
            else {
                let members = try container.decode([String: Decoded].self)
                var object: [String: GatewayJSON] = [:]
                for (key, item) in members { if let item = item.value { object[key] = item } }
                value = .object(object)
            }
        }
    }

    /// The member at `path` (object keys), when there is one.
    public subscript(path: String...) -> GatewayJSON? { value(at: path) }

    func value(at path: [String]) -> GatewayJSON? {
        var current: GatewayJSON? = self
        for key in path {
            guard case let .object(members)? = current else { return nil }
            current = members[key]
        }
        return current
    }

    /// The value as a number, when it is one.
    public var double: Double? {
        switch self {
        case let .number(value): value
        case let .integer(value): Double(value)
        default: nil
        }
    }

    /// One line of JSON text.
    public var text: String {
        var out = ""
        write(into: &out)
        return out
    }

    private func write(into out: inout String) {
        switch self {
        case let .string(value): Self.quote(value, into: &out)
        case let .integer(value): out += String(value)
        case let .bool(value): out += value ? "true" : "false"
        case let .number(value): out += JSONText.number(value)
        case let .array(items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(into: &out)
            }
            out += "]"
        case let .object(members):
            out += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                Self.quote(key, into: &out)
                out += ":"
                members[key]!.write(into: &out)
            }
            out += "}"
        }
    }

    private static func quote(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 { out += String(format: "\\u%04x", scalar.value) } else { out.unicodeScalars.append(scalar) }
            }
        }
        out += "\""
    }
}

extension GatewayJSON: ExpressibleByStringLiteral, ExpressibleByDictionaryLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(dictionaryLiteral elements: (String, GatewayJSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
