import BluetideBase
import Testing
@testable import BluetideRecording

@Suite("Value log format")
struct ValueLogFormatTests {
    /// Records exercising every field: optional ones present and absent, all operations, 128-bit
    /// UUIDs, an empty value, names needing escapes and non-ASCII text.
    static let sampleRecords: [ValueRecord] = [
        ValueRecord(
            timestamp: 0, wallClock: WallClockTime(millisecondsSince1970: 1_795_263_983_125),
            device: DeviceIdentity(address: "C6:C5:C4:C3:C2:C1", name: "KICKR \"CORE\" 1234"),
            service: BluetoothUUID(0x1816), characteristic: .cscMeasurement, operation: .notify,
            value: hex("03 A2 5E 01 00 6D 0E 4B 63 96 7F"), profile: "csc"),
        ValueRecord(
            timestamp: 1.10352, device: DeviceIdentity(address: "C6:C5:C4:C3:C2:C1"),
            characteristic: .cscMeasurement, operation: .indicate, value: hex("03 A4 5E 01 00 D7 12 4B 63 96 7F")),
        ValueRecord(
            timestamp: 2.5, device: DeviceIdentity(address: "virtual-ring", name: "R02_ß€ 😀\n\t\u{01}"),
            characteristic: try! BluetoothUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E"),
            operation: .writeWithoutResponse, value: []),
        ValueRecord(
            timestamp: 1e-05, device: DeviceIdentity(address: "AA:BB:CC:DD:EE:FF"),
            service: try! BluetoothUUID("6E40FEC1-B5A3-F393-E0A9-E50E24DCCA9E"),
            characteristic: BluetoothUUID(0x2A19), operation: .read, value: [0x64]),
        ValueRecord(
            timestamp: 3600.000001, device: DeviceIdentity(address: "AA:BB:CC:DD:EE:FF"),
            characteristic: BluetoothUUID(0x2A55), operation: .write, value: hex("01 00 00 00 00"), profile: "sc-control-point"),
    ]

    @Test func writeThenReadGivesTheSameRecords() throws {
        let header = ValueLogHeader(startedAt: WallClockTime(millisecondsSince1970: 1_795_263_983_000), toolVersion: "9.9.9")
        let log = try ValueLogReader.read(bytes: try logBytes(Self.sampleRecords, header: header))
        #expect(log.header == header)
        #expect(log.records == Self.sampleRecords)
        #expect(log.skippedLines.isEmpty)
        #expect(log.truncatedLastLine == nil)
    }

    @Test func writeThenReadThroughAFile() throws {
        let path = "/tmp/bluetide-recording-test-\(UInt64.random(in: 0 ... .max)).jsonl"
        let header = ValueLogHeader(startedAt: WallClockTime(millisecondsSince1970: 0))
        let writer = try ValueLogWriter(path: path, header: header, flushEvery: 2)
        for item in Self.sampleRecords { try writer.append(item) }
        try writer.close()
        let log = try ValueLogReader.read(path: path)
        #expect(log.header == header)
        #expect(log.records == Self.sampleRecords)
        _ = try? FileValueLogSink(path: path)  // truncates: leave nothing large behind
    }

    /// The exact text is part of the format (docs/value-log-format.md shows these lines).
    @Test func linesArePinned() throws {
        let header = ValueLogHeader(startedAt: WallClockTime(millisecondsSince1970: 1_795_263_983_000), toolVersion: "0.1.0")
        #expect(ValueLogFormat.line(for: header)
            == #"{"format":"bluetide-values","version":1,"started_at":"2026-11-21T12:26:23.000Z","tool":"bluetide","tool_version":"0.1.0"}"#)
        #expect(try ValueLogFormat.line(for: Self.sampleRecords[0])
            == #"{"t":0.0,"wall_time":"2026-11-21T12:26:23.125Z","device":"C6:C5:C4:C3:C2:C1","device_name":"KICKR \"CORE\" 1234","service":"1816","characteristic":"2A5B","operation":"notify","value":"03a25e01006d0e4b63967f","profile":"csc"}"#)
        #expect(try ValueLogFormat.line(for: Self.sampleRecords[1])
            == #"{"t":1.10352,"device":"C6:C5:C4:C3:C2:C1","characteristic":"2A5B","operation":"indicate","value":"03a45e0100d7124b63967f"}"#)
        #expect(try ValueLogFormat.line(for: Self.sampleRecords[2])
            == #"{"t":2.5,"device":"virtual-ring","device_name":"R02_ß€ 😀\n\t\u0001","characteristic":"6E400002-B5A3-F393-E0A9-E50E24DCCA9E","operation":"write_without_response","value":""}"#)
    }

