import BluetideTestSupport
import Foundation
import Testing

/// `bluetide clone` and `emulate --from` as a user runs them: a capture written by a `+snoop`
/// transport, cloned, served; bad captures exit 2 with one line naming CAPTURE.
@Suite(.timeLimit(.minutes(4))) struct CloneCommandTests {
    @Test(.needsPythonModule("jsonschema", install: "pip install -r Interop/requirements.txt"))
    func aSnoopedSessionIsClonedIntoFourOutputsAndServed() async throws {
        let temporary = FileManager.default.temporaryDirectory
        let capture = temporary.appendingPathComponent("clone-cli-\(UUID().uuidString).btsnoop").path
        let out = temporary.appendingPathComponent("clone-cli-\(UUID().uuidString)").path
        defer {
            try? FileManager.default.removeItem(atPath: capture)
            try? FileManager.default.removeItem(atPath: out)
        }
        let read = try await BluetideExecutable.run(
            ["read", "Bluetide HRM", "2A38", "--transport", "virtual+snoop:\(capture)", "--emulate", "heart-rate"], timeout: .seconds(90))
        #expect(read.status == 0, "\(read.stderr)")

        let clone = try await BluetideExecutable.run(["clone", capture, "--out", out, "--json"], timeout: .seconds(90))
        #expect(clone.status == 0, "\(clone.stderr)")
        let types = clone.stdout.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["type"] as? String
        }
        #expect(types.first == "cloned-device", "\(clone.stdout)")
        #expect(types.contains("cloned-characteristic"))
        #expect(types.contains("clone-written"))
        for file in ["device.json", "connection-1.jsonl", "central.shell", "summary.txt"] {
            #expect(FileManager.default.fileExists(atPath: out + "/" + file), "\(file) missing")
        }
        let summary = try String(contentsOfFile: out + "/summary.txt", encoding: .utf8)
        #expect(summary.contains("180D Heart Rate"), "\(summary)")
        #expect(summary.contains("2A38 Body Sensor Location"), "\(summary)")
        let script = try String(contentsOfFile: out + "/central.shell", encoding: .utf8)
        // By value handle, listed with the UUID in the script's header.
        let line = try #require(script.split(separator: "\n").first { $0.hasPrefix("#   handle:") && $0.contains("2A38 Body Sensor Location") }, "\(script)")
        let handle = try #require(line.split(separator: " ").dropFirst().first)
        #expect(script.contains("\nread \(handle)\n"), "\(script)")

        let serve = try await BluetideExecutable.run(["emulate", "--from", out + "/device.json", "--duration", "1", "--json"], timeout: .seconds(90))
        #expect(serve.status == 0, "\(serve.stderr)")
        #expect(serve.stdout.first?.contains("\"type\":\"started\"") == true, "\(serve.stdout)")
        try await JSONOutputSchemaTests.expectValid(clone.stdout.map { "clone\t\($0)" } + serve.stdout.map { "emulate-from\t\($0)" })
    }

    @Test func badCapturesExitTwoNamingTheCapture() async throws {
        let temporary = FileManager.default.temporaryDirectory
        let garbage = temporary.appendingPathComponent("clone-garbage-\(UUID().uuidString).log").path
        let out = temporary.appendingPathComponent("clone-bad-\(UUID().uuidString)").path
        try Data("not a capture at all".utf8).write(to: URL(fileURLWithPath: garbage))
        defer {
            try? FileManager.default.removeItem(atPath: garbage)
            try? FileManager.default.removeItem(atPath: out)
        }
        let missing = try await BluetideExecutable.run(["clone", garbage + ".missing", "--out", out])
        #expect(missing.status == 2)
        #expect(missing.stderr.count == 1 && missing.stderr[0].contains("cannot read capture"), "\(missing.stderr)")
        let bad = try await BluetideExecutable.run(["clone", garbage, "--out", out, "--json"])
        #expect(bad.status == 2)
        let error = try #require(bad.stderr.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }?["error"] as? [String: Any])
        #expect(error["code"] as? String == "usage")
        #expect(error["field"] as? String == "CAPTURE")
        #expect((error["message"] as? String)?.contains("not a btsnoop or pcap capture") == true, "\(error)")
        #expect(!FileManager.default.fileExists(atPath: out), "nothing is written for a bad capture")
        let noDevice = try await BluetideExecutable.run(["emulate", "--from", garbage])
        #expect(noDevice.status == 2)
        #expect(noDevice.stderr.first?.contains("not a device file") == true, "\(noDevice.stderr)")
    }
}
