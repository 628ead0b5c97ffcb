#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import BluetideBase

/// What a value log holds, without its values: which characteristics (with their service and the
/// operations recorded on them, in order of first appearance), the first device name, and how
/// many records. What a replayed device must serve is known from it before any value is played.
///
/// Made from records in memory, or by reading a file as a stream (``read(path:filter:strict:)``):
/// memory grows with the number of distinct characteristics, never with the number of records.
public struct ValueLogOutline: Sendable, Hashable {
    /// One recorded characteristic.
    public struct Characteristic: Sendable, Hashable {
        /// The service the records name (nil when they name none).
        public var service: BluetoothUUID?
        /// The characteristic.
        public var characteristic: BluetoothUUID
        /// The operations recorded on it.
        public var operations: Set<ValueOperation>
    }

    /// The characteristics, in order of first appearance.
    public private(set) var characteristics: [Characteristic] = []
    /// The first device name the records give.
    public private(set) var deviceName: String?
    /// How many records were counted.
    public private(set) var recordCount = 0

    private var index: [Key: Int] = [:]

    private struct Key: Hashable, Sendable {
        var service: BluetoothUUID?
        var characteristic: BluetoothUUID
    }

    /// An empty outline.
    public init() {}

    /// The outline of `records` that match `filter`.
    public init(records: some Sequence<ValueRecord>, filter: ValueRecordFilter = .all) {
        for record in records where filter.matches(record) { add(record) }
    }

    /// Counts `record` in.
    public mutating func add(_ record: ValueRecord) {
        recordCount += 1
        if deviceName == nil { deviceName = record.device.name }
        let key = Key(service: record.service, characteristic: record.characteristic)
        if let position = index[key] {
            characteristics[position].operations.insert(record.operation)
        } else {
            index[key] = characteristics.count
            characteristics.append(Characteristic(
                service: record.service, characteristic: record.characteristic, operations: [record.operation]))
        }
    }

    /// The outline of the records matching `filter` in the log at `path`, read as a stream (one
    /// read chunk and one line in memory). Damaged lines are passed over, as a replay passes over
    /// them; with `strict` the first one throws. The file must be a regular file, since whoever
    /// asks for an outline reads the file again to play it (a pipe cannot be read twice).
    public static func read(path: String, filter: ValueRecordFilter = .all, strict: Bool = false) throws(ValueLogError) -> ValueLogOutline {
        try requireRegularFile(path)
        let stream = try ValueLogStream(path: path, strict: strict, warn: { _ in })
        var outline = ValueLogOutline()
        while let record = try stream.next() {
            if filter.matches(record) { outline.add(record) }
        }
        return outline
    }

    /// Throws unless `path` is a regular file (one that can be read more than once).
    static func requireRegularFile(_ path: String) throws(ValueLogError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw POSIXFile.failure("open", path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw .io(
                operation: "read twice", path: path, code: ESPIPE,
                message: "not a regular file (a pipe or device can be read once only; save it to a file first)")
        }
    }
}
