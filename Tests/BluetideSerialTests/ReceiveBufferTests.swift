import Testing

@testable import BluetideSerial

/// The bounded buffer between a link's notifications and its reader (issue 30 item 2).
@Suite struct ReceiveBufferTests {
    @Test func holdsTheWriterPastHalfAndDropsPastTheLimit() async {
        let buffer = ReceiveBuffer(limit: 4096)
        #expect(buffer.highWaterMark == 2048 && buffer.lowWaterMark == 1024)
        for _ in 0..<8 { #expect(buffer.push([UInt8](repeating: 1, count: 256))) }
        #expect(!buffer.isFull, "2048 bytes: at the high-water mark, not past it")
        #expect(buffer.push([2]))
        #expect(buffer.isFull)
        // Past the limit: dropped whole and counted, never held.
        for _ in 0..<7 { #expect(buffer.push([UInt8](repeating: 3, count: 256))) }
        #expect(buffer.heldBytes == 2049 + 7 * 256)
        #expect(!buffer.push([UInt8](repeating: 4, count: 256)))
        #expect(buffer.dropped == 256 && buffer.heldBytes == 3841)
        // The writer waits until the reader takes the level down to a quarter.
        let released = Task { await buffer.waitForRoom(toWrite: 0) }
        var taken = 0
        while buffer.heldBytes > 1024, let chunk = await buffer.next() { taken += chunk.count }
        #expect(!buffer.isFull)
        await released.value
        #expect(taken == 3841 - buffer.heldBytes)
    }

    /// The level wait (`SerialLink.waitForReceiveLevel`): resumed by the change that makes its
    /// condition hold, by the end of the buffer, or by cancellation — never by a timer.
    @Test func levelWaitsEndOnTheChangeTheEndOrCancellation() async {
        let buffer = ReceiveBuffer(limit: 4096)
        #expect(await buffer.waitForLevel { $0.received == 0 } == ReceiveLevel(unread: 0, dropped: 0, written: 0, received: 0))
        let echoed = Task { await buffer.waitForLevel { $0.written == 3 && $0.received == $0.written } }
        buffer.wrote(3)
        buffer.push([1])
        buffer.push([2, 3])
        #expect(await echoed.value == ReceiveLevel(unread: 3, dropped: 0, written: 3, received: 3))
        let read = Task { await buffer.waitForLevel { $0.unread == 0 } }
        _ = await buffer.next()
        _ = await buffer.next()
        #expect(await read.value.unread == 0)
        let cancelled = Task { await buffer.waitForLevel { $0.received > 1000 } }
        cancelled.cancel()
        #expect(await cancelled.value.received == 3)
        let never = Task { await buffer.waitForLevel { $0.received > 1000 } }
        buffer.finish()
        #expect(await never.value.received == 3, "the end releases every level wait")
    }

    @Test func theReaderGetsWhatIsHeldThenTheEnd() async {
        let buffer = ReceiveBuffer(limit: 1024)
        let waiting = Task { await buffer.next() }
        await Task.yield()
        buffer.push([1, 2])
        #expect(await waiting.value == [1, 2])
        buffer.push([3])
        buffer.finish()
        #expect(await buffer.next() == [3])
        #expect(await buffer.next() == nil)
        #expect(!buffer.push([4]), "nothing is taken after the end")
        await buffer.waitForRoom(toWrite: 0)
    }

    /// Bytes on their way back count: while nobody waits for data, the writer keeps what it
    /// wrote beyond what came back within the headroom (half the limit), so an echo can never
    /// overflow the buffer however late the receiving task runs (the stall of issue 30: 3 KB
    /// dropped and the echo test hung on a busy machine).
    @Test func outstandingBytesHoldTheWriterWhileTheReaderIsNotWaiting() async {
        let buffer = ReceiveBuffer(limit: 4096)
        #expect(buffer.headroom == 2048)
        buffer.wrote(2000)
        #expect(buffer.hasRoom(toWrite: 48))
        #expect(!buffer.hasRoom(toWrite: 49), "2000 outstanding + 49 > 2048")
        let released = Task { await buffer.waitForRoom(toWrite: 100) }
        // 100 bytes of echo come back: 1900 outstanding, room for 100 (held 100, not past high water).
        #expect(buffer.push([UInt8](repeating: 7, count: 100)))
        await released.value
        #expect(buffer.hasRoom(toWrite: 148) && !buffer.hasRoom(toWrite: 149))
        // More echo than written (a chatty device) never counts as negative room.
        buffer.push([UInt8](repeating: 8, count: 1900))
        buffer.push([UInt8](repeating: 9, count: 40))
        #expect(buffer.heldBytes == 2040 && !buffer.isFull)
        #expect(buffer.hasRoom(toWrite: 2048) && !buffer.hasRoom(toWrite: 2049))
    }

    /// A reader that waits for data lets the writer go, however much it wrote: a device that
    /// answers nothing is not held back by a reader that keeps up.
    @Test func aWaitingReaderLetsTheWriterGo() async {
        let buffer = ReceiveBuffer(limit: 1024)
        buffer.wrote(100_000)
        #expect(!buffer.hasRoom(toWrite: 1))
        let writer = Task { await buffer.waitForRoom(toWrite: 244) }
        let reader = Task { await buffer.next() }
        await writer.value  // released once the reader waits
        #expect(buffer.hasRoom(toWrite: 244))
        buffer.push([1])
        #expect(await reader.value == [1])
        #expect(!buffer.hasRoom(toWrite: 1), "the reader is busy again: the outstanding bytes count")
    }

    @Test func aCancelledReaderEndsWithoutAChunk() async {
        let buffer = ReceiveBuffer(limit: 1024)
        let reader = Task { await buffer.next() }
        reader.cancel()
        #expect(await reader.value == nil)
        buffer.push([9])
        #expect(await buffer.next() == [9], "a chunk pushed after the cancelled read is kept for the next one")
    }
}
