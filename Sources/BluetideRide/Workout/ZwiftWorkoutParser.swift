import Foundation

/// Reads Zwift workout files (`.zwo`): XML with `<name>`, `<description>` and a `<workout>` of
/// `Warmup`, `Ramp`, `SteadyState`, `IntervalsT`, `Cooldown`, `FreeRide` and `MaxEffort`
/// elements whose powers are fractions of FTP and durations are seconds.
public enum ZwiftWorkoutParser {
    /// The workout in `text`; throws ``WorkoutParseError`` naming the line and element.
    public static func parse(_ text: String, fallbackName: String = "workout") throws -> Workout {
        let elements = try XMLScanner.scan(text)
        var name: String?
        var summary: String?
        var steps: [WorkoutStep] = []
        var inWorkout = false
        for element in elements {
            switch element.kind {
            case let .start(tag, attributes, selfClosing, line):
                let lower = tag.lowercased()
                if lower == "workout" {
                    inWorkout = !selfClosing
                    continue
                }
                guard inWorkout else { continue }
                steps += try self.steps(for: tag, attributes: attributes, line: line)
            case let .end(tag):
                if tag.lowercased() == "workout" { inWorkout = false }
            case let .text(parent, content):
                switch parent.lowercased() {
                case "name": name = name ?? content
                case "description": summary = summary ?? content
                default: break
                }
            }
        }
        guard !steps.isEmpty else { throw WorkoutParseError(line: nil, message: "no <workout> steps found") }
        return Workout(name: name ?? fallbackName, summary: summary, steps: steps)
    }

    private static func steps(for tag: String, attributes: [String: String], line: Int) throws -> [WorkoutStep] {
        func number(_ key: String, required: Bool = true) throws -> Double? {
            guard let raw = attributes[key.lowercased()] else {
                if required { throw WorkoutParseError(line: line, message: "<\(tag)> has no \(key) attribute") }
                return nil
            }
            guard let value = Double(raw.trimmingCharacters(in: .whitespaces)), value.isFinite else {
                throw WorkoutParseError(line: line, message: "<\(tag) \(key)=\"\(raw)\">: not a number")
            }
            return value
        }
        let cadence = try number("Cadence", required: false)
        switch tag.lowercased() {
        case "warmup", "cooldown", "ramp":
            let duration = try number("Duration")!
            let low = try number("PowerLow")!, high = try number("PowerHigh")!
            return [WorkoutStep(
                kind: tag.lowercased() == "ramp" ? "ramp" : tag.lowercased(), durationSeconds: duration,
                startPower: .ftpFraction(low), endPower: .ftpFraction(high), cadenceRpm: cadence)]
        case "steadystate", "solidstate":
            let duration = try number("Duration")!
            if let power = try number("Power", required: false) {
                return [WorkoutStep(kind: "steady", durationSeconds: duration, startPower: .ftpFraction(power), cadenceRpm: cadence)]
            }
            // Some files give a steady state as PowerLow/PowerHigh; hold their middle.
            let low = try number("PowerLow")!, high = try number("PowerHigh")!
            return [WorkoutStep(kind: "steady", durationSeconds: duration, startPower: .ftpFraction((low + high) / 2), cadenceRpm: cadence)]
        case "intervalst":
            let repeats = Int(try number("Repeat")!)
            guard repeats >= 1, repeats <= 1000 else { throw WorkoutParseError(line: line, message: "<\(tag) Repeat=\(repeats)>: expected 1…1000") }
            let on = try number("OnDuration")!, off = try number("OffDuration")!
            let onPower = try number("OnPower", required: false) ?? number("PowerOnHigh")!
            let offPower = try number("OffPower", required: false) ?? number("PowerOffLow")!
            let restCadence = try number("CadenceResting", required: false)
            return (0..<repeats).flatMap { _ in
                [
                    WorkoutStep(kind: "interval on", durationSeconds: on, startPower: .ftpFraction(onPower), cadenceRpm: cadence),
                    WorkoutStep(kind: "interval off", durationSeconds: off, startPower: .ftpFraction(offPower), cadenceRpm: restCadence),
                ]
            }
        case "freeride", "maxeffort":
            let duration = try number("Duration")!
            return [WorkoutStep(kind: tag.lowercased() == "freeride" ? "free ride" : "max effort", durationSeconds: duration, startPower: .free)]
        case "textevent", "textnotification":
            return []
        default:
            return []
        }
    }
}

/// A small XML reader for workout files: start and end tags with their attributes, and the text
/// inside an element. No DTDs, namespaces or CDATA (workout files have none); entities of XML's
/// five named and numeric kinds are decoded.
enum XMLScanner {
    struct Element {
        enum Kind {
            case start(tag: String, attributes: [String: String], selfClosing: Bool, line: Int)
            case end(tag: String)
            case text(parent: String, content: String)
        }
        var kind: Kind
    }

