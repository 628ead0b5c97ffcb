import BluetideRecording
import Foundation

/// Turns an `Encodable` value (a profile's decoded packet) into a ``GatewayJSON`` in one pass,
/// by the rules of docs/json-output.md: field names spelled one way, `nil`/`null` members left
/// out, integral numbers as integers, non-finite numbers as the strings `JSONEncoder` would write
/// (`NaN`, `+Infinity`, `-Infinity`). It replaces encoding with `JSONEncoder` and decoding the
/// text again, which cost a fifth of the gateway's time per value (docs/benchmarks.md).
struct GatewayJSONEncoder {
    /// `value` as JSON; nil when its `encode(to:)` throws or writes nothing.
    static func encode(_ value: any Encodable) -> GatewayJSON? {
        let root = Node()
        let encoder = TreeEncoder(node: root, codingPath: [])
        do { try encoder.encodeValue(value) } catch { return nil }
        return root.json
    }

    /// One value under construction: a scalar, an object, an array, or nothing yet (or null).
    final class Node {
        enum Content {
            case empty
            case scalar(GatewayJSON)
            case object([(String, Node)])
            case array([Node])
        }
        var content: Content = .empty

        /// The finished value; nil for nothing or null. Object keys are renamed, nulls dropped.
        var json: GatewayJSON? {
            switch content {
            case .empty: return nil
            case let .scalar(value): return value
            case let .array(items): return .array(items.compactMap(\.json))
            case let .object(members):
                var object: [String: GatewayJSON] = [:]
                object.reserveCapacity(members.count)
                for (key, node) in members {
                    if let value = node.json { object[JSONText.fieldName(key)] = value }
                }
                return .object(object)
            }
        }

        func object() -> Void {
            if case .object = content { return }
            content = .object([])
        }

        func array() -> Void {
            if case .array = content { return }
            content = .array([])
        }

        func member(_ key: String) -> Node {
            object()
            let node = Node()
            if case var .object(members) = content {
                content = .empty  // keep the array uniquely referenced while it grows
                if let index = members.firstIndex(where: { $0.0 == key }) {
                    members[index].1 = node
                } else {
                    members.append((key, node))
                }
                content = .object(members)
            }
            return node
        }

        func element() -> Node {
            array()
            let node = Node()
            if case var .array(items) = content {
                content = .empty
                items.append(node)
                content = .array(items)
            }
            return node
        }

        var count: Int {
            switch content {
            case let .array(items): items.count
            case let .object(members): members.count
            default: 0
            }
        }
    }

    static func number(_ value: Double) -> GatewayJSON {
        if value.isNaN { return .string("NaN") }
        if value.isInfinite { return .string(value > 0 ? "+Infinity" : "-Infinity") }
        if value == value.rounded(), abs(value) < 9e15 { return .integer(Int64(value)) }
        return .number(value)
    }

