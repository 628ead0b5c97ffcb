#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a ``ValueLogStream`` found wrong with a line it passed over: the line, and why.
public struct ValueLogWarning: Sendable, Hashable, CustomStringConvertible {
    /// Why the line was passed over.
    public enum Kind: String, Sendable, Hashable {
        /// The last line has no line feed and is not a whole record (a recording cut short).
        case truncatedLastLine = "truncated last line"
        /// A record whose time `t` is earlier than the record before it.
        case outOfOrder = "record out of order"
        /// A line that is not a valid record.
        case malformedLine = "malformed line"
        /// A line longer than ``ValueLogStream/maximumLineLength`` (passed over without being held).
        case overlongLine = "line too long"
    }

    /// Why.
    public var kind: Kind
    /// The problem, with its 1-based line number and field.
    public var problem: ValueLogLineError

    /// `line 7, field "t": … (record out of order)`.
    public var description: String { "\(problem) (\(kind.rawValue))" }
}

/// Reads a value log (docs/value-log-format.md) one record at a time, in bounded memory whatever
/// the file's size: it holds one read chunk and one line, never the file.
///
/// The header is read on creation. ``next()`` returns records in file order; a truncated last
/// line and a malformed line are passed over and reported to `warn`, naming the line; a record
/// whose time runs backwards is returned and reported. With `strict`, each of those throws
/// ``ValueLogError/malformedLine(_:)`` instead.
public final class ValueLogStream {
    /// The header line.
    public let header: ValueLogHeader
    /// Bytes read per `read(2)` call.
    public static let chunkSize = 64 * 1024
    /// Longest line accepted, bytes (a record is a few hundred bytes; a line past this is refused
    /// rather than held in memory).
    public static let maximumLineLength = 1 << 20

    private let fd: Int32
    private let path: String
    private let strict: Bool
    private let warn: (ValueLogWarning) -> Void
    private var buffer: [UInt8] = []
    private var bufferStart = 0
    private var endOfFile = false
    private var lineNumber = 0
    private var lastTimestamp: Double?
    /// Largest number of bytes held at once (chunk plus unfinished line): the memory bound, for tests.
    public private(set) var peakBufferedBytes = 0

    /// Opens `path` and reads its header. `strict` turns every warning into an error.
    public init(path: String, strict: Bool = false, warn: @escaping (ValueLogWarning) -> Void) throws(ValueLogError) {
        var fd: Int32
        repeat { fd = open(path, O_RDONLY | O_CLOEXEC) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw POSIXFile.failure("open", path) }
        self.fd = fd
        self.path = path
        self.strict = strict
        self.warn = warn
        var headerLine: Line?
        do {
            headerLine = try Self.nextLine(fd: fd, path: path, buffer: &buffer, start: &bufferStart, endOfFile: &endOfFile,
                                           peak: &peakBufferedBytes)
        } catch {
            close(fd)
            throw error
        }
        lineNumber = 1
        if case let .overlong(length, terminated)? = headerLine {
            close(fd)
            throw .malformedLine(Self.overlong(line: 1, length: length, terminated: terminated))
        }
        guard case let .text(firstBytes, _)? = headerLine, !Self.isBlank(firstBytes) else {
            close(fd)
            throw .malformedLine(ValueLogLineError(
                line: 1, field: "format", expected: "a value log header {\"format\":\"bluetide-values\",…}",
                found: headerLine == nil ? "an empty file" : "a blank first line"))
        }
        do { header = try ValueLogFormat.header(from: Self.trimmedCR(firstBytes), lineNumber: 1) } catch {
            close(fd)
            throw .malformedLine(error)
        }
    }

    deinit { close(fd) }

