import BluetideBase
import Testing
@testable import BluetideProfiles

@Suite struct SerialTests {
    @Test func uuids() {
        #expect(SerialUUID.nordicUARTService.uuidString == "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(SerialUUID.nordicUARTRX.uuidString == "6E400002-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(SerialUUID.nordicUARTTX.uuidString == "6E400003-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(SerialUUID.hm10Service.uuid16 == 0xFFE0 && SerialUUID.hm10Data.uuid16 == 0xFFE1)
    }

    @Test func chunkerSplitsAtMaxSize() {
        let chunker = SerialChunker()
        #expect(chunker.maxChunkSize == 20)
        let bytes = (0..<45).map { UInt8($0) }
        let chunks = chunker.chunks(bytes)
        #expect(chunks.map(\.count) == [20, 20, 5])
        #expect(chunks.flatMap { $0 } == bytes)
        #expect(chunker.chunks([]).isEmpty)
        #expect(chunker.chunks(Array(repeating: 1, count: 20)).map(\.count) == [20], "exactly one full chunk")
        #expect(chunker.chunks(Array(repeating: 1, count: 21)).map(\.count) == [20, 1])
    }

    @Test func chunkerFromMTUAndClamping() {
        #expect(SerialChunker(mtu: 23).maxChunkSize == 20)
        #expect(SerialChunker(mtu: 247).maxChunkSize == 244)
        #expect(SerialChunker(mtu: 3).maxChunkSize == 1, "never zero")
        #expect(SerialChunker(maxChunkSize: -5).maxChunkSize == 1)
        #expect(SerialChunker(maxChunkSize: 10_000).maxChunkSize == 512)
        #expect(SerialChunker(maxChunkSize: 4).chunks("hello").map(\.count) == [4, 1])
    }

    @Test func linesWithEveryTerminator() {
        var assembler = LineAssembler()
        #expect(assembler.feed(Array("one\ntwo\r\nthree\rfour".utf8)).map(\.text) == ["one", "two", "three"])
        #expect(assembler.pending == Array("four".utf8), "the partial line is kept")
        #expect(assembler.feed(Array("\n".utf8)).map(\.text) == ["four"])
        #expect(assembler.feed(Array("\n\n".utf8)).map(\.text) == ["", ""], "empty lines are lines")
    }

    @Test func crlfSplitAcrossChunksIsOneTerminator() {
        var assembler = LineAssembler()
        #expect(assembler.feed(Array("OK+CONN\r".utf8)).map(\.text) == ["OK+CONN"])
        #expect(assembler.feed(Array("\nOK+LOST\r".utf8)).map(\.text) == ["OK+LOST"])
        #expect(assembler.feed(Array("\r\n".utf8)).map(\.text) == [""], "\\r then \\r\\n: one empty line")
    }

    @Test func lineSplitAcrossManyChunks() {
        var assembler = LineAssembler()
        let text = "a line longer than twenty bytes, sent in HM-10 sized chunks\n"
        var lines: [SerialLine] = []
        for chunk in SerialChunker().chunks(text) { lines += assembler.feed(chunk) }
        #expect(lines.map(\.text) == ["a line longer than twenty bytes, sent in HM-10 sized chunks"])
        var utf8 = LineAssembler()
        let chunks = SerialChunker(maxChunkSize: 1).chunks("héllo\n")
        #expect(chunks.flatMap { utf8.feed($0) }.map(\.text) == ["héllo"], "a multi-byte character split over chunks is rejoined")
    }

    @Test func configurableTerminators() {
        var lf = LineAssembler(terminator: .lineFeed)
        #expect(lf.feed(Array("a\r\nb\rc\n".utf8)).map(\.text) == ["a\r", "b\rc"])
        var cr = LineAssembler(terminator: .carriageReturn)
        #expect(cr.feed(Array("a\rb\nc\r".utf8)).map(\.text) == ["a", "b\nc"])
        var crlf = LineAssembler(terminator: .carriageReturnLineFeed)
        #expect(crlf.feed(Array("a\nb\rc\r".utf8)).map(\.text) == [])
        #expect(crlf.feed(Array("\nd\r\n".utf8)).map(\.text) == ["a\nb\rc", "d"])
    }

    @Test func overflowSplitsByDefault() {
        var assembler = LineAssembler(maxLineLength: 4)
        let lines = assembler.feed(Array("abcd\nabcdefghij\n".utf8))
        #expect(lines == [
            SerialLine(bytes: Array("abcd".utf8)), SerialLine(bytes: Array("abcd".utf8), overflowed: true),
            SerialLine(bytes: Array("efgh".utf8), overflowed: true), SerialLine(bytes: Array("ij".utf8)),
        ])
        #expect(assembler.pending.isEmpty)
    }

    @Test func overflowDiscardDropsTheLine() {
        var assembler = LineAssembler(maxLineLength: 4, overflowPolicy: .discard)
        var lines = assembler.feed(Array("abcdefgh".utf8))
        #expect(lines.isEmpty && assembler.pending.isEmpty, "nothing buffered beyond the bound")
        lines = assembler.feed(Array("ij\nok\n".utf8))
        #expect(lines == [SerialLine(bytes: [], overflowed: true), SerialLine(bytes: Array("ok".utf8))])
    }

    @Test func crlfModeAllowsTheTerminatorAtTheBound() {
        var assembler = LineAssembler(terminator: .carriageReturnLineFeed, maxLineLength: 4)
        #expect(assembler.feed(Array("abcd\r\n".utf8)) == [SerialLine(bytes: Array("abcd".utf8))])
    }

    @Test func flushHandsOutThePartialLine() {
        var assembler = LineAssembler()
        _ = assembler.feed(Array("partial".utf8))
        #expect(assembler.flush() == SerialLine(bytes: Array("partial".utf8)))
        #expect(assembler.flush() == nil)
        #expect(LineAssembler(maxLineLength: 0).maxLineLength == 1)
    }
}
