/// A value log read into memory: its header, its records in file order, and what was wrong.
public struct ValueLog: Sendable, Hashable {
    /// The header line.
    public var header: ValueLogHeader
    /// The records, in the order written.
    public var records: [ValueRecord]
    /// Malformed lines passed over (only with ``ValueLogReader/Options/skipMalformedLines``).
    public var skippedLines: [ValueLogLineError]
    /// The last line, when it was cut off (no line feed, not a whole record), as a recording
    /// interrupted by a crash or a full disk leaves it. The records before it are kept.
    public var truncatedLastLine: ValueLogLineError?

    /// A log with these parts (readers make them; tests and tools may too).
    public init(
        header: ValueLogHeader, records: [ValueRecord], skippedLines: [ValueLogLineError] = [],
        truncatedLastLine: ValueLogLineError? = nil
    ) {
        self.header = header
        self.records = records
        self.skippedLines = skippedLines
        self.truncatedLastLine = truncatedLastLine
    }

    /// How many malformed lines were skipped.
    public var skippedLineCount: Int { skippedLines.count }
}

/// Reads value logs (see docs/value-log-format.md) from files or bytes.
///
/// The header must be line 1 and name this format and a version this reader knows. Every other
/// line must be a record, except blank lines (ignored) and a last line that was cut off (no
/// line feed and not a valid record), which is reported in ``ValueLog/truncatedLastLine``
/// rather than thrown. Any other malformed line throws
/// ``ValueLogError/malformedLine(_:)`` naming the line number and the field, unless
/// ``Options/skipMalformedLines`` is set, in which case it is counted and passed over.
public enum ValueLogReader {
    /// How strict to be.
    public struct Options: Sendable, Hashable {
        /// Pass over malformed record lines (collecting them in ``ValueLog/skippedLines``)
        /// instead of failing. A bad header still fails.
        public var skipMalformedLines: Bool

        /// Strict by default.
        public init(skipMalformedLines: Bool = false) {
            self.skipMalformedLines = skipMalformedLines
        }
    }

    /// Reads the log in the file at `path`. Throws
    /// ``ValueLogError/io(operation:path:code:message:)`` when the file cannot be read.
    public static func read(path: String, options: Options = Options()) throws(ValueLogError) -> ValueLog {
        try read(bytes: POSIXFile.readAll(path), options: options)
    }

    /// Reads a log from its bytes.
    public static func read(bytes: [UInt8], options: Options = Options()) throws(ValueLogError) -> ValueLog {
        let newline = UInt8(ascii: "\n")
        // Each line's byte range, and whether a line feed ended it.
        var lines: [(range: Range<Int>, terminated: Bool)] = []
        var start = 0
        for index in bytes.indices where bytes[index] == newline {
            lines.append((start..<index, true))
            start = index + 1
        }
        if start < bytes.count { lines.append((start..<bytes.count, false)) }

        func content(_ range: Range<Int>) -> ArraySlice<UInt8> {
            var slice = bytes[range]
            if slice.last == UInt8(ascii: "\r") { slice = slice.dropLast() }
            return slice
        }

        guard let first = lines.first, !isBlank(content(first.range)) else {
            throw .malformedLine(ValueLogLineError(
                line: 1, field: "format", expected: "a value log header {\"format\":\"bluetide-values\",…}",
                found: bytes.isEmpty ? "an empty file" : "a blank first line"))
        }
        let header: ValueLogHeader
        do {
            header = try ValueLogFormat.header(from: content(first.range), lineNumber: 1)
        } catch {
            throw .malformedLine(error)
        }

        var log = ValueLog(header: header, records: [])
        for (offset, line) in lines.enumerated().dropFirst() {
            let text = content(line.range)
            if isBlank(text) { continue }
            let lineNumber = offset + 1
            do {
                log.records.append(try ValueLogFormat.record(from: text, lineNumber: lineNumber))
            } catch {
                if offset == lines.count - 1 && !line.terminated {
                    log.truncatedLastLine = error
                } else if options.skipMalformedLines {
                    log.skippedLines.append(error)
                } else {
                    throw .malformedLine(error)
                }
            }
        }
        return log
    }

    private static func isBlank(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }
}
