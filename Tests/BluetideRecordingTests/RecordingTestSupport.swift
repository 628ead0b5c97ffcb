import BluetideBase
import Foundation
@testable import BluetideRecording

/// A virtual clock for pacing tests: `sleep(until:)` never waits, it moves virtual time forward
/// to the deadline and notes it. So a test sees at which virtual instants records were released
/// without any real sleeping.
final class InstantTestClock: Clock, @unchecked Sendable {
    // Safety: the mutable state is only touched while holding `lock`, so concurrent use is race-free.
    struct Instant: InstantProtocol {
        /// Virtual time since the clock was made.
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let lock = NSLock()
    private var current = Instant(offset: .zero)
    private var sleepDeadlines: [Instant] = []

    var now: Instant { lock.withLock { current } }
    var minimumResolution: Duration { .nanoseconds(1) }

    /// Every deadline passed to `sleep(until:)`, in order.
    var deadlines: [Instant] { lock.withLock { sleepDeadlines } }

    /// Moves virtual time forward by `seconds`.
    func advance(by seconds: Double) {
        lock.withLock { current = current.advanced(by: .seconds(seconds)) }
    }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        lock.withLock {
            sleepDeadlines.append(deadline)
            if current < deadline { current = deadline }
        }
    }
}

/// Seconds of a Duration as a Double.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Bytes from hex text (empty on bad input, which the tests never give).
func hex(_ text: String) -> [UInt8] { (try? Hex.parse(text)) ?? [] }

/// A record with test defaults.
func record(
    _ t: Double, device: String = "C6:C5:C4:C3:C2:C1", name: String? = nil, characteristic: UInt16 = 0x2A37,
    operation: ValueOperation = .notify, value: String = "00 48"
) -> ValueRecord {
    ValueRecord(
        timestamp: t, device: DeviceIdentity(address: device, name: name), characteristic: BluetoothUUID(characteristic),
        operation: operation, value: hex(value))
}

/// A log's bytes: header plus one line per record, written through a memory sink.
func logBytes(_ records: [ValueRecord], header: ValueLogHeader = ValueLogHeader(startedAt: nil)) throws -> [UInt8] {
    let sink = MemoryValueLogSink()
    let writer = try ValueLogWriter(sink: sink, header: header)
    for item in records { try writer.append(item) }
    try writer.close()
    return sink.bytes
}

/// Lines as a log's bytes, each followed by a line feed.
func lines(_ lines: String...) -> [UInt8] {
    Array(lines.map { $0 + "\n" }.joined().utf8)
}

/// The header line every test log starts with.
let headerLine = #"{"format":"bluetide-values","version":1}"#

/// A valid record line at time `t`.
func recordLine(_ t: String = "0.5") -> String {
    #"{"t":"# + t + #","device":"C6:C5:C4:C3:C2:C1","characteristic":"2A37","operation":"notify","value":"0048"}"#
}

/// A sink that fails a given number of times (after writing some bytes), then works.
final class FlakySink: ValueLogSink {
    let path = "/flaky/log.jsonl"
    var failuresLeft: Int
    var bytesBeforeFailure: Int
    private(set) var bytes: [UInt8] = []

    init(failures: Int, bytesBeforeFailure: Int = 0) {
        failuresLeft = failures
        self.bytesBeforeFailure = bytesBeforeFailure
    }

    func write(_ slice: ArraySlice<UInt8>) -> (written: Int, error: ValueLogError?) {
        if failuresLeft > 0 {
            failuresLeft -= 1
            let partial = min(bytesBeforeFailure, slice.count)
            bytes.append(contentsOf: slice.prefix(partial))
            return (partial, .io(operation: "write", path: path, code: 28, message: "No space left on device"))
        }
        bytes.append(contentsOf: slice)
        return (slice.count, nil)
    }

    func synchronize() throws(ValueLogError) {}
    func close() throws(ValueLogError) {}
}
