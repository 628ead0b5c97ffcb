import BluetideBase
import Testing
@testable import BluetideRecording

@Suite("Value log reader")
struct ValueLogReaderTests {
    /// The line error a read throws, or nil when it does not throw one.
    func lineError(_ bytes: [UInt8], options: ValueLogReader.Options = .init()) -> ValueLogLineError? {
        do {
            _ = try ValueLogReader.read(bytes: bytes, options: options)
            return nil
        } catch {
            if case let .malformedLine(lineError) = error { return lineError }
            return nil
        }
    }

    // MARK: Header

    @Test func emptyInputHasNoHeader() throws {
        let error = try #require(lineError([]))
        #expect(error.line == 1)
        #expect(error.field == "format")
        #expect(error.found == "an empty file")
    }

    @Test func recordWithoutHeaderIsRefused() throws {
        let error = try #require(lineError(lines(recordLine())))
        #expect(error.line == 1)
        #expect(error.field == "format")
        #expect(error.found.contains("not a Bluetide value log"))
    }

    @Test func otherFormatIsRefused() throws {
        let error = try #require(lineError(lines(#"{"format":"btsnoop","version":1}"#)))
        #expect(error == ValueLogLineError(line: 1, field: "format", expected: "\"bluetide-values\"", found: "\"btsnoop\""))
    }

