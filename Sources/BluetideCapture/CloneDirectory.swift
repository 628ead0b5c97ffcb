import BluetideRecording
import Foundation

/// Writes a clone's four outputs into a directory (the only file I/O of this module besides
/// reading the capture): `device.json`, one value log per connection (`connection-N.jsonl`), a
/// central script per device (`central.shell`, `central-2.shell`, …) and `summary.txt`.
public enum CloneDirectory {
    /// The files written, relative to the directory, in order.
    public struct Written: Sendable, Equatable {
        /// The device file.
        public var deviceFile: String
        /// Value logs by connection number.
        public var valueLogs: [Int: String]
        /// Central scripts, one per device the capturing side was a client of.
        public var scripts: [String]
        /// The summary.
        public var summary: String
        /// Every file, in the order written.
        public var all: [String] { [deviceFile] + valueLogs.keys.sorted().compactMap { valueLogs[$0] } + scripts + [summary] }
    }

    /// Why the outputs could not be written: the file and the system's reason.
    public struct WriteError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Writes `analysis` into `directory` (created if missing; files of the same names replaced).
    /// Returns the document as written (value log names filled in) and the files.
    public static func write(_ analysis: CaptureAnalysis, to directory: String) throws(WriteError) -> (CloneDocument, Written) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw WriteError(description: "cannot create the output directory \(directory): \(error.localizedDescription)")
        }
        var document = analysis.document
        var written = Written(deviceFile: "device.json", valueLogs: [:], scripts: [], summary: "summary.txt")
        let start = document.source.startUnixMicroseconds
        for index in document.connections.indices {
            let connection = document.connections[index]
            guard let records = analysis.valueRecords[connection.number], !records.isEmpty else { continue }
            let name = "connection-\(connection.number).jsonl"
            let offset = connection.start * 1000
            let startMillis = start / 1000 &+ (offset.isFinite && abs(offset) < 1e15 ? Int64(offset) : 0)
            let header = ValueLogHeader(startedAt: start == 0 ? nil : WallClockTime(millisecondsSince1970: startMillis))
            do {
                let writer = try ValueLogWriter(path: path(directory, name), header: header)
                // A record the format cannot carry (a time beyond its 0…1e9 s range) is left out.
                for record in records where record.timestamp.isFinite && (0...1e9).contains(record.timestamp) {
                    try writer.append(record)
                }
                try writer.close()
            } catch {
                throw WriteError(description: "cannot write \(path(directory, name)): \(error)")
            }
            document.connections[index].valueLog = name
            written.valueLogs[connection.number] = name
        }
        for (index, device) in document.devices.enumerated() where !device.exchanges.isEmpty || device.characteristics.contains(where: { $0.counts.reads > 0 }) || device.playbackOrigin != nil {
            let name = index == 0 ? "central.shell" : "central-\(index + 1).shell"
            try save(CloneReport.centralScript(document, device: device), directory, name)
            written.scripts.append(name)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let json: Data
        do { json = try encoder.encode(document) } catch {
            throw WriteError(description: "cannot encode the device file: \(error)")
        }
        try save(String(decoding: json, as: UTF8.self) + "\n", directory, written.deviceFile)
        try save(CloneReport.summary(document), directory, written.summary)
        return (document, written)
    }

    /// Reads a device file written by ``write(_:to:)``.
    public static func readDocument(path: String) throws(WriteError) -> CloneDocument {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw WriteError(description: "cannot read the device file \(path): missing or unreadable (bluetide clone CAPTURE --out DIR writes DIR/device.json)")
        }
        let document: CloneDocument
        do { document = try JSONDecoder().decode(CloneDocument.self, from: data) } catch let error as Swift.DecodingError {
            throw WriteError(description: "\(path) is not a device file: \(describe(error)) (see docs/clone.md)")
        } catch {
            throw WriteError(description: "\(path) is not a device file: \(error)")
        }
        guard document.format == CloneDocument.formatName else {
            throw WriteError(description: "\(path): format is \"\(document.format)\", expected \"\(CloneDocument.formatName)\" (a file written by bluetide clone)")
        }
        guard document.version <= CloneDocument.currentVersion else {
            throw WriteError(description: "\(path): device file version \(document.version) is newer than this bluetide reads (\(CloneDocument.currentVersion)); update bluetide")
        }
        return document
    }

    private static func describe(_ error: Swift.DecodingError) -> String {
        func at(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "the top level" : path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case let .keyNotFound(key, context): return "field \(at(context.codingPath + [key])) is missing"
        case let .typeMismatch(type, context): return "field \(at(context.codingPath)) should be \(type)"
        case let .valueNotFound(type, context): return "field \(at(context.codingPath)) should be \(type), found null"
        case let .dataCorrupted(context): return "\(at(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    private static func path(_ directory: String, _ name: String) -> String {
        URL(fileURLWithPath: directory).appendingPathComponent(name).path
    }

    private static func save(_ text: String, _ directory: String, _ name: String) throws(WriteError) {
        do { try Data(text.utf8).write(to: URL(fileURLWithPath: path(directory, name)), options: .atomic) } catch {
            throw WriteError(description: "cannot write \(path(directory, name)): \(error.localizedDescription)")
        }
    }
}
