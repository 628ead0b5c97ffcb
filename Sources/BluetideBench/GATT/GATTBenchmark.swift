import BluetideBase
import BluetideHost
import BluetideTransport
import BluetideVirtual
import Foundation
import Synchronization

/// Figures of one direction of the GATT benchmark.
public struct GATTBenchResult: Sendable {
    /// `notify` or `write-without-response`.
    public let name: String
    /// `peripheral-to-central` or `central-to-peripheral`.
    public let direction: String
    public let mtu: Int
    public let packetSize: Int
    /// Values the receiver got (all of them when ``isComplete``).
    public let packets: Int
    /// Wall time from the first send to the last value received, seconds.
    public let seconds: Double
    /// User + system CPU time of the whole process over the same span, seconds.
    public let cpuSeconds: Double
    /// Nil when every value arrived, intact; else the first problem seen.
    public let problem: String?
    /// Values that arrived after a later one (the data was intact and complete otherwise).
    public var outOfOrder = 0

    public var isComplete: Bool { problem == nil }
    public var bytes: Int { packets * packetSize }
    public var packetsPerSecond: Double { seconds > 0 ? Double(packets) / seconds : 0 }
    public var bytesPerSecond: Double { seconds > 0 ? Double(bytes) / seconds : 0 }
    /// CPU seconds per 10^6 value bytes.
    public var cpuSecondsPerMB: Double { bytes > 0 ? cpuSeconds / (Double(bytes) / 1e6) : 0 }

    public var line: String {
        let label = "gatt \(name) (\(direction.replacingOccurrences(of: "-to-", with: "→")))"
        return "\(label.padding(toLength: 48, withPad: " ", startingAt: 0)) \(packets) × \(packetSize) B in "
            + String(format: "%.3f s = %.0f packets/s, %.0f bytes/s; CPU %.3f s = %.3f s/MB; ", seconds, packetsPerSecond, bytesPerSecond, cpuSeconds, cpuSecondsPerMB)
            + (problem.map { "PROBLEM: \($0)" }
                ?? (outOfOrder == 0 ? "all complete and in order" : "all complete, but \(outOfOrder) out of order"))
    }

    public var json: String {
        var fields = [
            "\"type\":\"gatt-benchmark\"",
            "\"scenario\":\"\(name)\"", "\"direction\":\"\(direction)\"", "\"mtu\":\(mtu)", "\"packetSizeBytes\":\(packetSize)",
            "\"packets\":\(packets)", "\"bytes\":\(bytes)", String(format: "\"seconds\":%.6f", seconds),
            String(format: "\"packetsPerSecond\":%.0f", packetsPerSecond), String(format: "\"bytesPerSecond\":%.0f", bytesPerSecond),
            String(format: "\"cpuSeconds\":%.6f", cpuSeconds), String(format: "\"cpuSecondsPerMegabyte\":%.6f", cpuSecondsPerMB),
            "\"complete\":\(isComplete)", "\"outOfOrder\":\(outOfOrder)",
        ]
        if let problem {
            let escaped = problem.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            fields.append("\"problem\":\"\(escaped)\"")
        }
        return "{" + fields.joined(separator: ",") + "}"
    }
}

/// The GATT benchmark: two `HostStack`s on a fresh ``VirtualLink``, connected, MTU exchanged,
/// the central subscribed to the peripheral's notify characteristic.
public enum GATTBenchmark {
    /// Bytes of the sequence number at the start of every value (u32 little-endian).
    public static let headerLength = 4
    /// Notifications the peripheral may be ahead of what the central has taken from its stream
    /// (below the client's 256-value subscription buffer, so none is dropped there).
    static let notificationWindow = 128
    /// The run gives up when nothing arrives for this long, seconds.
    static let stallSeconds = 10.0

    static let service = BluetoothUUID(0xFFB0)
    static let notifyUUID = BluetoothUUID(0xFFB1)
    static let sinkUUID = BluetoothUUID(0xFFB2)

    /// Value `sequence` of the stream: the sequence number, then bytes `sequence + i`.
    static func value(_ sequence: Int, size: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        let s = UInt32(truncatingIfNeeded: sequence)
        bytes[0] = UInt8(truncatingIfNeeded: s)
        bytes[1] = UInt8(truncatingIfNeeded: s >> 8)
        bytes[2] = UInt8(truncatingIfNeeded: s >> 16)
        bytes[3] = UInt8(truncatingIfNeeded: s >> 24)
        for i in headerLength..<size { bytes[i] = UInt8(truncatingIfNeeded: sequence &+ i) }
        return bytes
    }

    /// Checks that `bytes` is exactly value `expected`; returns the problem otherwise.
    static func check(_ bytes: [UInt8], expected: Int, size: Int) -> String? {
        guard bytes.count == size else { return "value \(expected): \(bytes.count) bytes, expected \(size)" }
        let sequence = Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16 | Int(bytes[3]) << 24
        guard sequence == expected & 0xFFFF_FFFF else { return "value \(expected) out of order: got sequence \(sequence)" }
        for i in headerLength..<size where bytes[i] != UInt8(truncatingIfNeeded: expected &+ i) {
            return "value \(expected): byte \(i) is \(bytes[i]), expected \(UInt8(truncatingIfNeeded: expected &+ i))"
        }
        return nil
    }

