import BluetideBase
import Foundation
import Testing
@testable import BluetideRecording

@Suite("Value recorder")
struct ValueRecorderTests {
    @Test func stampsRecordsWithTimeSinceStart() throws {
        let clock = InstantTestClock()
        clock.advance(by: 100)  // the clock's own origin is irrelevant
        let sink = MemoryValueLogSink()
        let writer = try ValueLogWriter(sink: sink, header: ValueLogHeader(startedAt: nil))
        let wall = WallClockTime(millisecondsSince1970: 1_795_263_983_125)
        let recorder = ValueRecorder(writer: writer, clock: clock, wallClock: { wall })
        let device = DeviceIdentity(address: "C6:C5:C4:C3:C2:C1", name: "KICKR")

        clock.advance(by: 0.25)
        try recorder.record(device: device, characteristic: .cscMeasurement, operation: .notify, value: [1], profile: "csc")
        clock.advance(by: 1.5)
        let arrival = clock.now
        clock.advance(by: 3)
        let late = try recorder.record(device: device, characteristic: .cscMeasurement, operation: .notify, value: [2], at: arrival)
        try recorder.record(
            device: device, characteristic: .cscMeasurement, operation: .notify, value: [3],
            at: recorder.start.advanced(by: .seconds(-1)))
        try writer.close()

        #expect(late.timestamp == 1.75)
        let log = try ValueLogReader.read(bytes: sink.bytes)
        #expect(log.records.map(\.timestamp) == [0.25, 1.75, 0])
        #expect(log.records.map(\.wallClock) == [wall, wall, wall])
        #expect(log.records.first?.profile == "csc")
        #expect(log.records.first?.device == device)
    }
}

@Suite("Value log format documentation")
struct ValueLogDocumentationTests {
    /// The example in docs/value-log-format.md reads, re-encodes to the same lines, and decodes
    /// to the speed the text claims.
    @Test func documentedExampleIsAValidLog() throws {
        let docPath = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/value-log-format.md").path
        let text = try String(contentsOfFile: docPath, encoding: .utf8)
        let exampleLines = text.split(separator: "\n").filter { $0.hasPrefix("{\"") }.map(String.init)
        #expect(exampleLines.count == 5)
        let log = try ValueLogReader.read(bytes: Array(exampleLines.map { $0 + "\n" }.joined().utf8))
        #expect(ValueLogFormat.line(for: log.header) == exampleLines.first)
        #expect(try log.records.map { try ValueLogFormat.line(for: $0) } == Array(exampleLines.dropFirst()))

        var decoder = ValueLogDecoder()
        let summaries = log.records.map { decoder.decode($0).summary }
        #expect(summaries[1].contains("13.73 km/h"))
    }
}