    @Test(arguments: [
        (#"{"format":"bluetide-values"}"#, "no such field"),
        (#"{"format":"bluetide-values","version":"1"}"#, "\"1\""),
        (#"{"format":"bluetide-values","version":1.5}"#, "1.5"),
        (#"{"format":"bluetide-values","version":0}"#, "0"),
        (#"{"format":"bluetide-values","version":1.0}"#, "1.0"),
    ])
    func badVersionIsRefused(header: String, found: String) throws {
        let error = try #require(lineError(lines(header)))
        #expect(error.line == 1)
        #expect(error.field == "version")
        #expect(error.found == found)
    }

    @Test func newerVersionIsRefusedSayingSo() throws {
        let error = try #require(lineError(lines(#"{"format":"bluetide-values","version":2}"#, recordLine())))
        #expect(error.field == "version")
        #expect(error.found == "2 (written by a newer Bluetide)")
    }

    @Test func headerThatIsNotJSONNamesTheColumn() throws {
        let error = try #require(lineError(lines(#"{"format":"bluetide-values","version":1"#)))
        #expect(error.line == 1)
        #expect(error.field == "JSON")
        #expect(error.found == "invalid JSON at column 40: expected ',' or '}', found end of line")
    }

    @Test func badStartedAtIsRefused() throws {
        let error = try #require(lineError(lines(#"{"format":"bluetide-values","version":1,"started_at":"yesterday"}"#)))
        #expect(error.field == "started_at")
        #expect(error.found == "\"yesterday\"")
    }

    // MARK: Malformed record lines

    @Test(arguments: [
        (#"{"t":"0.5","device":"d","characteristic":"2A37","operation":"notify","value":"00"}"#, "t", "\"0.5\""),
        (#"{"t":-1,"device":"d","characteristic":"2A37","operation":"notify","value":"00"}"#, "t", "-1"),
        (#"{"t":1e10,"device":"d","characteristic":"2A37","operation":"notify","value":"00"}"#, "t", "1e10"),
        (#"{"device":"d","characteristic":"2A37","operation":"notify","value":"00"}"#, "t", "no such field"),
        (#"{"t":1,"device":"","characteristic":"2A37","operation":"notify","value":"00"}"#, "device", "\"\""),
        (#"{"t":1,"device":7,"characteristic":"2A37","operation":"notify","value":"00"}"#, "device", "7"),
        (#"{"t":1,"device":"d","device_name":false,"characteristic":"2A37","operation":"notify","value":"00"}"#, "device_name", "false"),
        (#"{"t":1,"device":"d","operation":"notify","value":"00"}"#, "characteristic", "no such field"),
        (#"{"t":1,"device":"d","characteristic":"2A3","operation":"notify","value":"00"}"#, "characteristic", "\"2A3\""),
        (#"{"t":1,"device":"d","characteristic":"０２A37","operation":"notify","value":"00"}"#, "characteristic", "\"０２A37\""),
        (#"{"t":1,"device":"d","service":[1],"characteristic":"2A37","operation":"notify","value":"00"}"#, "service", "an array"),
        (#"{"t":1,"device":"d","characteristic":"2A37","operation":"Notify","value":"00"}"#, "operation", "\"Notify\""),
        (#"{"t":1,"device":"d","characteristic":"2A37","value":"00"}"#, "operation", "no such field"),
        (#"{"t":1,"device":"d","characteristic":"2A37","operation":"notify","value":"0"}"#, "value", "\"0\""),
        (#"{"t":1,"device":"d","characteristic":"2A37","operation":"notify","value":"00 48"}"#, "value", "\"00 48\""),
        (#"{"t":1,"device":"d","characteristic":"2A37","operation":"notify","value":"zz"}"#, "value", "\"zz\""),
        (#"{"t":1,"device":"d","characteristic":"2A37","operation":"notify"}"#, "value", "no such field"),
        (#"{"t":1,"device":"d","characteristic":"2A37","operation":"notify","value":"00","profile":3}"#, "profile", "3"),
        (#"{"t":1,"wall_time":"2026-02-30T00:00:00Z","device":"d","characteristic":"2A37","operation":"notify","value":"00"}"#, "wall_time", "\"2026-02-30T00:00:00Z\""),
        (#"[1,2]"#, "record", "an array"),
        (#""text""#, "record", "\"text\""),
        (#"{"t":1,"t":2}"#, "JSON", "invalid JSON at column 8: field \"t\" appears twice"),
        (#"{"t":1,}"#, "JSON", "invalid JSON at column 8: expected a field name in quotes, found '}'"),
        (#"{"t":01}"#, "JSON", "invalid JSON at column 7: expected ',' or '}', found '1'"),
        (#"{"t":1} x"#, "JSON", "invalid JSON at column 9: unexpected 'x' after the end of the value"),
        (#"{"a":"\q"}"#, "JSON", "invalid JSON at column 8: unknown escape \\'q'"),
    ])
    func malformedLineNamesLineAndField(line: String, field: String, found: String) throws {
        let bytes = lines(headerLine, recordLine("0.25"), line, recordLine("1.5"))
        let error = try #require(lineError(bytes))
        #expect(error.line == 3)
        #expect(error.field == field)
        #expect(error.found == found)
        #expect(!error.expected.isEmpty)
        #expect(error.description.hasPrefix("line 3, field \"\(field)\": expected "))
    }

    @Test func invalidUTF8InAStringIsMalformed() throws {
        var bytes = lines(headerLine)
        bytes += Array(#"{"t":1,"device":""#.utf8) + [0xC3, 0x28] + Array(#"","characteristic":"2A37","operation":"notify","value":"00"}"#.utf8) + [0x0A]
        let error = try #require(lineError(bytes))
        #expect(error.line == 2)
        #expect(error.field == "JSON")
        #expect(error.found.contains("UTF-8"))
    }

    // MARK: Skipping and truncation

    @Test func skipModeKeepsGoodLinesAndCountsBadOnes() throws {
        let bytes = lines(headerLine, recordLine("0.1"), "garbage", recordLine("0.2"), #"{"t":"x"}"#, recordLine("0.3"))
        let log = try ValueLogReader.read(bytes: bytes, options: .init(skipMalformedLines: true))
        #expect(log.records.map(\.timestamp) == [0.1, 0.2, 0.3])
        #expect(log.skippedLineCount == 2)
        #expect(log.skippedLines.map(\.line) == [3, 5])
        #expect(log.skippedLines.map(\.field) == ["JSON", "t"])
    }

    @Test func skipModeStillRefusesABadHeader() throws {
        let error = try #require(lineError(lines("garbage", recordLine()), options: .init(skipMalformedLines: true)))
        #expect(error.line == 1)
    }

    @Test func truncatedLastLineIsReportedAndEverythingBeforeKept() throws {
        let full = try logBytes([record(0), record(1), record(2)])
        // Cut inside the last record at every position: the first two records always survive.
        let lastLineStart = try #require(full.dropLast().lastIndex(of: 0x0A)) + 1
        for cut in lastLineStart + 1 ..< full.count - 1 {
            let log = try ValueLogReader.read(bytes: Array(full[..<cut]))
            #expect(log.records == [record(0), record(1)], "cut at \(cut)")
            #expect(log.truncatedLastLine?.line == 4, "cut at \(cut)")
        }
        // Cut just before the final line feed: the last line is whole, so it is a record.
        let whole = try ValueLogReader.read(bytes: Array(full.dropLast()))
        #expect(whole.records.count == 3)
        #expect(whole.truncatedLastLine == nil)
    }

    @Test func malformedLastLineWithLineFeedIsAnErrorNotATruncation() throws {
        let error = try #require(lineError(lines(headerLine, recordLine(), #"{"t":1,"dev"#)))
        #expect(error.line == 3)
    }

    @Test func truncatedHeaderIsAnError() throws {
        let bytes = Array(#"{"format":"bluetide-val"#.utf8)
        #expect(lineError(bytes)?.line == 1)
    }

    @Test func missingFileNamesThePathAndTheOSError() throws {
        let path = "/nonexistent-bluetide-dir/log.jsonl"
        do {
            _ = try ValueLogReader.read(path: path)
            Issue.record("read a missing file")
        } catch {
            guard case let .io(operation, errorPath, code, message) = error else {
                Issue.record("expected an I/O error, got \(error)")
                return
            }
            #expect(operation == "open")
            #expect(errorPath == path)
            #expect(code == 2)
            #expect(message == "No such file or directory")
            #expect(error.description.contains(path))
        }
    }

    // MARK: Robustness

    @Test func randomInputNeverTraps() {
        var generator = SystemRandomNumberGenerator()
        let valid = (try? logBytes(ValueLogFormatTests.sampleRecords)) ?? []
        let alphabet = Array(#"{}[]":,.-+eE0123456789tfnulrasx\ "#.utf8) + [0x0A, 0xC3, 0xFF, 0x00]
        var outcomes = 0
        for round in 0..<3000 {
            var bytes: [UInt8]
            switch round % 3 {
            case 0:
                // Random mutations of a valid log.
                bytes = valid
                for _ in 0..<Int.random(in: 1...8, using: &generator) where !bytes.isEmpty {
                    let index = Int.random(in: 0..<bytes.count, using: &generator)
                    bytes[index] = alphabet.randomElement(using: &generator) ?? 0
                }
            case 1:
                // A valid header followed by JSON-ish noise.
                bytes = lines(headerLine) + (0..<Int.random(in: 0...200, using: &generator)).map { _ in
                    alphabet.randomElement(using: &generator) ?? 0
                }
            default:
                // Truncations of a valid log, and deep nesting.
                bytes = Array(valid.prefix(Int.random(in: 0...valid.count, using: &generator)))
                if round % 30 == 2 { bytes = lines(headerLine) + Array(repeating: UInt8(ascii: "["), count: 10_000) }
            }
            for skip in [false, true] {
                do {
                    _ = try ValueLogReader.read(bytes: bytes, options: .init(skipMalformedLines: skip))
                    outcomes += 1
                } catch {
                    outcomes += 1
                }
            }
        }
        #expect(outcomes == 6000)
    }
}
