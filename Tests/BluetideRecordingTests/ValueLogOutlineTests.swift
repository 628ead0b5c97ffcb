import BluetideBase
import Foundation
import Testing
@testable import BluetideRecording

/// ``ValueLogOutline``: what a log holds, without its values, read as a stream.
@Suite struct ValueLogOutlineTests {
    static func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("outline-\(UUID().uuidString.prefix(8)).jsonl").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func line(_ t: Double, _ characteristic: String, _ operation: String, service: String? = "180D", name: String? = nil) -> String {
        var fields = [#""t":\#(t)"#, #""device":"C6:C5:C4:C3:C2:C1""#]
        if let name { fields.append(#""device_name":"\#(name)""#) }
        if let service { fields.append(#""service":"\#(service)""#) }
        fields += [#""characteristic":"\#(characteristic)""#, #""operation":"\#(operation)""#, #""value":"0048""#]
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// 200,000 lines of two characteristics: the outline names both, in order of first
    /// appearance with their operations, and counts every record, holding none of them.
    @Test func aLongLogIsOutlinedFromAStream() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("outline-long-\(UUID().uuidString.prefix(8)).jsonl").path
        FileManager.default.createFile(atPath: path, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.write(Data((headerLine + "\n").utf8))
        var block = ""
        for index in 0..<200_000 {
            let t = Double(index) / 100
            block += (index % 1000 == 999
                ? Self.line(t, "2A19", "read", service: "180F")
                : Self.line(t, "2A37", "notify", name: index == 5 ? "HRM" : nil)) + "\n"
            if index % 10_000 == 9_999 {
                handle.write(Data(block.utf8))
                block = ""
            }
        }
        try handle.close()
        let outline = try ValueLogOutline.read(path: path)
        #expect(outline.recordCount == 200_000)
        #expect(outline.deviceName == "HRM")
        #expect(outline.characteristics.map(\.characteristic) == [BluetoothUUID(0x2A37), BluetoothUUID(0x2A19)])
        #expect(outline.characteristics.map(\.service) == [BluetoothUUID(0x180D), BluetoothUUID(0x180F)])
        #expect(outline.characteristics.map(\.operations) == [[.notify], [.read]])
        let notifies = try ValueLogOutline.read(path: path, filter: ValueRecordFilter(operations: [.notify]))
        #expect(notifies.recordCount == 199_800)
    }

    @Test func itMatchesTheOutlineOfTheRecordsInMemory() throws {
        let text = [headerLine, Self.line(0, "2A37", "notify"), Self.line(1, "2A37", "indicate"), Self.line(2, "2A38", "read", service: nil),
                    Self.line(3, "2A39", "write")].joined(separator: "\n") + "\n"
        let path = try Self.file(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let log = try ValueLogReader.read(bytes: Array(text.utf8))
        #expect(try ValueLogOutline.read(path: path) == ValueLogOutline(records: log.records))
        let outline = try ValueLogOutline.read(path: path)
        #expect(outline.characteristics.first?.operations == [.notify, .indicate])
        #expect(outline.characteristics[1].service == nil)
    }

    /// Damaged lines are passed over as a replay passes over them; `strict` throws naming the
    /// line; a pipe is refused (whoever outlines reads the file again to play it).
    @Test func damagedLinesStrictAndPipes() throws {
        let path = try Self.file([headerLine, Self.line(0, "2A37", "notify"), "nonsense", Self.line(1, "2A37", "notify")].joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try ValueLogOutline.read(path: path).recordCount == 2)
        do {
            _ = try ValueLogOutline.read(path: path, strict: true)
            Issue.record("strict outlined past a damaged line")
        } catch {
            #expect("\(error)".contains("line 3"), "\(error)")
        }
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("outline-fifo-\(UUID().uuidString.prefix(8))").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        do {
            _ = try ValueLogOutline.read(path: fifo)
            Issue.record("a FIFO was outlined")
        } catch {
            #expect("\(error)".contains("not a regular file"), "\(error)")
        }
        #expect(throws: ValueLogError.self) { try ValueLogOutline.read(path: "/nonexistent/\(UUID().uuidString).jsonl") }
    }
}
