import BluetideBase

/// The text form of value logs: one JSON object per line (JSON Lines), a header first, then one
/// record per line. Field names and their order are fixed; see docs/value-log-format.md.
///
/// Writing is deterministic (same record, same line). Reading accepts any field order, ignores
/// fields it does not know (so later version-1 writers may add some), treats `null` like an
/// absent optional field, and names the line, field, expectation and finding of any fault.
public enum ValueLogFormat {
    /// Field names, as written.
    enum Key {
        static let format = "format"
        static let version = "version"
        static let startedAt = "started_at"
        static let tool = "tool"
        static let toolVersion = "tool_version"
        static let timestamp = "t"
        static let wallClock = "wall_time"
        static let device = "device"
        static let deviceName = "device_name"
        static let service = "service"
        static let characteristic = "characteristic"
        static let operation = "operation"
        static let value = "value"
        static let profile = "profile"
    }

    /// Largest timestamp accepted (about 31 years of seconds): keeps later arithmetic on
    /// durations in range.
    public static let maximumTimestamp: Double = 1e9

    // MARK: Writing

    /// The header line, without the line feed.
    public static func line(for header: ValueLogHeader) -> String {
        var fields = [
            "\"\(Key.format)\":" + JSONText.quoted(ValueLogHeader.formatName),
            "\"\(Key.version)\":\(header.version)",
        ]
        if let startedAt = header.startedAt { fields.append("\"\(Key.startedAt)\":" + JSONText.quoted(startedAt.iso8601)) }
        if let tool = header.tool { fields.append("\"\(Key.tool)\":" + JSONText.quoted(tool)) }
        if let toolVersion = header.toolVersion { fields.append("\"\(Key.toolVersion)\":" + JSONText.quoted(toolVersion)) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// The record's line, without the line feed. Throws when a field cannot be written: a
    /// timestamp that is not finite, negative or beyond ``maximumTimestamp``, an empty device
    /// address, or a wall-clock time outside years 0000-9999.
    public static func line(for record: ValueRecord) throws(ValueLogError) -> String {
        guard record.timestamp.isFinite, record.timestamp >= 0, record.timestamp <= maximumTimestamp else {
            throw .unrepresentable(field: Key.timestamp, reason: "must be a finite number of seconds from 0 to 1e9, is \(record.timestamp)")
        }
        guard !record.device.address.isEmpty else {
            throw .unrepresentable(field: Key.device, reason: "must not be empty")
        }
        var fields = ["\"\(Key.timestamp)\":" + formatSeconds(record.timestamp)]
        if let wallClock = record.wallClock {
            guard wallClock.isRepresentable else {
                throw .unrepresentable(field: Key.wallClock, reason: "must lie in years 0000-9999")
            }
            fields.append("\"\(Key.wallClock)\":" + JSONText.quoted(wallClock.iso8601))
        }
        fields.append("\"\(Key.device)\":" + JSONText.quoted(record.device.address))
        if let name = record.device.name { fields.append("\"\(Key.deviceName)\":" + JSONText.quoted(name)) }
        if let service = record.service { fields.append("\"\(Key.service)\":" + JSONText.quoted(service.shortString)) }
        fields.append("\"\(Key.characteristic)\":" + JSONText.quoted(record.characteristic.shortString))
        fields.append("\"\(Key.operation)\":" + JSONText.quoted(record.operation.rawValue))
        fields.append("\"\(Key.value)\":" + JSONText.quoted(record.value.hexString))
        if let profile = record.profile { fields.append("\"\(Key.profile)\":" + JSONText.quoted(profile)) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// Seconds in the shortest decimal text that reads back as the same `Double` (`1.10352`,
    /// `0.0`, `1e-05`): valid JSON for every finite value.
    static func formatSeconds(_ seconds: Double) -> String { "\(seconds)" }

    // MARK: Reading

    /// Reads the header from line `lineNumber` (normally 1).
    public static func header(from line: some Collection<UInt8>, lineNumber: Int = 1) throws(ValueLogLineError) -> ValueLogHeader {
        let fields = try object(from: line, lineNumber: lineNumber, role: "a value log header")
        guard let format = fields[Key.format] else {
            throw ValueLogLineError(
                line: lineNumber, field: Key.format, expected: "\"\(ValueLogHeader.formatName)\" (a value log header)",
                found: "no such field: this is not a Bluetide value log, or its header line is missing")
        }
        guard case let .string(name) = format, name == ValueLogHeader.formatName else {
            throw ValueLogLineError(
                line: lineNumber, field: Key.format, expected: "\"\(ValueLogHeader.formatName)\"", found: format.shortDescription)
        }
        let versionValue = fields[Key.version]
        guard case let .number(version, text)? = versionValue, version == version.rounded(), version >= 1,
              !text.contains(".") && !text.contains("e") && !text.contains("E")
        else {
            throw ValueLogLineError(
                line: lineNumber, field: Key.version, expected: "the integer \(ValueLogHeader.currentVersion)",
                found: versionValue?.shortDescription ?? "no such field")
        }
        guard version <= Double(ValueLogHeader.currentVersion) else {
            throw ValueLogLineError(
                line: lineNumber, field: Key.version, expected: "\(ValueLogHeader.currentVersion) (the newest this reader knows)",
                found: "\(text) (written by a newer Bluetide)")
        }
        let startedAt = try optionalTime(fields, Key.startedAt, lineNumber)
        let tool = try optionalString(fields, Key.tool, lineNumber)
        let toolVersion = try optionalString(fields, Key.toolVersion, lineNumber)
        return ValueLogHeader(startedAt: startedAt, tool: tool, toolVersion: toolVersion, version: Int(version))
    }

    /// Reads one record from line `lineNumber`.
    public static func record(from line: some Collection<UInt8>, lineNumber: Int) throws(ValueLogLineError) -> ValueRecord {
        let fields = try object(from: line, lineNumber: lineNumber, role: "a value record")
        func fail(_ field: String, _ expected: String, _ found: JSONValue?) -> ValueLogLineError {
            ValueLogLineError(line: lineNumber, field: field, expected: expected, found: found?.shortDescription ?? "no such field")
        }

        let timestampValue = fields[Key.timestamp]
        guard case let .number(timestamp, _)? = timestampValue, timestamp >= 0, timestamp <= maximumTimestamp else {
            throw fail(Key.timestamp, "seconds since the recording started (a number from 0 to 1e9)", timestampValue)
        }
        let wallClock = try optionalTime(fields, Key.wallClock, lineNumber)

        let deviceValue = fields[Key.device]
        guard case let .string(address)? = deviceValue, !address.isEmpty else {
            throw fail(Key.device, "the device address as a non-empty string", deviceValue)
        }
        let deviceName = try optionalString(fields, Key.deviceName, lineNumber)

        let service = try optionalUUID(fields, Key.service, lineNumber)
        guard let characteristic = try optionalUUID(fields, Key.characteristic, lineNumber) else {
            throw fail(Key.characteristic, uuidExpectation, fields[Key.characteristic])
        }

        let operationValue = fields[Key.operation]
        guard case let .string(operationName)? = operationValue, let operation = ValueOperation(rawValue: operationName) else {
            let names = ValueOperation.allCases.map(\.rawValue).joined(separator: ", ")
            throw fail(Key.operation, "one of \(names)", operationValue)
        }

        let valueValue = fields[Key.value]
        guard case let .string(hex)? = valueValue, let value = strictHex(hex) else {
            throw fail(Key.value, "the value as an even number of hex digits (\"\" when empty)", valueValue)
        }

        let profile = try optionalString(fields, Key.profile, lineNumber)
        return ValueRecord(
            timestamp: timestamp, wallClock: wallClock, device: DeviceIdentity(address: address, name: deviceName),
            service: service, characteristic: characteristic, operation: operation, value: value, profile: profile)
    }

    // MARK: Field helpers

    static let uuidExpectation = "a UUID string (\"2A5B\" or \"6E400001-B5A3-F393-E0A9-E50E24DCCA9E\")"

    /// Parses the line as a JSON object, or throws naming the syntax error's column.
    private static func object(from line: some Collection<UInt8>, lineNumber: Int, role: String) throws(ValueLogLineError) -> JSONValue {
        let value: JSONValue
        do {
            value = try JSONParser.parse(Array(line))
        } catch {
            throw ValueLogLineError(
                line: lineNumber, field: "JSON", expected: "\(role) as one JSON object",
                found: "invalid JSON at column \(error.column): \(error.message)")
        }
        guard case .object = value else {
            throw ValueLogLineError(line: lineNumber, field: "record", expected: "\(role) as one JSON object", found: value.shortDescription)
        }
        return value
    }

    private static func optionalString(_ fields: JSONValue, _ key: String, _ lineNumber: Int) throws(ValueLogLineError) -> String? {
        switch fields[key] {
        case nil, .null?: return nil
        case let .string(text)?: return text
        case let other?:
            throw ValueLogLineError(line: lineNumber, field: key, expected: "a string", found: other.shortDescription)
        }
    }

    private static func optionalTime(_ fields: JSONValue, _ key: String, _ lineNumber: Int) throws(ValueLogLineError) -> WallClockTime? {
        let expected = "an ISO-8601 time such as \"2026-11-21T12:26:23.125Z\""
        switch fields[key] {
        case nil, .null?: return nil
        case let .string(text)?:
            guard let time = try? WallClockTime(iso8601: text) else {
                throw ValueLogLineError(line: lineNumber, field: key, expected: expected, found: JSONValue.string(text).shortDescription)
            }
            return time
        case let other?:
            throw ValueLogLineError(line: lineNumber, field: key, expected: expected, found: other.shortDescription)
        }
    }

    private static func optionalUUID(_ fields: JSONValue, _ key: String, _ lineNumber: Int) throws(ValueLogLineError) -> BluetoothUUID? {
        switch fields[key] {
        case nil, .null?: return nil
        case let .string(text)?:
            // ASCII only: the UUID parser is given nothing but plain hex digits and dashes.
            guard text.utf8.allSatisfy({ $0 < 0x80 }), let uuid = try? BluetoothUUID(text) else {
                throw ValueLogLineError(line: lineNumber, field: key, expected: uuidExpectation, found: JSONValue.string(text).shortDescription)
            }
            return uuid
        case let other?:
            throw ValueLogLineError(line: lineNumber, field: key, expected: uuidExpectation, found: other.shortDescription)
        }
    }

    /// Bytes from hex digits only (either case, no separators, even count), else nil.
    static func strictHex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = hexNibble(digits[index]), let low = hexNibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexNibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
