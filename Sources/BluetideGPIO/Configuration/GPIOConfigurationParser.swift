extension GPIOConfiguration {
    /// Top-level keys and what they hold (for "unknown key" messages and docs).
    static let generalKeys = ["backend", "chip", "device-name", "debounce-ms", "sensor-active-low", "sensor-bias"]
    /// Keys of a `[target.N]` section.
    static let targetKeys = ["led", "sensor", "colour"]
    /// Keys of the `[sim]` section.
    static let simKeys = [
        "reaction-mean-ms", "reaction-sd-ms", "reaction-min-ms", "reaction-max-ms",
        "miss-probability", "wrong-target-probability", "hold-ms", "seed",
    ]

    /// Parses a configuration file's text (format: docs/gpio-config.md) and validates it.
    /// Keys not given keep the values of ``reflexDefault``; a file with no targets at all uses
    /// the default map, a file with some targets must give all six.
    public static func parse(_ text: String) throws(GPIOConfigurationError) -> GPIOConfiguration {
        let entries = try ConfigurationFile.entries(of: text)
        var config = reflexDefault
        var lines: [String: Int] = [:]
        var targetFields: [Int: [String: (value: String, line: Int)]] = [:]

        for entry in entries {
            let key = entry.key
            let parts = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if parts.count == 1 {
                try config.applyGeneral(key, entry.value, line: entry.line)
            } else if parts.count == 2, parts[0] == "sim" {
                try config.applySimulation(parts[1], entry.value, line: entry.line)
            } else if parts.count == 3, parts[0] == "target" {
                guard let index = Int(parts[1]), (0..<targetCount).contains(index) else {
                    throw GPIOConfigurationError(line: entry.line, key: key,
                        message: "target index \"\(parts[1])\" out of range: expected 0…\(targetCount - 1)")
                }
                guard targetKeys.contains(parts[2]) else {
                    throw GPIOConfigurationError(line: entry.line, key: key,
                        message: "unknown key \"\(parts[2])\" in a target: expected one of \(targetKeys.joined(separator: ", "))")
                }
                targetFields[index, default: [:]][parts[2]] = (entry.value, entry.line)
            } else {
                throw GPIOConfigurationError(line: entry.line, key: key, message: "unknown key: expected one of "
                    + "\(generalKeys.joined(separator: ", ")), target.N.{\(targetKeys.joined(separator: ","))} (N = 0…5) "
                    + "or sim.{\(simKeys.joined(separator: ","))}")
            }
            lines[key] = entry.line
        }

        if !targetFields.isEmpty {
            let missing = (0..<targetCount).filter { targetFields[$0] == nil }
            if !missing.isEmpty {
                let list = missing.map(String.init).joined(separator: ", ")
                throw GPIOConfigurationError(line: nil, key: nil, message: "target\(missing.count == 1 ? "" : "s") "
                    + "\(list) missing: give all six targets 0…5 a led and a sensor line, or none to use the default map")
            }
            var targets: [GPIOTarget] = []
            for index in 0..<targetCount {
                let fields = targetFields[index] ?? [:]
                func lineNumber(_ name: String) throws(GPIOConfigurationError) -> UInt32 {
                    let key = "target.\(index).\(name)"
                    guard let field = fields[name] else {
                        throw GPIOConfigurationError(line: nil, key: key,
                            message: "missing: each target needs a led and a sensor line")
                    }
                    return try parseLine(field.value, key: key, line: field.line)
                }
                let led = try lineNumber("led")
                let sensor = try lineNumber("sensor")
                let colour = fields["colour"]?.value ?? defaultTargets[index].colour
                targets.append(GPIOTarget(index: index, colour: colour, ledLine: led, sensorLine: sensor))
            }
            config.targets = targets
        }
        try config.validate(lines: lines)
        return config
    }

    /// Checks the values together: every line has one role, debounce and simulation values in range.
    /// `lines` maps keys to file line numbers for the messages (empty for a configuration built in code).
    public func validate(lines: [String: Int] = [:]) throws(GPIOConfigurationError) {
        guard targets.count == Self.targetCount, targets.map(\.index) == Array(0..<Self.targetCount) else {
            throw GPIOConfigurationError(line: nil, key: nil,
                message: "expected six targets with indices 0…5, found \(targets.map(\.index))")
        }
        guard Self.debounceRange.contains(debounceMilliseconds) else {
            throw .invalid("debounce-ms", line: lines["debounce-ms"],
                expected: "an integer number of milliseconds 0…\(Self.debounceRange.upperBound)", found: "\(debounceMilliseconds)")
        }
        var owners: [UInt32: String] = [:]
        for target in targets {
            for (role, line) in [("led", target.ledLine), ("sensor", target.sensorLine)] {
                let key = "target.\(target.index).\(role)"
                let place = lines[key].map { " (line \($0))" } ?? ""
                if let first = owners[line] {
                    let sameTarget = first.hasPrefix("target.\(target.index).")
                    let what = sameTarget ? "used as both LED and sensor" : "used twice"
                    throw GPIOConfigurationError(line: lines[key], key: key,
                        message: "GPIO line \(line) is \(what): by \(first) and \(key)\(place); give every LED and sensor its own line")
                }
                owners[line] = key + place
            }
        }
        let a = athlete
        func probability(_ value: Double, _ key: String) throws(GPIOConfigurationError) {
            guard value >= 0, value <= 1 else {
                throw .invalid("sim.\(key)", line: lines["sim.\(key)"], expected: "a probability 0…1", found: "\(value)")
            }
        }
        try probability(a.missProbability, "miss-probability")
        try probability(a.wrongTargetProbability, "wrong-target-probability")
        guard a.missProbability + a.wrongTargetProbability <= 1 else {
            throw GPIOConfigurationError(line: lines["sim.wrong-target-probability"], key: "sim.wrong-target-probability",
                message: "miss-probability + wrong-target-probability must be at most 1, found \(a.missProbability + a.wrongTargetProbability)")
        }
        guard a.minimumReactionMilliseconds <= a.maximumReactionMilliseconds else {
            throw GPIOConfigurationError(line: lines["sim.reaction-max-ms"] ?? lines["sim.reaction-min-ms"], key: "sim.reaction-max-ms",
                message: "must be at least sim.reaction-min-ms (\(a.minimumReactionMilliseconds)), found \(a.maximumReactionMilliseconds)")
        }
    }

    private mutating func applyGeneral(_ key: String, _ value: String, line: Int) throws(GPIOConfigurationError) {
        switch key {
        case "backend":
            guard let kind = GPIOBackendKind(rawValue: value) else {
                throw .invalid(key, line: line, expected: "linux or sim", found: value)
            }
            backend = kind
        case "chip":
            chipPath = try Self.parseChip(value, line: line)
        case "device-name":
            let bytes = value.utf8.count
            guard bytes >= 1, bytes <= Self.maxDeviceNameBytes else {
                throw .invalid(key, line: line, expected: "a name of 1…\(Self.maxDeviceNameBytes) UTF-8 bytes", found: value)
            }
            deviceName = value
        case "debounce-ms":
            guard let ms = Int(value), Self.debounceRange.contains(ms) else {
                throw .invalid(key, line: line,
                    expected: "an integer number of milliseconds 0…\(Self.debounceRange.upperBound)", found: value)
            }
            debounceMilliseconds = ms
        case "sensor-active-low":
            sensorActiveLow = try Self.parseBool(value, key: key, line: line)
        case "sensor-bias":
            guard let bias = GPIOBias(rawValue: value) else {
                throw .invalid(key, line: line, expected: GPIOBias.allCases.map(\.rawValue).joined(separator: ", "), found: value)
            }
            sensorBias = bias
        default:
            throw GPIOConfigurationError(line: line, key: key, message: "unknown key: expected one of "
                + "\(Self.generalKeys.joined(separator: ", ")), a [target.N] section or a [sim] section")
        }
    }

    private mutating func applySimulation(_ name: String, _ value: String, line: Int) throws(GPIOConfigurationError) {
        let key = "sim.\(name)"
        func milliseconds() throws(GPIOConfigurationError) -> Double {
            guard let ms = Double(value), ms.isFinite, ms >= 0, ms <= 60_000 else {
                throw .invalid(key, line: line, expected: "milliseconds 0…60000", found: value)
            }
            return ms
        }
        func probability() throws(GPIOConfigurationError) -> Double {
            guard let p = Double(value), p >= 0, p <= 1 else {
                throw .invalid(key, line: line, expected: "a probability 0…1", found: value)
            }
            return p
        }
        switch name {
        case "reaction-mean-ms": athlete.meanReactionMilliseconds = try milliseconds()
        case "reaction-sd-ms": athlete.reactionStandardDeviationMilliseconds = try milliseconds()
        case "reaction-min-ms": athlete.minimumReactionMilliseconds = try milliseconds()
        case "reaction-max-ms": athlete.maximumReactionMilliseconds = try milliseconds()
        case "hold-ms": athlete.holdMilliseconds = try milliseconds()
        case "miss-probability": athlete.missProbability = try probability()
        case "wrong-target-probability": athlete.wrongTargetProbability = try probability()
        case "seed":
            guard let seed = UInt64(value) else {
                throw .invalid(key, line: line, expected: "an integer 0…18446744073709551615", found: value)
            }
            simulationSeed = seed
        default:
            throw GPIOConfigurationError(line: line, key: key,
                message: "unknown key: expected one of \(Self.simKeys.map { "sim.\($0)" }.joined(separator: ", "))")
        }
    }

    static func parseBool(_ value: String, key: String, line: Int) throws(GPIOConfigurationError) -> Bool {
        switch value {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw .invalid(key, line: line, expected: "true or false", found: value)
        }
    }

    static func parseLine(_ value: String, key: String, line: Int) throws(GPIOConfigurationError) -> UInt32 {
        guard let number = UInt32(value), lineRange.contains(number) else {
            throw .invalid(key, line: line, expected: "a GPIO line number \(lineRange.lowerBound)…\(lineRange.upperBound)", found: value)
        }
        return number
    }

    /// `/dev/gpiochipN`, `gpiochipN` or `N` → a device path.
    static func parseChip(_ value: String, line: Int) throws(GPIOConfigurationError) -> String {
        if let n = UInt32(value) { return "/dev/gpiochip\(n)" }
        if value.hasPrefix("gpiochip"), UInt32(value.dropFirst("gpiochip".count)) != nil { return "/dev/\(value)" }
        guard value.hasPrefix("/"), value.count > 1 else {
            throw .invalid("chip", line: line, expected: "a device path like /dev/gpiochip0 (or gpiochip0, or 0)", found: value)
        }
        return value
    }
}

