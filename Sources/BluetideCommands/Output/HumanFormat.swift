/// Readable output of decoded values: rounded numbers with their units, never a JSON tail
/// (`cadence 90.02 rpm, speed 13.73 km/h` rather than `{"cadenceRPM":90.02197802197801,…}`).
enum HumanFormat {
    /// Unit suffixes of decoded field names (longest first) and how they are printed.
    private static let units: [(suffix: String, unit: String)] = [
        ("KilometresPerHour", "km/h"), ("MetresPerSecond", "m/s"), ("Kilometres", "km"), ("Metres", "m"),
        ("Milliseconds", "ms"), ("Seconds", "s"), ("Minutes", "min"), ("Watts", "W"), ("Kilojoules", "kJ"),
        ("Kilocalories", "kcal"), ("Joules", "J"), ("Percent", "%"), ("Celsius", "°C"), ("Kilograms", "kg"),
        ("RPM", "rpm"), ("Rpm", "rpm"), ("BPM", "bpm"), ("Bpm", "bpm"), ("Dbm", "dBm"), ("DBm", "dBm"), ("Degrees", "°"),
    ]

    /// A number rounded to at most `decimals` decimals, trailing zeros dropped: 13.7345 → "13.73".
    static func number(_ value: Double, decimals: Int = 2) -> String {
        guard value.isFinite else { return "\(value)" }
        let scale = (0..<decimals).reduce(1.0) { value, _ in value * 10 }
        let rounded = (value * scale).rounded() / scale
        if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int64(rounded)) }
        var text = String(rounded)
        if text.contains("e") { return text }
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }

    /// `cadenceRPM` → ("cadence", "rpm"); `instantaneousPower` → ("instantaneous power", nil).
    static func split(_ name: String) -> (label: String, unit: String?) {
        for (suffix, unit) in units where name.hasSuffix(suffix) && name.count > suffix.count {
            return (words(String(name.dropLast(suffix.count))), unit)
        }
        return (words(name), nil)
    }

    /// A lowerCamelCase identifier as words (`heldStale` → `held stale`); anything else (names,
    /// `R02_B3EE`, text with spaces) as it is.
    static func words(_ identifier: String) -> String {
        guard let first = identifier.first, first.isLowercase,
              identifier.allSatisfy({ $0.isASCII && $0.isLetter }), identifier.contains(where: \.isUppercase) else {
            return identifier
        }
        var text = ""
        for character in identifier {
            if character.isUppercase { text += " " + character.lowercased() } else { text.append(character) }
        }
        return text
    }

    /// A decoded object as `label value unit` pairs joined by commas (nested objects in
    /// parentheses, arrays space-separated); scalars as themselves. A quantity given in two
    /// units (`speedKilometresPerHour`, `speedMetresPerSecond`) is printed once.
    static func describe(_ value: JSONOutputValue) -> String {
        switch value {
        case let .object(members):
            var labels: Set<String> = []
            return members.keys.sorted().compactMap { key -> String? in
                let member = members[key]!
                if case .null = member { return nil }
                let (label, unit) = split(key)
                guard labels.insert(label).inserted else { return nil }
                let text = describe(member)
                if case .object = member { return "\(label) (\(text))" }
                return unit.map { "\(label) \(text) \($0)" } ?? "\(label) \(text)"
            }.joined(separator: ", ")
        case let .array(items): return items.map(describe).joined(separator: " ")
        case let .number(number): return self.number(number)
        case let .integer(integer): return String(integer)
        case let .string(text): return words(text)
        case let .bool(flag): return flag ? "yes" : "no"
        case .null: return "–"
        }
    }
}
