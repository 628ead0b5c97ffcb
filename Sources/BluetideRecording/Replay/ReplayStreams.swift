import BluetideBase

extension ValueReplay {
    /// The replay as an `AsyncStream` of records, played by a task of its own that stops when the
    /// stream is dropped or its consumer cancelled. Records are buffered without limit, so the
    /// pace stays the recorded one even when the consumer lags (as with live notifications).
    public func stream() -> AsyncStream<ValueRecord> {
        relay { $0 }
    }

    /// The values of one characteristic (of one device, when `device` names one by address or
    /// name) as `AsyncStream<[UInt8]>`: the type `GATTClient.subscribe(to:)` returns for live
    /// notifications, so code written for a live characteristic accepts a replay unchanged.
    public func values(of characteristic: BluetoothUUID, device: String? = nil) -> AsyncStream<[UInt8]> {
        relay { record in
            guard record.characteristic == characteristic, device.map(record.device.matches) ?? true else { return nil }
            return record.value
        }
    }

    /// Plays the replay in a task, yielding what `transform` makes of each record (nil skips it).
    private func relay<T: Sendable>(_ transform: @escaping @Sendable (ValueRecord) -> T?) -> AsyncStream<T> {
        let (stream, continuation) = AsyncStream<T>.makeStream(bufferingPolicy: .unbounded)
        let task = Task {
            for await record in self {
                if let element = transform(record) { continuation.yield(element) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
