import Testing
@testable import Bluetide

/// Notification sequences are bounded (issue 22 item 2): a reader that stops reading holds at
/// most its buffer, the rest is dropped by the chosen policy and counted.
@Suite(.timeLimit(.minutes(1))) struct NotificationBufferingTests {
    /// Notifies 0..<20 while `slow` is not read; `witness` (large enough) is read to the 20th
    /// value, which proves `slow` was offered all 20 (one fan-out gives each value to both).
    private func notifyTwentyPastAReaderThatStopped(
        _ buffering: NotificationBuffering, typed: Bool = false
    ) async throws -> (received: [UInt8], dropped: Int) {
        let (_, central, peripheral) = try await ConnectionTests.pair()
        defer { Task { await central.close(); await peripheral.close() } }
        let connection = try await central.central.connect(to: peripheral.address, policy: .test)
        var received: [UInt8] = []
        let witness = try await connection.notifications(of: TestGATT.notify, buffering: .oldest(100))
        if typed {
            let slow = try await connection.notifications(of: TestGATT.notify, as: UInt8.self, buffering: buffering)
            try await offerTwenty(peripheral, witness)
            // The typed sequence decodes in a task of its own: its drops show once it has run.
            try await within(30, "the typed sequence took all 20") { while connection.droppedNotifications < 20 - buffering.capacity { await Task.yield() } }
            var iterator = slow.makeAsyncIterator()
            for _ in 0..<buffering.capacity { received.append(try #require(try await iterator.next())) }
        } else {
            let slow = try await connection.notifications(of: TestGATT.notify, buffering: buffering)
            try await offerTwenty(peripheral, witness)
            // The witness can see the 20th value before the pump has given it to this sequence
            // (and counted its drop): wait until all 20 have been offered here too.
            try await within(30, "the sequence was offered all 20") { while connection.droppedNotifications < 20 - buffering.capacity { await Task.yield() } }
            var iterator = slow.makeAsyncIterator()
            for _ in 0..<buffering.capacity { received += try #require(try await iterator.next()) }
        }
        let dropped = connection.droppedNotifications
        await connection.disconnect()
        return (received, dropped)
    }

    private func offerTwenty(_ peripheral: TestPeripheral, _ witness: AsyncThrowingStream<[UInt8], any Error>) async throws {
        for value in UInt8(0)..<20 { try await peripheral.notify([value]) }
        var seen: [UInt8] = []
        for try await value in witness {
            seen += value
            if seen.count == 20 { break }
        }
        #expect(seen == Array(0..<20))
    }

    @Test func newestKeepsTheLatestValuesAndCountsTheRest() async throws {
        let (received, dropped) = try await notifyTwentyPastAReaderThatStopped(.newest(4))
        #expect(received == [16, 17, 18, 19])
        #expect(dropped == 16)
    }

    @Test func oldestKeepsAnUnbrokenRunFromWhereTheReaderStopped() async throws {
        let (received, dropped) = try await notifyTwentyPastAReaderThatStopped(.oldest(4))
        #expect(received == [0, 1, 2, 3])
        #expect(dropped == 16)
    }

    @Test func typedSequencesAreBoundedToo() async throws {
        let (received, dropped) = try await notifyTwentyPastAReaderThatStopped(.oldest(5), typed: true)
        #expect(received == [0, 1, 2, 3, 4])
        #expect(dropped >= 15, "the raw sequence under the typed one may give up values too: \(dropped)")
    }

    @Test func theStandardBufferIsBoundedAndAtLeastOne() {
        #expect(NotificationBuffering.standard == .newest(4096))
        #expect(NotificationBuffering.oldest(0).capacity == 1)
    }
}
