import BluetideBase
import Foundation
import Testing
@testable import BluetideRecording

/// `LiveRecording`: what `bluetide record` runs, without a device: the sources are streams the
/// test feeds, the clock is virtual and the log is in memory.
@Suite("Live recording")
struct LiveRecordingTests {
    static let device = DeviceIdentity(address: "C6:C5:C4:C3:C2:C1/R", name: "Strap")

    /// A source fed by the test.
    static func source(_ characteristic: BluetoothUUID, _ operation: ValueOperation = .notify, profile: String? = nil)
        -> (LiveRecording.Source, AsyncThrowingStream<[UInt8], any Error>.Continuation)
    {
        let (values, feed) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
        return (LiveRecording.Source(service: .heartRate, characteristic: characteristic, operation: operation, values: values, profile: profile), feed)
    }

    /// Runs a recording in a task of its own, reporting each record on `seen`; returns the
    /// outcome (or the error) and the log's bytes.
    static func record(
        _ sources: [LiveRecording.Source], clock: InstantTestClock, count: Int? = nil, closeFirst: Bool = false,
        until stop: (@Sendable () async -> Void)? = nil, seen: AsyncStream<ValueRecord>.Continuation? = nil
    ) -> Task<(Result<LiveRecording.Outcome, any Error>, [UInt8]), Never> {
        Task {
            let sink = MemoryValueLogSink()
            let writer = try! ValueLogWriter(sink: sink, header: ValueLogHeader(startedAt: nil), flushEvery: 1)
            if closeFirst { try! writer.close() }
            let recorder = ValueRecorder(writer: writer, clock: clock, wallClock: { nil })
            let result: Result<LiveRecording.Outcome, any Error>
            do {
                result = .success(try await LiveRecording.run(sources, device: device, into: recorder, count: count, until: stop) { _ = seen?.yield($0) })
            } catch {
                result = .failure(error)
            }
            if !closeFirst { try? writer.close() }
            return (result, sink.bytes)
        }
    }

    @Test func valuesAreLoggedInArrivalOrderWithTheirArrivalTimesUntilASourceEnds() async throws {
        let clock = InstantTestClock()
        let (heartRate, heartRateFeed) = Self.source(.heartRateMeasurement, profile: "heart-rate")
        let (battery, batteryFeed) = Self.source(.batteryLevel, .indicate)
        let (seen, seeing) = AsyncStream<ValueRecord>.makeStream()
        var records = seen.makeAsyncIterator()
        let recording = Self.record([heartRate, battery], clock: clock, seen: seeing)

        heartRateFeed.yield([0x00, 72])
        let first = await records.next()
        clock.advance(by: 2)
        batteryFeed.yield([87])
        let second = await records.next()
        clock.advance(by: 0.5)
        heartRateFeed.yield([0x00, 74])
        let third = await records.next()
        heartRateFeed.finish()

        let (result, bytes) = await recording.value
        let outcome = try result.get()
        #expect(outcome == LiveRecording.Outcome(records: 3, dropped: 0, ending: .sourceEnded(reason: "the device stopped sending")))
        #expect([first, second, third].map { $0?.timestamp } == [0, 2, 2.5])
        let log = try ValueLogReader.read(bytes: bytes)
        #expect(log.records.map(\.value) == [[0x00, 72], [87], [0x00, 74]])
        #expect(log.records.map(\.characteristic) == [.heartRateMeasurement, .batteryLevel, .heartRateMeasurement])
        #expect(log.records.map(\.operation) == [.notify, .indicate, .notify])
        #expect(log.records.map(\.profile) == ["heart-rate", nil, "heart-rate"])
        #expect(log.records.allSatisfy { $0.device == Self.device && $0.service == .heartRate })
    }

    @Test func aFailedStreamEndsTheRecordingWithItsError() async throws {
        struct LinkLost: Error, CustomStringConvertible { var description: String { "link lost: supervision timeout" } }
        let (heartRate, feed) = Self.source(.heartRateMeasurement)
        let recording = Self.record([heartRate], clock: InstantTestClock())
        feed.yield([0x00, 60])
        feed.finish(throwing: LinkLost())
        let (result, bytes) = await recording.value
        #expect(try result.get() == LiveRecording.Outcome(records: 1, dropped: 0, ending: .sourceEnded(reason: "link lost: supervision timeout")))
        #expect(try ValueLogReader.read(bytes: bytes).records.count == 1)
    }

    @Test func aCountEndsTheRecordingAtThatManyValues() async throws {
        let (heartRate, feed) = Self.source(.heartRateMeasurement)
        for beat in 0..<5 { feed.yield([0x00, UInt8(60 + beat)]) }
        let recording = Self.record([heartRate], clock: InstantTestClock(), count: 3)
        let (result, bytes) = await recording.value
        #expect(try result.get() == LiveRecording.Outcome(records: 3, dropped: 0, ending: .reachedCount))
        #expect(try ValueLogReader.read(bytes: bytes).records.map(\.value) == [[0x00, 60], [0x00, 61], [0x00, 62]])
        feed.finish()
    }

    @Test func theStopFunctionEndsTheRecordingKeepingWhatArrived() async throws {
        let (heartRate, feed) = Self.source(.heartRateMeasurement)
        let (stopSignal, stop) = AsyncStream<Void>.makeStream()
        let (seen, seeing) = AsyncStream<ValueRecord>.makeStream()
        var records = seen.makeAsyncIterator()
        let recording = Self.record([heartRate], clock: InstantTestClock(), until: { for await _ in stopSignal { return } }, seen: seeing)
        feed.yield([0x00, 70])
        feed.yield([0x00, 71])
        _ = await records.next()
        _ = await records.next()
        stop.yield()
        let (result, bytes) = await recording.value
        #expect(try result.get() == LiveRecording.Outcome(records: 2, dropped: 0, ending: .stopped))
        #expect(try ValueLogReader.read(bytes: bytes).records.count == 2)
        feed.finish()
    }

    @Test func aWriteErrorEndsTheRecordingWithThatError() async throws {
        let (heartRate, feed) = Self.source(.heartRateMeasurement)
        let recording = Self.record([heartRate], clock: InstantTestClock(), closeFirst: true)
        feed.yield([0x00, 70])
        let (result, _) = await recording.value
        #expect(throws: ValueLogError.closed(path: "<memory>")) { try result.get() }
        feed.finish()
    }

    @Test func aCountOfZeroRecordsNothing() async throws {
        let (heartRate, feed) = Self.source(.heartRateMeasurement)
        feed.yield([0x00, 70])
        let (result, bytes) = await Self.record([heartRate], clock: InstantTestClock(), count: 0).value
        #expect(try result.get() == LiveRecording.Outcome(records: 0, dropped: 0, ending: .reachedCount))
        #expect(try ValueLogReader.read(bytes: bytes).records.isEmpty)
        feed.finish()
    }
}
