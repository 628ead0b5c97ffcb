/// JSON shape shared by the COLMI enums: `{"kind": "battery", "value": {...}}`, so a program can
/// switch on `kind` without Swift's `_0` keys.
enum COLMITaggedEncoding {
    private enum Keys: String, CodingKey { case kind, value }

    static func encode(_ encoder: any Encoder, kind: String, value: (any Encodable)?) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(kind, forKey: .kind)
        if let value { try c.encode(value, forKey: .value) }
    }
}