    /// The next record, or nil at the end of the file.
    public func next() throws(ValueLogError) -> ValueRecord? {
        while let line = try Self.nextLine(fd: fd, path: path, buffer: &buffer, start: &bufferStart, endOfFile: &endOfFile,
                                           peak: &peakBufferedBytes) {
            lineNumber += 1
            guard case let .text(bytes, terminated) = line else {
                if case let .overlong(length, terminated) = line {
                    try report(ValueLogWarning(kind: .overlongLine, problem: Self.overlong(line: lineNumber, length: length, terminated: terminated)))
                }
                continue
            }
            let text = Self.trimmedCR(bytes)
            if Self.isBlank(text) { continue }
            let record: ValueRecord
            do { record = try ValueLogFormat.record(from: text, lineNumber: lineNumber) } catch {
                let kind: ValueLogWarning.Kind = terminated ? .malformedLine : .truncatedLastLine
                try report(ValueLogWarning(kind: kind, problem: error))
                continue
            }
            if let last = lastTimestamp, record.timestamp < last {
                try report(ValueLogWarning(kind: .outOfOrder, problem: ValueLogLineError(
                    line: lineNumber, field: "t", expected: "a time at or after the record before (\(last) s)",
                    found: "\(record.timestamp) s")))
            }
            lastTimestamp = max(lastTimestamp ?? record.timestamp, record.timestamp)
            return record
        }
        return nil
    }

    /// Passes `warning` to `warn`, or throws it with `strict`.
    private func report(_ warning: ValueLogWarning) throws(ValueLogError) {
        if strict { throw .malformedLine(warning.problem) }
        warn(warning)
    }

    /// One line read: its bytes (without the line feed) and whether a line feed ended it, or
    /// only its length when it was longer than ``maximumLineLength`` (its bytes were dropped as
    /// they came, so memory stays bounded).
    private enum Line {
        case text(ArraySlice<UInt8>, terminated: Bool)
        case overlong(length: Int, terminated: Bool)
    }

    /// The problem of an overlong line `line` of `length` bytes.
    private static func overlong(line: Int, length: Int, terminated: Bool) -> ValueLogLineError {
        ValueLogLineError(
            line: line, field: "record", expected: "a line of at most \(maximumLineLength) bytes",
            found: "a line of \(terminated ? "" : "at least ")\(length) bytes\(terminated ? "" : " without a line feed")")
    }

    /// The next line; nil at the end.
    private static func nextLine(
        fd: Int32, path: String, buffer: inout [UInt8], start: inout Int, endOfFile: inout Bool, peak: inout Int
    ) throws(ValueLogError) -> Line? {
        var searchFrom = start
        /// Bytes of an overlong line dropped so far (nil while the line fits).
        var dropped: Int?
        while true {
            if let newline = buffer[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                if let dropped { return .overlong(length: dropped + line.count, terminated: true) }
                return .text(line, terminated: true)
            }
            if endOfFile {
                guard start < buffer.count || dropped != nil else { return nil }
                let line = buffer[start...]
                start = buffer.count
                if let dropped { return .overlong(length: dropped + line.count, terminated: false) }
                return .text(line, terminated: false)
            }
            // Keep only the unfinished line, then read another chunk after it.
            if start > 0 {
                buffer.removeFirst(start)
                start = 0
            }
            if buffer.count > maximumLineLength {
                // Too long to hold: count it and drop its bytes until its line feed.
                dropped = (dropped ?? 0) + buffer.count
                buffer.removeAll(keepingCapacity: true)
            }
            searchFrom = buffer.count
            let old = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: chunkSize))
            var count: Int
            repeat {
                count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + old, chunkSize) }
            } while count < 0 && errno == EINTR
            guard count >= 0 else { throw POSIXFile.failure("read", path) }
            buffer.removeLast(chunkSize - count)
            peak = max(peak, buffer.capacity)
            if count == 0 { endOfFile = true }
        }
    }

    private static func trimmedCR(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        bytes.last == UInt8(ascii: "\r") ? bytes.dropLast() : bytes
    }

    private static func isBlank(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }
}
