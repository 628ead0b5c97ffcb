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
        let released = Task { await buffer.waitForRoom() }
        var taken = 0
        while buffer.heldBytes > 1024, let chunk = await buffer.next() { taken += chunk.count }
        #expect(!buffer.isFull)
        await released.value
        #expect(taken == 3841 - buffer.heldBytes)
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
        await buffer.waitForRoom()
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
