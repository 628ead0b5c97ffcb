/// Where a ``ValueLogWriter`` puts its bytes: a file, or memory in tests.
///
/// A sink is owned by one writer and used from one task at a time.
public protocol ValueLogSink: AnyObject {
    /// A name for messages: the file path, or `<memory>`.
    var path: String { get }
    /// Writes `bytes` in order. On failure, returns how many bytes were written before it (so
    /// the writer can keep and retry the rest) and the error.
    func write(_ bytes: ArraySlice<UInt8>) -> (written: Int, error: ValueLogError?)
    /// Makes written bytes durable (for a file: `fsync`).
    func synchronize() throws(ValueLogError)
    /// Releases the sink; later writes fail.
    func close() throws(ValueLogError)
}

/// A value log file, written with POSIX calls so every failure names the path and the OS error.
public final class FileValueLogSink: ValueLogSink {
    public let path: String
    private var descriptor: Int32?

    /// Creates (or, with `replaceExisting`, truncates) the file at `path`. Throws
    /// ``ValueLogError/io(operation:path:code:message:)`` when it cannot be opened, e.g. a
    /// missing directory or no permission, or an existing file when `replaceExisting` is false.
    public init(path: String, replaceExisting: Bool = true) throws(ValueLogError) {
        self.path = path
        descriptor = try POSIXFile.openForWriting(path, replaceExisting: replaceExisting)
    }

    public func write(_ bytes: ArraySlice<UInt8>) -> (written: Int, error: ValueLogError?) {
        guard let descriptor else { return (0, .closed(path: path)) }
        return POSIXFile.writeAll(descriptor, bytes, path: path)
    }

    public func synchronize() throws(ValueLogError) {
        guard let descriptor else { throw .closed(path: path) }
        try POSIXFile.sync(descriptor, path: path)
    }

    public func close() throws(ValueLogError) {
        guard let descriptor else { return }
        self.descriptor = nil
        try POSIXFile.closeFile(descriptor, path: path)
    }

    deinit {
        if let descriptor { _ = try? POSIXFile.closeFile(descriptor, path: path) }
    }
}

/// Collects a value log in memory: for tests, and for building logs to hand to a reader.
public final class MemoryValueLogSink: ValueLogSink {
    public let path = "<memory>"
    /// Everything written so far.
    public private(set) var bytes: [UInt8] = []
    /// How many times ``synchronize()`` was called.
    public private(set) var synchronizeCount = 0
    /// Whether ``close()`` was called.
    public private(set) var isClosed = false

    /// An empty sink.
    public init() {}

    /// The bytes as text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public func write(_ bytes: ArraySlice<UInt8>) -> (written: Int, error: ValueLogError?) {
        guard !isClosed else { return (0, .closed(path: path)) }
        self.bytes.append(contentsOf: bytes)
        return (bytes.count, nil)
    }

    public func synchronize() throws(ValueLogError) { synchronizeCount += 1 }

    public func close() throws(ValueLogError) { isClosed = true }
}