/// The `key = value` / `[section]` file syntax, independent of what the keys mean.
enum ConfigurationFile {
    /// One `key = value` line, with its section folded into the key (`[sim]` + `seed` → `sim.seed`).
    struct Entry: Equatable {
        var key: String
        var value: String
        var line: Int
    }

    static func entries(of text: String) throws(GPIOConfigurationError) -> [Entry] {
        var entries: [Entry] = []
        var section = ""
        var firstLine: [String: Int] = [:]
        let rows = text.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, raw) in rows.enumerated() {
            let number = index + 1
            let row = try stripComment(String(raw), line: number).trimmingWhitespace()
            if row.isEmpty { continue }
            if row.hasPrefix("[") {
                guard row.hasSuffix("]"), row.count > 2 else {
                    throw GPIOConfigurationError(line: number, key: nil, message: "expected a section like [sim] or [target.0], found \"\(row)\"")
                }
                let name = String(row.dropFirst().dropLast()).trimmingWhitespace()
                guard isKey(name) else {
                    throw GPIOConfigurationError(line: number, key: nil, message: "expected a section like [sim] or [target.0], found \"\(row)\"")
                }
                section = name
                continue
            }
            guard let equals = row.firstIndex(of: "=") else {
                throw GPIOConfigurationError(line: number, key: nil, message: "expected \"key = value\" or \"[section]\", found \"\(row)\"")
            }
            let name = String(row[..<equals]).trimmingWhitespace()
            guard isKey(name) else {
                throw GPIOConfigurationError(line: number, key: nil,
                    message: "expected a key of letters, digits, '-' and '.', found \"\(name)\"")
            }
            let key = section.isEmpty ? name : "\(section).\(name)"
            let value = try unquote(String(row[row.index(after: equals)...]).trimmingWhitespace(), key: key, line: number)
            if let first = firstLine[key] {
                throw GPIOConfigurationError(line: number, key: key, message: "set twice (first on line \(first))")
            }
            firstLine[key] = number
            entries.append(Entry(key: key, value: value, line: number))
        }
        return entries
    }

    private static func isKey(_ name: String) -> Bool {
        !name.isEmpty && name.unicodeScalars.allSatisfy { ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "-" || $0 == "." || $0 == "_" }
    }

    /// Removes a `#` comment that is not inside double quotes.
    private static func stripComment(_ row: String, line: Int) throws(GPIOConfigurationError) -> String {
        var inQuotes = false
        var escaped = false
        for index in row.indices {
            let c = row[index]
            if escaped { escaped = false; continue }
            if c == "\\" && inQuotes { escaped = true; continue }
            if c == "\"" { inQuotes.toggle() }
            if c == "#" && !inQuotes { return String(row[..<index]) }
        }
        return row
    }

    /// `"text"` → `text` (with `\"` and `\\`); bare values are returned as they are.
    private static func unquote(_ value: String, key: String, line: Int) throws(GPIOConfigurationError) -> String {
        guard value.hasPrefix("\"") else { return value }
        guard value.count >= 2, value.hasSuffix("\""), !value.hasSuffix("\\\"") || value.hasSuffix("\\\\\"") else {
            throw GPIOConfigurationError(line: line, key: key, message: "unterminated quoted string: \(value)")
        }
        var result = ""
        var escaped = false
        for c in value.dropFirst().dropLast() {
            if escaped { result.append(c); escaped = false } else if c == "\\" { escaped = true } else { result.append(c) }
        }
        return result
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and carriage returns.
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let first = s.first, first == " " || first == "\t" || first == "\r" { s.removeFirst() }
        while let last = s.last, last == " " || last == "\t" || last == "\r" { s.removeLast() }
        return String(s)
    }
}
