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

    @Test func lineEndingsAreConvertedAcrossChunks() {
        var pending = false
        #expect(LineEnding.crlf.convert(Array("a\nb\r".utf8), pendingCR: &pending) == Array("a\r\nb\r\n".utf8))
        #expect(pending)
        #expect(LineEnding.crlf.convert(Array("\nc".utf8), pendingCR: &pending) == Array("c".utf8), "the LF of a split CRLF is not a second end")
        pending = false
        #expect(LineEnding.none.convert(Array("AT+NAME?\r\n".utf8), pendingCR: &pending) == Array("AT+NAME?".utf8))
        #expect(LineEnding.cr.convert(Array("x\n".utf8), pendingCR: &pending) == Array("x\r".utf8))
    }

    @Test func lineEditorEditsAndHandsOutTheLine() {
        var editor = LocalEchoLine()
        #expect(editor.feed(UInt8(ascii: "A")) == ([UInt8(ascii: "A")], nil))
        _ = editor.feed(UInt8(ascii: "X"))
        #expect(editor.feed(0x7F).screen == [0x08, 0x20, 0x08])
        _ = editor.feed(UInt8(ascii: "T"))
        #expect(editor.feed(0x01) == ([], nil), "control keys are ignored")
        #expect(editor.feed(0x0D).line == Array("AT".utf8))
        #expect(editor.line.isEmpty)
        for byte in Array("é".utf8) { _ = editor.feed(byte) }
        _ = editor.feed(0x7F)
        #expect(editor.line.isEmpty, "Backspace removes a whole UTF-8 character")
    }

    @Test func tcpAddressesDefaultToLoopback() throws {
        #expect(try UARTCommand.parseTCP("7000") == ("127.0.0.1", 7000))
        #expect(try UARTCommand.parseTCP(":7000") == ("127.0.0.1", 7000))
        #expect(try UARTCommand.parseTCP("0.0.0.0:7001") == ("0.0.0.0", 7001))
        #expect(throws: CommandFailure.self) { try UARTCommand.parseTCP("host:port") }
    }
}