    /// Runs both directions and returns their figures.
    /// Runs both directions (`packetCount` values of `packetSize` bytes each way, at ATT MTU
    /// `mtu`) and returns their figures. Throws ``BenchFailure`` when the set-up fails.
    public static func run(mtu: Int, packetSize: Int, packetCount: Int) async throws -> [GATTBenchResult] {
        let sink = WriteSink()
        let pair = try await VirtualBenchPair.connect(
            what: "bench gatt", name: "Bluetide Bench", peripheralAddress: .randomStatic(0x0000_B1DE_BE0C),
            centralAddress: .randomStatic(0x0000_B1DE_BE0A),
            services: [GATTServiceDefinition(uuid: service, characteristics: [
                GATTCharacteristicDefinition(uuid: notifyUUID, properties: .notify),
                GATTCharacteristicDefinition(
                    uuid: sinkUUID, properties: .writeWithoutResponse,
                    // Sees every write in the peripheral's stack, in arrival order; refuses nothing.
                    validateWrite: { context in
                        sink.receive(context.value)
                        return nil
                    }),
            ])],
            mtu: mtu)
        defer { pair.closeLater() }
        let (peripheral, link, negotiated) = (pair.peripheral, pair.link, pair.mtu)
        guard packetSize <= negotiated - 3 else {
            throw BenchFailure("bench gatt: negotiated MTU \(negotiated) is too small for \(packetSize)-byte values")
        }
        guard let notify = pair.characteristic(notifyUUID),
              let sinkCharacteristic = pair.characteristic(sinkUUID),
              let notifyHandle = await peripheral.valueHandle(of: notifyUUID)
        else { throw BenchFailure("bench gatt: the benchmark service was not discovered") }
        let notifications = try await link.gatt.subscribe(to: notify)

        let notifyResult = await measureNotifications(
            from: peripheral, at: notifyHandle, into: notifications, mtu: negotiated, size: packetSize, count: packetCount)
        let writeResult = await measureWrites(
            link: link, handle: sinkCharacteristic.valueHandle, sink: sink, mtu: negotiated, size: packetSize, count: packetCount)
        return [notifyResult, writeResult]
    }

    /// Peripheral `updateValue` in a loop, at most ``notificationWindow`` ahead of the receiver.
    private static func measureNotifications(
        from peripheral: HostStack, at handle: UInt16, into notifications: AsyncStream<[UInt8]>, mtu: Int, size: Int,
        count: Int
    ) async -> GATTBenchResult {
        let progress = BenchProgress()
        let start = BenchClock.sample()
        let outcome: (received: Int, problem: String?, outOfOrder: Int) = await withTaskGroup(of: (Int, String?, Int)?.self) { group in
            group.addTask {
                var received = 0
                var problem: String?
                var checker = NotificationChecker(count: count, size: size)
                for await value in notifications {
                    if let found = checker.receive(value), problem == nil { problem = found }
                    received += 1
                    if received % 16 == 0 || received == count { await progress.advance(to: received) }
                    if received == count { break }
                }
                await progress.finish()
                return (received, problem, checker.outOfOrder)
            }
            group.addTask {
                for sequence in 0..<count {
                    if sequence - (await progress.received) >= notificationWindow {
                        guard await progress.wait(until: sequence - notificationWindow + 1) else { break }
                    }
                    await peripheral.updateValue(value(sequence, size: size), at: handle)
                }
                return nil
            }
            group.addTask {
                await progress.watch(stallSeconds: stallSeconds)
                return nil
            }
            var outcome: (Int, String?, Int) = (0, "no value received", 0)
            while let next = await group.next() {
                if let next {
                    outcome = next
                    group.cancelAll()
                }
            }
            return outcome
        }
        let end = BenchClock.sample()
        var problem = outcome.problem
        if problem == nil, outcome.received < count {
            problem = "received \(outcome.received) of \(count) notifications (stalled \(stallSeconds) s)"
        }
        return GATTBenchResult(
            name: "notify", direction: "peripheral-to-central", mtu: mtu, packetSize: size, packets: outcome.received,
            seconds: end.wall - start.wall, cpuSeconds: end.cpu - start.cpu, problem: problem,
            outOfOrder: outcome.outOfOrder)
    }

