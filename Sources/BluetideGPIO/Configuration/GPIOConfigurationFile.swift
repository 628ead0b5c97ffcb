import Foundation

extension GPIOConfiguration {
    /// Reads and parses a configuration file. Errors are prefixed with the path
    /// (`reflex.conf: line 3: debounce-ms: …`) in their ``GPIOConfigurationError/message``
    /// only when the file cannot be read; parse errors keep their line numbers.
    public static func load(path: String) throws(GPIOConfigurationError) -> GPIOConfiguration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw GPIOConfigurationError(line: nil, key: nil,
                message: "cannot read GPIO configuration file \(path): it must exist and be readable UTF-8 text")
        }
        return try parse(text)
    }

    /// The configuration as file text, every key written out (parsing it gives this
    /// configuration back). `bluetide` can print it as a starting point.
    public var fileText: String {
        func number(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        }
        var lines = [
            "# Bluetide reflex trainer GPIO configuration (docs/gpio-config.md)",
            "backend = \(backend.rawValue)",
            "chip = \(chipPath)",
        ]
        if let deviceName {
            let escaped = deviceName.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            lines.append("device-name = \"\(escaped)\"")
        } else {
            lines.append("# device-name = \"Reflex-Gym\"   # default: Reflex-XXXX from the address")
        }
        lines += [
            "debounce-ms = \(debounceMilliseconds)",
            "sensor-active-low = \(sensorActiveLow)",
            "sensor-bias = \(sensorBias.rawValue)",
        ]
        for target in targets {
            lines += ["", "[target.\(target.index)]", "colour = \(target.colour)", "led = \(target.ledLine)", "sensor = \(target.sensorLine)"]
        }
        let a = athlete
        lines += [
            "", "[sim]",
            "reaction-mean-ms = \(number(a.meanReactionMilliseconds))",
            "reaction-sd-ms = \(number(a.reactionStandardDeviationMilliseconds))",
            "reaction-min-ms = \(number(a.minimumReactionMilliseconds))",
            "reaction-max-ms = \(number(a.maximumReactionMilliseconds))",
            "miss-probability = \(number(a.missProbability))",
            "wrong-target-probability = \(number(a.wrongTargetProbability))",
            "hold-ms = \(number(a.holdMilliseconds))",
        ]
        lines.append(simulationSeed.map { "seed = \($0)" } ?? "# seed = 42   # default: a different athlete each run")
        return lines.joined(separator: "\n") + "\n"
    }
}