    static func scan(_ text: String) throws -> [Element] {
        let chars = Array(text.unicodeScalars)
        var out: [Element] = []
        var stack: [String] = []
        var i = 0
        var line = 1
        func advance(_ n: Int = 1) {
            for _ in 0..<n where i < chars.count {
                if chars[i] == "\n" { line += 1 }
                i += 1
            }
        }
        func starts(with s: String) -> Bool {
            let scalars = Array(s.unicodeScalars)
            guard i + scalars.count <= chars.count else { return false }
            return Array(chars[i..<(i + scalars.count)]) == scalars
        }
        func skip(past terminator: String, what: String) throws {
            let startLine = line
            while i < chars.count, !starts(with: terminator) { advance() }
            guard i < chars.count else { throw WorkoutParseError(line: startLine, message: "\(what) is never closed") }
            advance(terminator.unicodeScalars.count)
        }
        while i < chars.count {
            if chars[i] != "<" {
                var content = String.UnicodeScalarView()
                while i < chars.count, chars[i] != "<" {
                    content.append(chars[i])
                    advance()
                }
                let trimmed = decode(String(content)).trimmingCharacters(in: .whitespacesAndNewlines)
                if !trimmed.isEmpty, let parent = stack.last { out.append(Element(kind: .text(parent: parent, content: trimmed))) }
                continue
            }
            if starts(with: "<!--") { try skip(past: "-->", what: "a comment"); continue }
            if starts(with: "<?") { try skip(past: "?>", what: "a declaration"); continue }
            if starts(with: "<!") { try skip(past: ">", what: "a declaration"); continue }
            let tagLine = line
            advance()
            let closing = i < chars.count && chars[i] == "/"
            if closing { advance() }
            var name = String.UnicodeScalarView()
            while i < chars.count, !" \t\r\n/>".unicodeScalars.contains(chars[i]) {
                name.append(chars[i])
                advance()
            }
            let tag = String(name)
            guard !tag.isEmpty else { throw WorkoutParseError(line: tagLine, message: "a tag without a name") }
            var attributes: [String: String] = [:]
            var selfClosing = false
            while true {
                while i < chars.count, " \t\r\n".unicodeScalars.contains(chars[i]) { advance() }
                guard i < chars.count else { throw WorkoutParseError(line: tagLine, message: "<\(tag) is never closed") }
                if chars[i] == ">" { advance(); break }
                if chars[i] == "/", i + 1 < chars.count, chars[i + 1] == ">" { selfClosing = true; advance(2); break }
                var key = String.UnicodeScalarView()
                while i < chars.count, !" \t\r\n=/>".unicodeScalars.contains(chars[i]) {
                    key.append(chars[i])
                    advance()
                }
                while i < chars.count, " \t\r\n".unicodeScalars.contains(chars[i]) { advance() }
                guard i < chars.count, chars[i] == "=" else {
                    throw WorkoutParseError(line: line, message: "<\(tag)>: attribute \(String(key)) has no value")
                }
                advance()
                while i < chars.count, " \t\r\n".unicodeScalars.contains(chars[i]) { advance() }
                guard i < chars.count, chars[i] == "\"" || chars[i] == "'" else {
                    throw WorkoutParseError(line: line, message: "<\(tag)>: attribute \(String(key)) is not quoted")
                }
                let quote = chars[i]
                advance()
                var value = String.UnicodeScalarView()
                while i < chars.count, chars[i] != quote {
                    value.append(chars[i])
                    advance()
                }
                guard i < chars.count else { throw WorkoutParseError(line: tagLine, message: "<\(tag)>: an attribute value is never closed") }
                advance()
                attributes[String(key).lowercased()] = decode(String(value))
            }
            if closing {
                if let index = stack.lastIndex(of: tag) { stack.removeSubrange(index...) }
                out.append(Element(kind: .end(tag: tag)))
            } else {
                out.append(Element(kind: .start(tag: tag, attributes: attributes, selfClosing: selfClosing, line: tagLine)))
                if !selfClosing { stack.append(tag) }
            }
        }
        return out
    }

    static func decode(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";"), rest.distance(from: amp, to: semi) <= 10 else {
                out += "&"
                rest = rest[rest.index(after: amp)...]
                continue
            }
            let entity = rest[rest.index(after: amp)..<semi]
            switch entity {
            case "amp": out += "&"
            case "lt": out += "<"
            case "gt": out += ">"
            case "quot": out += "\""
            case "apos": out += "'"
            default:
                var scalar: Unicode.Scalar?
                if entity.hasPrefix("#x") { scalar = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init) }
                else if entity.hasPrefix("#") { scalar = UInt32(entity.dropFirst()).flatMap(Unicode.Scalar.init) }
                if let scalar { out.unicodeScalars.append(scalar) } else { out += "&\(entity);" }
            }
            rest = rest[rest.index(after: semi)...]
        }
        return out + rest
    }
}
