import BluetideBase
import Testing
@testable import BluetideRecording

@Suite("Value replay")
struct ValueReplayTests {
    /// Records 1.0, 2.0 and 3.5 s apart after a first one at 10 s.
    static let records = [record(10), record(11), record(13), record(16.5)]

    /// Plays `replay` to the end, noting the virtual time (seconds) at which each record came out.
    func releaseTimes(_ replay: ValueReplay<InstantTestClock>) async -> [(Double, Double)] {
        var times: [(Double, Double)] = []
        for await item in replay {
            times.append((item.timestamp, seconds(replay.clock.now.offset)))
        }
        return times
    }

    @Test func originalPaceReleasesAtRecordedGaps() async {
        let clock = InstantTestClock()
        let times = await releaseTimes(ValueReplay(records: Self.records, pace: .original, clock: clock))
        #expect(times.map(\.0) == [10, 11, 13, 16.5])
        #expect(times.map(\.1) == [0, 1, 3, 6.5])
    }

    @Test func doubleSpeedHalvesTheGaps() async {
        let clock = InstantTestClock()
        let times = await releaseTimes(ValueReplay(records: Self.records, pace: .speed(2), clock: clock))
        #expect(times.map(\.1) == [0, 0.5, 1.5, 3.25])
    }

    @Test func halfSpeedDoublesTheGaps() async {
        let clock = InstantTestClock()
        let times = await releaseTimes(ValueReplay(records: Self.records, pace: .speed(0.5), clock: clock))
        #expect(times.map(\.1) == [0, 2, 6, 13])
    }

    @Test(arguments: [ReplayPace.asFastAsPossible, .speed(0), .speed(-1), .speed(.nan), .speed(.infinity)])
    func asFastAsPossibleNeverWaits(pace: ReplayPace) async {
        let clock = InstantTestClock()
        let times = await releaseTimes(ValueReplay(records: Self.records, pace: pace, clock: clock))
        #expect(times.map(\.0) == [10, 11, 13, 16.5])
        #expect(times.map(\.1) == [0, 0, 0, 0])
        #expect(clock.deadlines.isEmpty)
    }

    @Test func deadlinesAreMeasuredFromTheStartSoTheyDoNotDrift() async {
        let clock = InstantTestClock()
        _ = await releaseTimes(ValueReplay(records: Self.records, clock: clock))
        #expect(clock.deadlines.map { seconds($0.offset) } == [0, 1, 3, 6.5])
    }

    @Test func outOfOrderTimestampsReleaseAtOnce() async {
        let clock = InstantTestClock()
        let times = await releaseTimes(ValueReplay(records: [record(5), record(7), record(6), record(8)], clock: clock))
        #expect(times.map(\.0) == [5, 7, 6, 8])
        #expect(times.map(\.1) == [0, 2, 2, 3])
    }

    @Test func hugeGapsDoNotTrap() async {
        let clock = InstantTestClock()
        let times = await releaseTimes(ValueReplay(records: [record(0), record(1e9)], pace: .speed(1e-300), clock: clock))
        #expect(times.count == 2)
    }

    @Test func replayCanBeIteratedTwice() async {
        let clock = InstantTestClock()
        let replay = ValueReplay(records: Self.records, pace: .asFastAsPossible, clock: clock)
        #expect(await releaseTimes(replay).count == 4)
        #expect(await releaseTimes(replay).count == 4)
    }

    @Test func emptyReplayEndsAtOnce() async {
        #expect(await releaseTimes(ValueReplay(records: [], clock: InstantTestClock())).isEmpty)
    }