    /// Central Write Commands in a loop (paced by the stack's ACL buffers), checked by the
    /// peripheral's write hook.
    private static func measureWrites(
        link: HostConnection, handle: UInt16, sink: WriteSink, mtu: Int, size: Int, count: Int
    ) async -> GATTBenchResult {
        let done = sink.expect(count: count, size: size)
        let start = BenchClock.sample()
        let outcome: WriteOutcome = await withTaskGroup(of: WriteOutcome.self) { group in
            group.addTask {
                for await _ in done { return .allReceived }
                return .stalled
            }
            group.addTask {
                do {
                    for sequence in 0..<count {
                        try await link.gatt.writeWithoutResponse(handle: handle, value: value(sequence, size: size))
                    }
                } catch {
                    return .senderFailed("\(error)")
                }
                return .senderFinished
            }
            group.addTask {
                // Gives up when the sink stops advancing.
                var last = -1
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(stallSeconds))
                    let now = sink.state().received
                    if now == last { break }
                    last = now
                }
                return .stalled
            }
            // The first decisive outcome wins; the other tasks are then cancelled.
            var outcome = WriteOutcome.stalled
            while let next = await group.next() {
                if case .senderFinished = next { continue }
                outcome = next
                break
            }
            group.cancelAll()
            return outcome
        }
        let end = BenchClock.sample()
        let state = sink.state()
        var problem = state.problem
        if problem == nil {
            switch outcome {
            case .allReceived: break
            case let .senderFailed(error): problem = "write failed after \(state.received) values: \(error)"
            case .stalled, .senderFinished: problem = "received \(state.received) of \(count) writes (stalled \(stallSeconds) s)"
            }
        }
        return GATTBenchResult(
            name: "write-without-response", direction: "central-to-peripheral", mtu: mtu, packetSize: size,
            packets: state.received, seconds: end.wall - start.wall, cpuSeconds: end.cpu - start.cpu, problem: problem)
    }
}

/// Checks notifications: each value exactly once and intact; out-of-order arrivals are counted
/// (and reported) separately, since they point at the stack rather than at lost data.
struct NotificationChecker {
    private var seen: [Bool]
    private let size: Int
    private var highest = -1
    /// Values that arrived after a value with a higher sequence number.
    private(set) var outOfOrder = 0

    init(count: Int, size: Int) {
        seen = [Bool](repeating: false, count: count)
        self.size = size
    }

    /// Records one value; returns what is wrong with it, if anything (order aside).
    mutating func receive(_ value: [UInt8]) -> String? {
        guard value.count >= GATTBenchmark.headerLength else { return "a \(value.count)-byte value, expected \(size)" }
        let sequence = Int(value[0]) | Int(value[1]) << 8 | Int(value[2]) << 16 | Int(value[3]) << 24
        if sequence < highest { outOfOrder += 1 }
        highest = max(highest, sequence)
        guard sequence < seen.count else { return "value with unexpected sequence \(sequence)" }
        guard !seen[sequence] else { return "value \(sequence) received twice" }
        seen[sequence] = true
        return GATTBenchmark.check(value, expected: sequence, size: size)
    }

}

/// How the write run ended.
private enum WriteOutcome: Sendable {
    case allReceived, senderFinished, senderFailed(String), stalled
}

/// Receiver progress shared by the notification sender (which waits on it), the receiver and a
/// stall watchdog.
private actor BenchProgress {
    private(set) var received = 0
    private var finished = false
    private var waiters: [(threshold: Int, continuation: CheckedContinuation<Bool, Never>)] = []

    func advance(to count: Int) {
        received = count
        let ready = waiters.filter { $0.threshold <= count }
        waiters.removeAll { $0.threshold <= count }
        for waiter in ready { waiter.continuation.resume(returning: true) }
    }

    /// Waits until `threshold` values were received; false when the run ended first.
    func wait(until threshold: Int) async -> Bool {
        if received >= threshold { return true }
        if finished { return false }
        return await withCheckedContinuation { waiters.append((threshold, $0)) }
    }

    func finish() {
        finished = true
        for waiter in waiters { waiter.continuation.resume(returning: false) }
        waiters.removeAll()
    }

    /// Returns (ending the run) when `received` has not moved for `stallSeconds`.
    nonisolated func watch(stallSeconds: Double) async {
        var last = -1
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(stallSeconds))
            let now = await received
            if now == last || Task.isCancelled { break }
            last = now
        }
        await finish()
    }
}

/// Collects the values written to the benchmark's sink characteristic, checking each against
/// the expected sequence as it arrives (called from the peripheral's stack).
private final class WriteSink: Sendable {
    struct State {
        var expected = 0
        var size = 0
        var received = 0
        var problem: String?
        var done: AsyncStream<Void>.Continuation?
    }

    private let stateBox = Mutex(State())

    /// Starts a run of `count` values; the stream yields once all arrived.
    func expect(count: Int, size: Int) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        stateBox.withLock { $0 = State(expected: count, size: size, done: continuation) }
        return stream
    }

    func receive(_ value: [UInt8]) {
        stateBox.withLock { state in
            if state.problem == nil, let problem = GATTBenchmark.check(value, expected: state.received, size: state.size) {
                state.problem = problem
            }
            state.received += 1
            if state.received == state.expected { state.done?.yield() }
        }
    }

    func state() -> (received: Int, problem: String?) {
        stateBox.withLock { ($0.received, $0.problem) }
    }
}

/// Wall-clock and process CPU time samples.
enum BenchClock {
    /// Monotonic wall time and user + system CPU time of this process, seconds.
    static func sample() -> (wall: Double, cpu: Double) {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        let uptime = ProcessInfo.processInfo.systemUptime
        return (uptime, seconds(usage.ru_utime) + seconds(usage.ru_stime))
    }
}
