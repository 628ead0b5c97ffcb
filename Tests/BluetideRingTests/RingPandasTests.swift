import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideRing

/// The pandas session of docs/ring-analysis.md, run as written with pandas from PyPI on an
/// export of the emulated ring's synced week (pandas is installed by .ci/run; listed in
/// Interop/requirements.txt).
@Suite(.bumbleInterop, .timeLimit(.minutes(3))) struct RingPandasTests {
    /// The first ```python block of docs/ring-analysis.md.
    static func documentedCode() throws -> String {
        let doc = BumbleEnvironment.repositoryRoot.appendingPathComponent("docs/ring-analysis.md")
        let text = try String(contentsOf: doc, encoding: .utf8)
        guard let start = text.range(of: "```python\n"), let end = text.range(of: "\n```", range: start.upperBound..<text.endIndex) else {
            throw RingTestTimeout(what: "a ```python block in \(doc.path)")
        }
        return String(text[start.upperBound..<end.lowerBound])
    }

    @Test func theDocumentedPandasSessionLoadsTheExportWithTheRingsValues() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let store = try RingStore.inMemory()
        try await RingRig.with(120, "sync") { rig in
            let ring = try await rig.open()
            _ = try await RingSync(ring: ring, store: store, ringID: "ring-1").run(days: 7)
            await ring.close()
        }
        let samples = try store.samples()
        try RingExport.write(samples, to: URL(fileURLWithPath: scratch.out), format: .csv)
        let script = URL(fileURLWithPath: scratch.out).appendingPathComponent("analysis.py")
        try Data(try Self.documentedCode().utf8).write(to: script)

        let (status, lines, errors) = try await runPython([script.path], in: scratch.out)
        #expect(status == 0, "python failed: \(errors)")
        if errors.contains("No module named 'pandas'") { Issue.record("pandas is missing: python3 -m pip install -r Interop/requirements.txt") }

        // time is a UTC datetime column (ns or us precision by pandas version), value a float.
        let dtypes = try #require(lines.first)
        #expect(dtypes.hasPrefix("dtypes: time=datetime64["), "\(dtypes)")
        #expect(dtypes.contains(", UTC], kind="), "\(dtypes)")
        #expect(dtypes.contains("value=float64"), "\(dtypes)")
        // Steps per day as pandas summed them equal what the ring sent, day by day (UTC).
        var expected: [String: Int] = [:]
        for s in samples where s.kind == RingSampleKind.steps { expected[String(RingExport.timeText(s.time).prefix(10)), default: 0] += Int(s.value) }
        let section = lines.drop { $0 != "steps per day" }.dropFirst().prefix { $0.hasPrefix("  ") }
        var printed: [String: Int] = [:]
        for line in section {
            let parts = line.split(separator: " ")
            if parts.count == 2, let n = Int(parts[1]) { printed[String(parts[0])] = n }
        }
        #expect(!printed.isEmpty)
        #expect(printed.filter { $0.value != 0 } == expected)
        #expect(lines.contains("resting heart rate per day"))
        #expect(lines.contains("sleep per night"))
        let nights = lines.drop { $0 != "sleep per night" }.dropFirst().prefix { $0.hasPrefix("  ") }
        #expect(nights.count >= 6)
    }
}
