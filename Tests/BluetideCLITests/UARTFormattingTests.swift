import BluetideSerial
import Foundation
import Testing
@testable import BluetideCommands

@Suite struct UARTFormattingTests {
    let noon = Date(timeIntervalSince1970: 0)

    @Test func oneDevicePassesBytesThrough() {
        var formatter = UARTOutputFormatter()
        #expect(formatter.format(Array("OK+NAME:".utf8), from: "A", at: noon) == Array("OK+NAME:".utf8))
        #expect(formatter.format(Array("HMSoft".utf8), from: "A", at: noon) == Array("HMSoft".utf8))
        #expect(formatter.endLine() == [0x0A])
        #expect(formatter.endLine() == [])
    }

    @Test func severalDevicesPrefixEachLineAndEndAnotherDevicesLine() {
        var formatter = UARTOutputFormatter(prefixNames: true)
        var out = formatter.format(Array("one\ntw".utf8), from: "R1", at: noon)
        out += formatter.format(Array("x\n".utf8), from: "R2", at: noon)
        out += formatter.format(Array("o\n".utf8), from: "R1", at: noon)
        #expect(String(decoding: out, as: UTF8.self) == "[R1] one\n[R1] tw\n[R2] x\n[R1] o\n")
    }

    @Test func hexIsOneLinePerChunk() {
        var formatter = UARTOutputFormatter(hex: true, prefixNames: true)
        let out = formatter.format([0x68, 0x69, 0x0D, 0x0A], from: "R1", at: noon)
        #expect(String(decoding: out, as: UTF8.self) == "[R1] 68 69 0D 0A\n")
    }

    @Test func linesAreCutIntoWritesAndHeldUntilTheirEnd() {
        var pending = false
        var lines = LineWrites()
        #expect(lines.feed(LineEnding.crlf.lineWrites(Array("AT\nAT+VE".utf8), pendingCR: &pending)) == [Array("AT\r\n".utf8)])
        #expect(lines.feed(LineEnding.crlf.lineWrites(Array("RS?\r".utf8), pendingCR: &pending)) == [Array("AT+VERS?\r\n".utf8)])
        #expect(pending)
        #expect(lines.feed(LineEnding.crlf.lineWrites(Array("\nAT".utf8), pendingCR: &pending)) == [], "the LF of a split CRLF ends nothing")
        #expect(lines.flush() == Array("AT".utf8))
        #expect(lines.flush() == nil)
        #expect(lines.feed(LineEnding.none.lineWrites(Array("a\n\nb\n".utf8), pendingCR: &pending)) == [[0x61], [0x62]])
    }

    @Test func lineEndingsAreConvertedAcrossChunks() {
        var pending = false
        #expect(LineEnding.crlf.convert(Array("a\nb\r".utf8), pendingCR: &pending) == Array("a\r\nb\r\n".utf8))
        #expect(pending)
        #expect(LineEnding.crlf.convert(Array("\nc".utf8), pendingCR: &pending) == Array("c".utf8), "the LF of a split CRLF is not a second end")
        pending = false
        #expect(LineEnding.none.convert(Array("AT+NAME?\r\n".utf8), pendingCR: &pending) == Array("AT+NAME?".utf8))
        #expect(LineEnding.cr.convert(Array("x\n".utf8), pendingCR: &pending) == Array("x\r".utf8))
    }

    @Test func theTypedLineIsRedrawnWithTheCursorWhereTheEditorHasIt() {
        var editor = LineEditor()
        var decoder = KeyDecoder()
        for key in decoder.keys(Array("AT+NAM?".utf8) + [0x1B, 0x5B, 0x44]) { _ = editor.handle(key) }  // ← once
        #expect(String(decoding: UARTRunner.editedLine(editor), as: UTF8.self) == "\rAT+NAM?\u{1B}[K\u{1B}[1D")
        for key in decoder.keys(Array("E".utf8)) { _ = editor.handle(key) }
        #expect(editor.line == "AT+NAME?")
    }

    @Test func tcpAddressesDefaultToLoopback() throws {
        #expect(try UARTCommand.parseTCP("7000") == ("127.0.0.1", 7000))
        #expect(try UARTCommand.parseTCP(":7000") == ("127.0.0.1", 7000))
        #expect(try UARTCommand.parseTCP("0.0.0.0:7001") == ("0.0.0.0", 7001))
        #expect(throws: CommandFailure.self) { try UARTCommand.parseTCP("host:port") }
    }
}
