import BluetideBase

/// Which records a replay keeps. Each criterion left nil keeps everything; a record is kept when
/// it meets every criterion given.
public struct ValueRecordFilter: Sendable, Hashable {
    /// Devices to keep, each an address (case-insensitive) or a device name (exact).
    public var devices: Set<String>?
    /// Characteristics to keep.
    public var characteristics: Set<BluetoothUUID>?
    /// Operations to keep, e.g. only `notify` and `indicate`.
    public var operations: Set<ValueOperation>?

    /// A filter; nil criteria keep everything.
    public init(
        devices: Set<String>? = nil, characteristics: Set<BluetoothUUID>? = nil, operations: Set<ValueOperation>? = nil
    ) {
        self.devices = devices
        self.characteristics = characteristics
        self.operations = operations
    }

    /// Keeps every record.
    public static let all = ValueRecordFilter()

    /// Whether `record` is kept.
    public func matches(_ record: ValueRecord) -> Bool {
        if let devices, !devices.contains(where: record.device.matches) { return false }
        if let characteristics, !characteristics.contains(record.characteristic) { return false }
        if let operations, !operations.contains(record.operation) { return false }
        return true
    }
}
