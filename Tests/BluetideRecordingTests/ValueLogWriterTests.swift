import BluetideBase
import Foundation
import Testing
@testable import BluetideRecording

@Suite("Value log writer")
struct ValueLogWriterTests {
    @Test func headerIsWrittenAtOnce() throws {
        let sink = MemoryValueLogSink()
        _ = try ValueLogWriter(sink: sink, header: ValueLogHeader(startedAt: nil), flushEvery: 100)
        #expect(sink.text == #"{"format":"bluetide-values","version":1,"tool":"bluetide","tool_version":"0.1.0"}"# + "\n")
    }

    @Test func recordsAreBufferedUntilEveryNthThenFlushed() throws {
        let sink = MemoryValueLogSink()
        let writer = try ValueLogWriter(sink: sink, header: ValueLogHeader(startedAt: nil), flushEvery: 3)
        let afterHeader = sink.bytes.count
        try writer.append(record(0))
        try writer.append(record(1))
        #expect(sink.bytes.count == afterHeader)
        #expect(writer.bufferedRecordCount == 2)
        try writer.append(record(2))
        #expect(writer.bufferedRecordCount == 0)
        #expect(try ValueLogReader.read(bytes: sink.bytes).records.count == 3)

        try writer.append(record(3))
        try writer.flush()
        #expect(try ValueLogReader.read(bytes: sink.bytes).records.count == 4)

        try writer.append(record(4))
        try writer.close()
        #expect(sink.isClosed)
        #expect(sink.synchronizeCount == 1)
        #expect(try ValueLogReader.read(bytes: sink.bytes).records.map(\.timestamp) == [0, 1, 2, 3, 4])
        #expect(writer.recordCount == 5)
    }

    @Test func closedWriterRefusesRecords() throws {
        let writer = try ValueLogWriter(sink: MemoryValueLogSink(), header: ValueLogHeader(startedAt: nil))
        try writer.close()
        try writer.close()  // closing twice is harmless
        #expect(throws: ValueLogError.closed(path: "<memory>")) { try writer.append(record(0)) }
        #expect(throws: ValueLogError.closed(path: "<memory>")) { try writer.flush() }
    }

    @Test func droppedWriterFlushesItsBuffer() throws {
        let sink = MemoryValueLogSink()
        do {
            let writer = try ValueLogWriter(sink: sink, header: ValueLogHeader(startedAt: nil), flushEvery: 100)
            try writer.append(record(7))
        }
        #expect(try ValueLogReader.read(bytes: sink.bytes).records == [record(7)])
        #expect(sink.isClosed)
    }

    @Test func missingDirectoryIsReportedWithPathAndOSError() throws {
        let path = "/nonexistent-bluetide-dir/ride.jsonl"
        do {
            _ = try ValueLogWriter(path: path, header: ValueLogHeader(startedAt: nil))
            Issue.record("opened a file in a missing directory")
        } catch {
            #expect(error == .io(operation: "open", path: path, code: 2, message: "No such file or directory"))
            #expect(error.description == "cannot open \(path): No such file or directory (errno 2)")
        }
    }

    @Test func existingFileIsKeptWhenAskedNotToReplace() throws {
        let path = "/tmp/bluetide-recording-exists-\(UInt64.random(in: 0 ... .max)).jsonl"
        try ValueLogWriter(path: path, header: ValueLogHeader(startedAt: nil)).close()
        #expect(throws: ValueLogError.io(operation: "open", path: path, code: EEXIST, message: "File exists")) {
            _ = try ValueLogWriter(path: path, header: ValueLogHeader(startedAt: nil), replaceExisting: false)
        }
        #expect(try ValueLogReader.read(path: path).records.isEmpty)
        unlink(path)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func fullDiskIsReportedWithPathAndOSError() throws {
        do {
            _ = try ValueLogWriter(path: "/dev/full", header: ValueLogHeader(startedAt: nil))
            Issue.record("wrote to /dev/full")
        } catch {
            #expect(error == .io(operation: "write", path: "/dev/full", code: ENOSPC, message: "No space left on device"))
        }
    }

    @Test func failedFlushKeepsTheRestAndRetriesItExactlyOnce() throws {
        // The header goes through; then the sink fails twice, the first time after 10 bytes.
        let sink = FlakySink(failures: 0)
        let writer = try ValueLogWriter(sink: sink, header: ValueLogHeader(startedAt: nil), flushEvery: 2)
        sink.failuresLeft = 2
        sink.bytesBeforeFailure = 10
        try writer.append(record(0))
        #expect(throws: ValueLogError.self) { try writer.append(record(1)) }
        #expect(throws: ValueLogError.self) { try writer.flush() }
        try writer.append(record(2))
        try writer.close()
        let log = try ValueLogReader.read(bytes: sink.bytes)
        #expect(log.records.map(\.timestamp) == [0, 1, 2])
        #expect(log.truncatedLastLine == nil)
    }

    @Test func writerSurvivesAProcessCrashUpToTheUnflushedBuffer() throws {
        // What is in the sink is what a crash leaves on disk: flushed records only.
        let sink = MemoryValueLogSink()
        let writer = try ValueLogWriter(sink: sink, header: ValueLogHeader(startedAt: nil), flushEvery: 2)
        for t in 0..<5 { try writer.append(record(Double(t))) }
        let onDisk = sink.bytes
        #expect(try ValueLogReader.read(bytes: onDisk).records.count == 4)
        try writer.close()
    }
}
