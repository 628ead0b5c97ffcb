/// A typed value that a characteristic's profile accepts in the shell's `write`, e.g.
/// `write 2A39 reset` or `write 2AD9 target-power 200`: a name, its arguments in the units a
/// person thinks in, and how the profile's codec turns them into bytes.
struct WriteForm: Sendable {
    /// The first word after the characteristic, e.g. `target-power`.
    let name: String
    /// The arguments after the name, e.g. `WATTS` or `GRADE% [WIND_M/S]`; empty when none.
    let syntax: String
    /// What it asks the device to do, for `help` and errors.
    let summary: String
    /// The words the first argument can be, when it is a choice (for Tab completion).
    var choices: [String] = []
    /// Encodes the arguments with the profile's codec; throws naming the argument that is wrong.
    let encode: @Sendable (inout WriteFormArguments) throws(ShellRequest.SyntaxError) -> [UInt8]

    /// `target-power WATTS`.
    var usage: String { syntax.isEmpty ? name : "\(name) \(syntax)" }

    /// The bytes for `words` (the words after the form's name); every word must be used.
    func bytes(_ words: [String]) throws(ShellRequest.SyntaxError) -> [UInt8] {
        var arguments = WriteFormArguments(form: self, words: words)
        let bytes = try encode(&arguments)
        try arguments.finish()
        return bytes
    }
}

/// The words after a write form's name, read in order; every problem names the argument, what
/// was expected and what came.
struct WriteFormArguments {
    let form: WriteForm
    private var words: [String]

    init(form: WriteForm, words: [String]) {
        self.form = form
        self.words = words
    }

    /// The next word as a number in `range` (`unit` printed after it in errors, e.g. `W`).
    mutating func number(_ field: String, _ range: ClosedRange<Double>, unit: String = "") throws(ShellRequest.SyntaxError) -> Double {
        let expected = "a number from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound))\(unit.isEmpty ? "" : " " + unit)"
        guard !words.isEmpty else { throw problem("missing \(field) (\(expected))") }
        let word = words.removeFirst()
        guard let value = Double(word), value.isFinite, range.contains(value) else {
            throw problem("\(field) expected \(expected), got \"\(word)\"")
        }
        return value
    }

    /// The next word as a whole number in `range` (counts, watts, seconds: fields without a
    /// fraction on the wire).
    mutating func whole(_ field: String, _ range: ClosedRange<Int64>, unit: String = "") throws(ShellRequest.SyntaxError) -> Int64 {
        let expected = "a whole number from \(range.lowerBound) to \(range.upperBound)\(unit.isEmpty ? "" : " " + unit)"
        guard !words.isEmpty else { throw problem("missing \(field) (\(expected))") }
        let word = words.removeFirst()
        guard let value = Int64(word), range.contains(value) else {
            throw problem("\(field) expected \(expected), got \"\(word)\"")
        }
        return value
    }

    /// The next word as a number when there is one, else `fallback`.
    mutating func number(_ field: String, _ range: ClosedRange<Double>, unit: String = "", default fallback: Double) throws(ShellRequest.SyntaxError) -> Double {
        words.isEmpty ? fallback : try number(field, range, unit: unit)
    }

    /// The next word as one of `choices` (case-insensitive); returns its index.
    mutating func choice(_ field: String, _ choices: [String]) throws(ShellRequest.SyntaxError) -> Int {
        let expected = "one of " + choices.joined(separator: ", ")
        guard !words.isEmpty else { throw problem("missing \(field) (\(expected))") }
        let word = words.removeFirst()
        guard let index = choices.firstIndex(of: word.lowercased()) else {
            throw problem("\(field) expected \(expected), got \"\(word)\"")
        }
        return index
    }

    /// Refuses words left over.
    func finish() throws(ShellRequest.SyntaxError) {
        guard words.isEmpty else {
            throw problem("unexpected \"\(words.joined(separator: " "))\" after the arguments")
        }
    }

    private func problem(_ text: String) -> ShellRequest.SyntaxError {
        ShellRequest.SyntaxError(message: "\(form.name): \(text); usage: write CHAR \(form.usage)")
    }

    /// `-32768`, `25.5`, `0.0255`: as short as the number allows.
    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
