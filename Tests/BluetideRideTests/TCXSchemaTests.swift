import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideRide

/// TCX exports checked against Garmin's schema, TrainingCenterDatabasev2.xsd (a copy in
/// Interop/tcx/, as published at http://www.garmin.com/xmlschemas/TrainingCenterDatabasev2.xsd),
/// with xmllint (Debian: libxml2-utils). The ActivityExtension v2 `TPX` elements are checked
/// laxly, as the schema's `Extensions_t` says (no copy of ActivityExtensionv2.xsd was found).
@Suite(.needs("xmllint", install: "apt-get install libxml2-utils")) struct TCXSchemaTests {
    static let schema = BumbleEnvironment.repositoryRoot.appendingPathComponent("Interop/tcx/TrainingCenterDatabasev2.xsd").path

    /// xmllint's exit status and messages for `document` validated against the schema.
    static func validate(_ document: String) async throws -> (status: Int32, output: String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ride-\(UUID().uuidString.prefix(8)).tcx").path
        try document.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let xmllint = try #require(OptionalTool.executable("xmllint"), "xmllint is not installed (apt-get install libxml2-utils)")
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                let process = Process()
                process.executableURL = xmllint
                process.arguments = ["--noout", "--nonet", "--schema", schema, path]
                let pipe = Pipe()
                process.standardOutput = pipe
                process.standardError = pipe
                do {
                    try process.run()
                    let data = pipe.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self)))
                } catch {
                    continuation.resume(throwing: error)
                }
            }.start()
        }
    }

    @Test func aRideWithGapsValidates() async throws {
        let xml = TCXWriter.document(samples: ExportTests.samples, start: ExportTests.start, notes: "ERG 200 W & <test>")
        let result = try await Self.validate(xml)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("validates"))
    }

    @Test func aRideWithoutAnyValueValidates() async throws {
        // Only distance and time: no heart rate, cadence, speed or power anywhere.
        let samples = (1...5).map { RideSample(time: Double($0), trigger: .tick, distanceMeters: 0) }
        let result = try await Self.validate(TCXWriter.document(samples: samples, start: ExportTests.start))
        #expect(result.status == 0, "\(result.output)")
    }

    @Test func theCheckCatchesAnElementOutOfOrder() async throws {
        // The same document with Calories moved after Intensity: the schema refuses it.
        let xml = TCXWriter.document(samples: ExportTests.samples, start: ExportTests.start)
        let calories = try #require(xml.range(of: #"\s*<Calories>\d+</Calories>"#, options: .regularExpression))
        var broken = xml
        let element = String(broken[calories])
        broken.removeSubrange(calories)
        let intensity = try #require(broken.range(of: "</Intensity>"))
        broken.insert(contentsOf: element, at: intensity.upperBound)
        let result = try await Self.validate(broken)
        #expect(result.status != 0)
        #expect(result.output.contains("Calories"), "\(result.output)")
    }
}
