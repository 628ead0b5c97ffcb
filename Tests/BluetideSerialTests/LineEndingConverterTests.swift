import Testing

@testable import BluetideSerial

/// The daemon's `eol`: each line end written to a pty becomes the device's line end.
@Suite struct LineEndingConverterTests {
    @Test func everyLineEndBecomesTheEndingAlsoAcrossChunks() {
        var crlf = LineEndingConverter(ending: [0x0D, 0x0A])
        #expect(crlf.convert(Array("a\nb\r\nc\rd".utf8)) == Array("a\r\nb\r\nc\r\nd".utf8))
        #expect(crlf.convert(Array("e\r".utf8)) == Array("e\r\n".utf8))
        #expect(crlf.convert(Array("\nf".utf8)) == Array("f".utf8), "the LF of a CRLF split across chunks ends no second line")
        var none = LineEndingConverter(ending: [])
        #expect(none.convert(Array("AT\r\n".utf8)) == Array("AT".utf8))
        var unchanged = LineEndingConverter(ending: nil)
        #expect(unchanged.convert([0x0D, 0x0A, 0x41]) == [0x0D, 0x0A, 0x41])
    }
}