    @Test func filterKeepsMatchingDevicesCharacteristicsAndOperations() async {
        let all = [
            record(0, device: "AA:AA:AA:AA:AA:AA", name: "KICKR", characteristic: 0x2A5B),
            record(1, device: "BB:BB:BB:BB:BB:BB", characteristic: 0x2A37),
            record(2, device: "AA:AA:AA:AA:AA:AA", characteristic: 0x2A37, operation: .read),
            record(3, device: "AA:AA:AA:AA:AA:AA", characteristic: 0x2A5B, operation: .write),
            record(4, device: "aa:aa:aa:aa:aa:aa", characteristic: 0x2A5B),
        ]
        func kept(_ filter: ValueRecordFilter) async -> [Double] {
            var times: [Double] = []
            for await item in ValueReplay(records: all, pace: .asFastAsPossible, filter: filter, clock: InstantTestClock()) {
                times.append(item.timestamp)
            }
            return times
        }
        #expect(await kept(.all) == [0, 1, 2, 3, 4])
        #expect(await kept(ValueRecordFilter(devices: ["aa:AA:aa:AA:aa:AA"])) == [0, 2, 3, 4])
        #expect(await kept(ValueRecordFilter(devices: ["KICKR"])) == [0])
        #expect(await kept(ValueRecordFilter(characteristics: [BluetoothUUID(0x2A37)])) == [1, 2])
        #expect(await kept(ValueRecordFilter(operations: [.notify, .indicate])) == [0, 1, 4])
        #expect(await kept(ValueRecordFilter(
            devices: ["AA:AA:AA:AA:AA:AA"], characteristics: [.cscMeasurement], operations: [.notify])) == [0, 4])
        #expect(await kept(ValueRecordFilter(devices: [])) == [])
    }

    @Test func filteredReplayIsPacedFromTheFirstKeptRecord() async {
        let clock = InstantTestClock()
        let all = [record(0, characteristic: 0x2A19), record(4), record(5)]
        let replay = ValueReplay(records: all, filter: ValueRecordFilter(characteristics: [BluetoothUUID(0x2A37)]), clock: clock)
        #expect(await releaseTimes(replay).map(\.1) == [0, 1])
    }

    @Test(.timeLimit(.minutes(1)))
    func cancellationEndsAWaitingReplayPromptly() async {
        // A real clock and an hour between records: only cancellation can end this in time.
        let replay = ValueReplay(records: [record(0), record(3600), record(7200)])
        let (firstSeen, firstSeenSignal) = AsyncStream.makeStream(of: Void.self)
        let consumer = Task {
            var count = 0
            for await _ in replay {
                count += 1
                firstSeenSignal.yield()
            }
            return count
        }
        for await _ in firstSeen { break }
        consumer.cancel()
        #expect(await consumer.value == 1)
    }

    @Test func cancelledTaskGetsNothing() async {
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var iterator = ValueReplay(records: Self.records, pace: .asFastAsPossible, clock: InstantTestClock())
                .makeAsyncIterator()
            return await iterator.next()
        }
        #expect(await task.value == nil)
    }

    @Test func replayAcceptsAReadLog() async throws {
        let log = try ValueLogReader.read(bytes: try logBytes(Self.records))
        let clock = InstantTestClock()
        let times = await releaseTimes(ValueReplay(log: log, pace: .speed(2), clock: clock))
        #expect(times.map(\.0) == [10, 11, 13, 16.5])
        #expect(times.map(\.1) == [0, 0.5, 1.5, 3.25])
    }
}

@Suite("Replay streams")
struct ReplayStreamTests {
    static let records = [
        record(0, device: "AA:AA:AA:AA:AA:AA", name: "KICKR", characteristic: 0x2A5B, value: "01"),
        record(1, device: "BB:BB:BB:BB:BB:BB", characteristic: 0x2A5B, value: "02"),
        record(2, device: "AA:AA:AA:AA:AA:AA", characteristic: 0x2A37, value: "03"),
        record(3, device: "AA:AA:AA:AA:AA:AA", characteristic: 0x2A5B, value: "04"),
    ]

    @Test func streamCarriesEveryRecordInOrder() async {
        let replay = ValueReplay(records: Self.records, clock: InstantTestClock())
        var times: [Double] = []
        for await item in replay.stream() { times.append(item.timestamp) }
        #expect(times == [0, 1, 2, 3])
    }

    @Test func valuesOfACharacteristicLookLikeLiveNotifications() async {
        let replay = ValueReplay(records: Self.records, clock: InstantTestClock())
        var values: [[UInt8]] = []
        let notifications: AsyncStream<[UInt8]> = replay.values(of: .cscMeasurement, device: "aa:aa:aa:aa:aa:aa")
        for await value in notifications { values.append(value) }
        #expect(values == [[0x01], [0x04]])

        var everyDevice: [[UInt8]] = []
        for await value in replay.values(of: .cscMeasurement) { everyDevice.append(value) }
        #expect(everyDevice == [[0x01], [0x02], [0x04]])

        var named: [[UInt8]] = []
        for await value in replay.values(of: .cscMeasurement, device: "KICKR") { named.append(value) }
        #expect(named == [[0x01]])
    }

    @Test(.timeLimit(.minutes(1)))
    func leavingTheStreamEarlyCancelsTheReplay() async {
        // An hour between records: the wait for the second one ends only by cancellation.
        let clock = CancellationProbeClock()
        let replay = ValueReplay(records: [record(0), record(3600)], clock: clock)
        var count = 0
        for await _ in replay.stream() {
            count += 1
            break
        }
        #expect(count == 1)
        var cancelledWaits = 0
        for await _ in clock.cancellations {
            cancelledWaits += 1
            break
        }
        #expect(cancelledWaits == 1)
    }
}

/// A real monotonic clock that reports every sleep ended by cancellation on ``cancellations``.
struct CancellationProbeClock: Clock {
    let base = ContinuousClock()
    let cancellations: AsyncStream<Void>
    private let cancelled: AsyncStream<Void>.Continuation

    init() { (cancellations, cancelled) = AsyncStream.makeStream(of: Void.self) }

    var now: ContinuousClock.Instant { base.now }
    var minimumResolution: Duration { base.minimumResolution }

    func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        do {
            try await base.sleep(until: deadline, tolerance: tolerance)
        } catch {
            cancelled.yield()
            throw error
        }
    }
}
