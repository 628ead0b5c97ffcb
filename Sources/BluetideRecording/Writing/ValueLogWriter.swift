/// Appends records to a value log: the header first, then one line per record.
///
/// Lines are buffered and handed to the sink (one `write` per flush) every ``flushEvery``
/// records, on ``flush()`` and on ``close()``. Once handed over, a line survives a crash of the
/// process; so a crash loses at most the unflushed buffer, and a line cut in half by the crash is
/// reported (and everything before it kept) by ``ValueLogReader``. Call ``flush()`` on a timer
/// too if records are rare and you want them on disk promptly.
///
/// Failures (disk full, permissions, a missing directory) are thrown as
/// ``ValueLogError/io(operation:path:code:message:)`` naming the path and the OS error; the
/// bytes not yet written stay buffered, and the next ``flush()`` retries them exactly once.
///
/// A writer belongs to one task: it is deliberately not `Sendable`. Several connections that
/// record into one file should send their records to that task (e.g. through an AsyncStream).
public final class ValueLogWriter {
    /// The sink's path (or `<memory>`), for messages.
    public var path: String { sink.path }
    /// The header written at the top of the log.
    public let header: ValueLogHeader
    /// Records buffered before they are handed to the sink (at least 1).
    public let flushEvery: Int
    /// Records accepted by ``append(_:)`` so far.
    public private(set) var recordCount = 0
    /// Records of ``recordCount`` not yet handed to the sink.
    public private(set) var bufferedRecordCount = 0
    /// Whether ``close()`` was called.
    public private(set) var isClosed = false

    private let sink: any ValueLogSink
    private var buffer: [UInt8] = []

    /// Starts a log in `sink`, writing and flushing the header at once (so even an empty
    /// recording is a valid log, and an unwritable sink fails here, not later).
    public init(sink: any ValueLogSink, header: ValueLogHeader, flushEvery: Int = 32) throws(ValueLogError) {
        self.sink = sink
        self.header = header
        self.flushEvery = max(1, flushEvery)
        buffer.append(contentsOf: ValueLogFormat.line(for: header).utf8)
        buffer.append(UInt8(ascii: "\n"))
        try flush()
    }

    /// Starts a log in a new file at `path` (an existing file is replaced unless
    /// `replaceExisting` is false, in which case opening fails).
    public convenience init(
        path: String, header: ValueLogHeader, flushEvery: Int = 32, replaceExisting: Bool = true
    ) throws(ValueLogError) {
        // If the header cannot be written, the sink is released (and its file closed) with the writer.
        let sink = try FileValueLogSink(path: path, replaceExisting: replaceExisting)
        try self.init(sink: sink, header: header, flushEvery: flushEvery)
    }

    /// Adds one record. Throws ``ValueLogError/unrepresentable(field:reason:)`` for a record the
    /// format cannot carry (nothing is written then), and the sink's error when this record
    /// completes a batch and the flush fails (the record stays buffered).
    public func append(_ record: ValueRecord) throws(ValueLogError) {
        guard !isClosed else { throw .closed(path: path) }
        let line = try ValueLogFormat.line(for: record)
        buffer.append(contentsOf: line.utf8)
        buffer.append(UInt8(ascii: "\n"))
        recordCount += 1
        bufferedRecordCount += 1
        if bufferedRecordCount >= flushEvery { try flush() }
    }

    /// Hands every buffered line to the sink. With `synchronize`, also asks the OS to put the
    /// file on disk (survives a power loss, not only a crash; slower).
    public func flush(synchronize: Bool = false) throws(ValueLogError) {
        guard !isClosed else { throw .closed(path: path) }
        if !buffer.isEmpty {
            let (written, error) = sink.write(buffer[...])
            buffer.removeFirst(min(max(written, 0), buffer.count))
            if let error { throw error }
            bufferedRecordCount = 0
        }
        if synchronize { try sink.synchronize() }
    }

    /// Flushes, synchronizes and closes the sink. If flushing fails, the sink is still closed
    /// and the error thrown (the buffered records are lost then; they were never written).
    public func close() throws(ValueLogError) {
        guard !isClosed else { return }
        var firstError: ValueLogError?
        do { try flush(synchronize: true) } catch { firstError = error }
        isClosed = true
        do { try sink.close() } catch { if firstError == nil { firstError = error } }
        if let firstError { throw firstError }
    }

    deinit {
        // Best effort for a writer dropped without close(): errors have nowhere to go here.
        if !isClosed { _ = try? close() }
    }
}
