import BluetideBase
import Foundation

/// The one JSON schema every `--json` prints (`docs/json-output.md`, version ``schemaVersion``):
/// one object per line with a `type`, and the same shape wherever a device, a time, a
/// characteristic, a value or an error appears.
enum JSONOutput {
    /// Version of `docs/json-output.md` and `docs/json-output.schema.json` this code writes.
    static let schemaVersion = 2

    /// One line: `fields` plus `"type": type`; fields whose value is unknown (`null`) are left out.
    static func line(_ type: String, _ fields: [String: JSONOutputValue]) -> String {
        var object = fields
        object["type"] = .string(type)
        return JSONOutputValue.object(object).withoutNulls.text
    }

    /// A device: `address` as commands accept it back (random ones end in /R), `addressType`
    /// (`public` or `random`) and `name` when it is known.
    static func device(_ address: BluetoothAddress, name: String? = nil) -> JSONOutputValue {
        var object: [String: JSONOutputValue] = [
            "address": .string(address.description),
            "addressType": .string(address.type == .random ? "random" : "public"),
        ]
        if let name { object["name"] = .string(name) }
        return .object(object)
    }

    /// A device known by text (a value log's `device`): an address with its type when the text
    /// is one (`C6:C5:C4:C3:C2:C1`, `…/R`), otherwise `id` (a platform UUID, a virtual name).
    static func device(text: String, name: String? = nil) -> JSONOutputValue {
        if let address = try? BluetoothAddress(text) { return device(address, name: name) }
        var object: [String: JSONOutputValue] = ["id": .string(text)]
        if let name { object["name"] = .string(name) }
        return .object(object)
    }

    /// A moment: `utc` (ISO-8601 wall clock, milliseconds) and `monotonic` (seconds since the
    /// command started, to the microsecond).
    static func time(monotonic seconds: Double, wall: Date = Date()) -> JSONOutputValue {
        ["utc": .string(isoFormatter.string(from: wall)), "monotonic": .number(seconds)]
    }

    nonisolated(unsafe) private static let isoFormatter: ISO8601DateFormatter = {
        // ISO8601DateFormatter is documented thread-safe for formatting once configured.
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter
    }()

    /// A characteristic: `uuid` (4 hex digits for 16-bit ones, else the full form) and its
    /// assigned `name` when it has one.
    static func characteristic(_ uuid: BluetoothUUID) -> JSONOutputValue {
        var object: [String: JSONOutputValue] = ["uuid": .string(uuid.shortString)]
        if let name = uuid.name { object["name"] = .string(name) }
        return .object(object)
    }

    /// A value: `hex` always; `decoded` (the profile's fields), `profile`, `summary` and
    /// `decodeError` when there are.
    static func value(
        _ bytes: [UInt8], decoded: (any Encodable)? = nil, profile: String? = nil, summary: String? = nil,
        decodeError: String? = nil, derived: (any Encodable)? = nil
    ) -> JSONOutputValue {
        var object: [String: JSONOutputValue] = ["hex": .string(bytes.hexString)]
        if let decoded { object["decoded"] = JSONOutputValue.encoding(decoded) }
        if let derived { object["derived"] = JSONOutputValue.encoding(derived) }
        if let profile { object["profile"] = .string(profile) }
        if let summary { object["summary"] = .string(summary) }
        if let decodeError { object["decodeError"] = .string(decodeError) }
        return .object(object)
    }

    /// The error line `--json` prints on standard error: `{"error":{"code","message","field"}}`.
    static func error(_ message: String, status: ExitStatus, field: String?) -> String {
        var error: [String: JSONOutputValue] = ["code": .string(status.code), "message": .string(message)]
        if let field { error["field"] = .string(field) }
        return JSONOutputValue.object(["error": .object(error)]).text
    }
}