    struct TreeEncoder: Encoder {
        let node: Node
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            node.object()
            return KeyedEncodingContainer(Keyed<Key>(node: node, codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            node.array()
            return Unkeyed(node: node, codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { Single(node: node, codingPath: codingPath) }

        /// `value` into this encoder's node; the few types `JSONEncoder` writes its own way are written that way.
        func encodeValue(_ value: any Encodable) throws {
            switch value {
            case let data as Data: node.content = .scalar(.string(data.base64EncodedString()))
            case let url as URL: node.content = .scalar(.string(url.absoluteString))
            case let decimal as Decimal: node.content = .scalar(GatewayJSONEncoder.number(NSDecimalNumber(decimal: decimal).doubleValue))
            default: try value.encode(to: self)
            }
        }
    }

    struct Single: SingleValueEncodingContainer {
        let node: Node
        let codingPath: [any CodingKey]
        func encodeNil() throws { node.content = .empty }
        func encode(_ value: Bool) throws { node.content = .scalar(.bool(value)) }
        func encode(_ value: String) throws { node.content = .scalar(.string(value)) }
        func encode(_ value: Double) throws { node.content = .scalar(GatewayJSONEncoder.number(value)) }
        func encode(_ value: Float) throws { node.content = .scalar(GatewayJSONEncoder.number(Double("\(value)") ?? Double(value))) }
        func encode(_ value: Int) throws { node.content = .scalar(.integer(Int64(value))) }
        func encode(_ value: Int8) throws { node.content = .scalar(.integer(Int64(value))) }
        func encode(_ value: Int16) throws { node.content = .scalar(.integer(Int64(value))) }
        func encode(_ value: Int32) throws { node.content = .scalar(.integer(Int64(value))) }
        func encode(_ value: Int64) throws { node.content = .scalar(.integer(value)) }
        func encode(_ value: UInt) throws { node.content = .scalar(GatewayJSONEncoder.unsigned(UInt64(value))) }
        func encode(_ value: UInt8) throws { node.content = .scalar(.integer(Int64(value))) }
        func encode(_ value: UInt16) throws { node.content = .scalar(.integer(Int64(value))) }
        func encode(_ value: UInt32) throws { node.content = .scalar(.integer(Int64(value))) }
        func encode(_ value: UInt64) throws { node.content = .scalar(GatewayJSONEncoder.unsigned(value)) }
        func encode<T: Encodable>(_ value: T) throws { try TreeEncoder(node: node, codingPath: codingPath).encodeValue(value) }
    }

    /// An unsigned integer beyond `Int64` is a (rounded) number, as decoding its text gave before.
    static func unsigned(_ value: UInt64) -> GatewayJSON {
        value <= UInt64(Int64.max) ? .integer(Int64(value)) : .number(Double(value))
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: Node
        let codingPath: [any CodingKey]

        private func single(_ key: Key) -> Single { Single(node: node.member(key.stringValue), codingPath: codingPath + [key]) }

        mutating func encodeNil(forKey key: Key) throws { try single(key).encodeNil() }
        mutating func encode(_ value: Bool, forKey key: Key) throws { try single(key).encode(value) }
        mutating func encode(_ value: String, forKey key: Key) throws { try single(key).encode(value) }
        mutating func encode(_ value: Double, forKey key: Key) throws { try single(key).encode(value) }
        mutating func encode(_ value: Float, forKey key: Key) throws { try single(key).encode(value) }
        mutating func encode(_ value: Int, forKey key: Key) throws { try single(key).encode(value) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { try single(key).encode(value) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { try single(key).encode(value) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { try single(key).encode(value) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { try single(key).encode(value) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { try single(key).encode(value) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { try single(key).encode(value) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { try single(key).encode(value) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { try single(key).encode(value) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { try single(key).encode(value) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try single(key).encode(value) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            TreeEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            TreeEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder { TreeEncoder(node: node.member("super"), codingPath: codingPath) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { TreeEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key]) }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let node: Node
        let codingPath: [any CodingKey]
        var count: Int { node.count }

        private func single() -> Single { Single(node: node.element(), codingPath: codingPath) }

        mutating func encodeNil() throws { try single().encodeNil() }
        mutating func encode(_ value: Bool) throws { try single().encode(value) }
        mutating func encode(_ value: String) throws { try single().encode(value) }
        mutating func encode(_ value: Double) throws { try single().encode(value) }
        mutating func encode(_ value: Float) throws { try single().encode(value) }
        mutating func encode(_ value: Int) throws { try single().encode(value) }
        mutating func encode(_ value: Int8) throws { try single().encode(value) }
        mutating func encode(_ value: Int16) throws { try single().encode(value) }
        mutating func encode(_ value: Int32) throws { try single().encode(value) }
        mutating func encode(_ value: Int64) throws { try single().encode(value) }
        mutating func encode(_ value: UInt) throws { try single().encode(value) }
        mutating func encode(_ value: UInt8) throws { try single().encode(value) }
        mutating func encode(_ value: UInt16) throws { try single().encode(value) }
        mutating func encode(_ value: UInt32) throws { try single().encode(value) }
        mutating func encode(_ value: UInt64) throws { try single().encode(value) }
        mutating func encode<T: Encodable>(_ value: T) throws { try single().encode(value) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            TreeEncoder(node: node.element(), codingPath: codingPath).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            TreeEncoder(node: node.element(), codingPath: codingPath).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder { TreeEncoder(node: node.element(), codingPath: codingPath) }
    }
}