    @Test func readerAcceptsAnyFieldOrderNullsUnknownFieldsUpperCaseHexAndCRLF() throws {
        let bytes = Array((
            #"{"version":1,"tool":null,"format":"bluetide-values","future":{"a":[1,2]}}"# + "\r\n"
            + #"{"value":"0A0b","operation":"read","characteristic":"0x2a19","device":"dev","t":5,"service":null,"x":true}"# + "\r\n"
            + "\n   \n").utf8)
        let log = try ValueLogReader.read(bytes: bytes)
        #expect(log.header.tool == nil)
        #expect(log.records == [ValueRecord(
            timestamp: 5, device: DeviceIdentity(address: "dev"), characteristic: BluetoothUUID(0x2A19),
            operation: .read, value: [0x0A, 0x0B])])
    }

    @Test func emptyRecordingIsAValidLog() throws {
        let log = try ValueLogReader.read(bytes: try logBytes([]))
        #expect(log.records.isEmpty)
        #expect(log.header.version == 1)
    }

    @Test func unrepresentableRecordsAreRefusedAndNothingIsWritten() throws {
        let sink = MemoryValueLogSink()
        let writer = try ValueLogWriter(sink: sink, header: ValueLogHeader(startedAt: nil), flushEvery: 1)
        let before = sink.bytes
        for t in [Double.nan, .infinity, -1, 2e9] {
            #expect(throws: ValueLogError.self) { try writer.append(record(t)) }
        }
        var noAddress = record(1)
        noAddress.device.address = ""
        #expect(throws: ValueLogError.unrepresentable(field: "device", reason: "must not be empty")) { try writer.append(noAddress) }
        var farFuture = record(1)
        farFuture.wallClock = WallClockTime(millisecondsSince1970: .max)
        #expect(throws: ValueLogError.self) { try writer.append(farFuture) }
        #expect(sink.bytes == before)
        #expect(writer.recordCount == 0)
    }
}

@Suite("Wall-clock time")
struct WallClockTimeTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (951_782_400_000, "2000-02-29T00:00:00.000Z"),
        (1_795_263_983_125, "2026-11-21T12:26:23.125Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (-62_167_219_200_000, "0000-01-01T00:00:00.000Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
    ])
    func formatsAndParses(milliseconds: Int64, text: String) throws {
        let time = WallClockTime(millisecondsSince1970: milliseconds)
        #expect(time.iso8601 == text)
        #expect(try WallClockTime(iso8601: text) == time)
    }

    @Test func parsesOffsetsAndFractions() throws {
        #expect(try WallClockTime(iso8601: "2026-11-21T14:26:23+02:00").iso8601 == "2026-11-21T12:26:23.000Z")
        #expect(try WallClockTime(iso8601: "2026-11-21T07:56:23.5-04:30").iso8601 == "2026-11-21T12:26:23.500Z")
        #expect(try WallClockTime(iso8601: "2026-11-21T12:26:23.123999Z").iso8601 == "2026-11-21T12:26:23.123Z")
    }

    @Test(arguments: [
        "", "2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-21 12:26:23Z",
        "2026-11-21T24:00:00Z", "2026-11-21T12:26:23", "2026-11-21T12:26:23.Z", "2026-11-21T12:26:23Zjunk",
        "2026-11-21T12:26:23+2:00", "２０２６-11-21T12:26:23Z", "0000-01-01T00:00:00+01:00", "9999-12-31T23:59:59-00:01",
    ])
    func rejectsBadText(_ text: String) {
        #expect(throws: WallClockTime.ParseError.self) { try WallClockTime(iso8601: text) }
    }

    @Test func dateConversionRoundsToMilliseconds() {
        let time = WallClockTime(millisecondsSince1970: 1_795_263_983_125)
        #expect(WallClockTime(time.date) == time)
    }
}
