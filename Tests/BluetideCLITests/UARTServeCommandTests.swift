import BluetideTestSupport
import Foundation
import Testing

/// `bluetide uart serve` (the computer as a BLE serial device) against `bluetide uart`, as two
/// processes on two controllers of one `bluetide controllers` radio; and the two-way log.
@Suite struct UARTServeCommandTests {
    /// Issue 28's "done when": `uart serve --profile P --name PC --pty A` and `uart PC --pty B`
    /// carry 20 KB of random bytes both ways at once, intact (pyserial on both ptys).
    @Test(arguments: ["nus", "hm10"])
    func serveAndClientCarryTwentyKilobytesBothWaysBetweenPtys(profile: String) async throws {
        let python = try await BumbleEnvironment.requirePython()
        let controllers = try BluetideExecutable.launch(["controllers", "tcp-server:127.0.0.1:0", "tcp-server:127.0.0.1:0", "--exit-on-stdin-eof"])
        let tag = UUID().uuidString.prefix(8)
        let ptyA = FileManager.default.temporaryDirectory.appendingPathComponent("ttyPC-\(tag)").path
        let ptyB = FileManager.default.temporaryDirectory.appendingPathComponent("ttyBLE-\(tag)").path
        var children: [BumbleProcess] = [controllers]
        defer { let all = children; Task { for child in all { await child.stop() } } }
        let ready = try await controllers.firstLine(from: .stdout, timeout: .seconds(60), describing: "READY") { $0.hasPrefix("READY ") }
        let ports = ready.split(separator: " ").dropFirst().map(String.init)
        try #require(ports.count == 2, "\(ready)")
        let name = "PC-\(tag.prefix(4))"
        let server = try BluetideExecutable.launch(
            ["uart", "serve", "--profile", profile, "--name", name, "--pty", ptyA, "--transport", "tcp-client:127.0.0.1:\(ports[0])"])
        children.append(server)
        _ = try await server.firstLine(from: .stderr, timeout: .seconds(60), describing: "pty ready") { $0.contains("serial port ready: \(ptyA)") }
        let client = try BluetideExecutable.launch(["uart", name, "--pty", ptyB, "--transport", "tcp-client:127.0.0.1:\(ports[1])"])
        children.append(client)
        _ = try await client.firstLine(from: .stderr, timeout: .seconds(60), describing: "client pty ready") { $0.contains("serial port ready: \(ptyB)") }
        _ = try await server.firstLine(from: .stderr, timeout: .seconds(60), describing: "subscribed") { $0.contains("subscribed") }
        let script = BumbleEnvironment.repositoryRoot.appendingPathComponent("Interop/serial/pty_pair.py")
        let check = try BumbleProcess.launch(name: "pyserial pair", executable: python, arguments: ["-u", script.path, ptyA, ptyB, "20000", "28", "150"])
        children.append(check)
        let status = await check.waitForCompletion(timeout: .seconds(180))
        let stdout = await check.output(.stdout)
        let stderr = await check.output(.stderr)
        let result = try #require(stdout.compactMap { JSONValue(line: $0) }.first, "pyserial printed \(stdout) \(stderr)")
        #expect(status == 0, "\(result) \(stderr)")
        #expect(result["a_to_b"]?["equal"]?.bool == true, "\(result)")
        #expect(result["b_to_a"]?["equal"]?.bool == true, "\(result)")
        let chunk = profile == "hm10" ? "20-byte" : "244-byte"
        let serverLines = await server.output(.stderr)
        #expect(serverLines.contains { $0.contains("advertising as \(name)") }, "\(serverLines)")
        #expect(serverLines.contains { $0.contains("subscribed, \(chunk) notifications") }, "\(serverLines)")
        kill(server.pid, SIGTERM)
        #expect(await server.waitForExit(timeout: .seconds(20)) == 0, "SIGTERM ends serve cleanly")
        #expect(!FileManager.default.fileExists(atPath: ptyA), "the symlink is removed at exit")
    }

    /// `--json`: server events and received data are records of the one schema.
    @Test func serveJSONRecordsAndPipeRoundTrip() async throws {
        let controllers = try BluetideExecutable.launch(["controllers", "tcp-server:127.0.0.1:0", "tcp-server:127.0.0.1:0", "--exit-on-stdin-eof"])
        defer { Task { await controllers.stop() } }
        let ready = try await controllers.firstLine(from: .stdout, timeout: .seconds(60), describing: "READY") { $0.hasPrefix("READY ") }
        let ports = ready.split(separator: " ").dropFirst().map(String.init)
        try #require(ports.count == 2, "\(ready)")
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString.prefix(8)).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let server = try BluetideExecutable.launch(
            ["uart", "serve", "--name", "PCJ", "--json", "--idle-timeout", "5", "--transport", "tcp-client:127.0.0.1:\(ports[0])",
             "--log", log, "--log-format", "jsonl"])
        defer { Task { await server.stop() } }
        _ = try await server.firstLine(from: .stderr, timeout: .seconds(60), describing: "advertising") { $0.contains("\"advertising\"") }
        try await server.writeToStdin("from the computer\n")
        await server.closeStdin()
        let client = try await BluetideExecutable.run(
            ["uart", "PCJ", "--idle-timeout", "5", "--transport", "tcp-client:127.0.0.1:\(ports[1])"], stdin: "from the phone\n")
        #expect(client.status == 0, "\(client.stderr)")
        #expect(client.stdout == ["from the computer"], "\(client.stdout)")
        let serverStatus = await server.waitForCompletion(timeout: .seconds(60))
        let serverErrors = await server.output(.stderr)
        #expect(serverStatus == 0, "\(serverErrors)")
        let records = await server.output(.stdout).compactMap { JSONValue(line: $0) }
        #expect(records.compactMap { $0["text"]?.string }.joined() == "from the phone\n", "\(records)")
        #expect(records.allSatisfy { $0["type"]?.string == "received" && $0["device"]?["address"]?.string != nil })
        let events = await server.output(.stderr).compactMap { JSONValue(line: $0)?["type"]?.string }
        #expect(events.starts(with: ["advertising", "connected", "subscribed"]), "\(events)")
        #expect(events.last == "closed", "\(events)")
        // Every line, the log's too, follows the one schema.
        let logLines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map { "serve log\t\($0)" }
        #expect(logLines.count >= 2, "a sent and a received entry: \(logLines)")
        let out = await server.output(.stdout).map { "serve stdout\t\($0)" }
        let err = await server.output(.stderr).map { "serve stderr\t\($0)" }
        try await JSONOutputSchemaTests.expectValid(out + err + logLines)
    }

    /// `--log`: every chunk sent and received, checked byte for byte against what went in and
    /// came out, in each format; `--permit ro` sends nothing, `--permit wo` shows nothing.
    @Test(arguments: ["text", "hex", "jsonl"])
    func logHoldsBothDirectionsByteForByte(format: String) async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("uart-\(UUID().uuidString.prefix(8)).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let input = "AT+NAME?\tπ\\x\u{01}\r\nsecond line\n"
        let run = try await BluetideExecutable.run(
            ["uart", "Bluetide UART", "--emulate", "nus", "--log", log, "--log-format", format], stdin: input)
        #expect(run.status == 0, "\(run.stderr)")
        let text = try String(contentsOfFile: log, encoding: .utf8)
        var sent: [UInt8] = [], received: [UInt8] = []
        for line in text.split(separator: "\n") {
            let (direction, bytes) = try Self.parse(String(line), format: format)
            if direction == "sent" { sent += bytes } else { received += bytes }
        }
        #expect(sent == Array(input.utf8), "\(text)")
        #expect(received == Array(input.utf8), "the echo, as received: \(text)")

        let readOnly = try await BluetideExecutable.run(["uart", "Bluetide UART", "--emulate", "nus", "--permit", "ro"], stdin: "not sent\n")
        #expect(readOnly.status == 0 && readOnly.stdout.isEmpty, "ro sends nothing, so the echo is silent: \(readOnly.stdout)")
        let writeOnly = try await BluetideExecutable.run(
            ["uart", "Bluetide UART", "--emulate", "nus", "--permit", "wo", "--log", log + ".wo"], stdin: "sent\n")
        defer { try? FileManager.default.removeItem(atPath: log + ".wo") }
        #expect(writeOnly.status == 0 && writeOnly.stdout.isEmpty, "wo shows nothing: \(writeOnly.stdout)")
        let woLog = try String(contentsOfFile: log + ".wo", encoding: .utf8)
        #expect(woLog.contains(" < "), "received bytes are still logged: \(woLog)")
        let bad = try await BluetideExecutable.run(["uart", "X", "--permit", "rx"])
        #expect(bad.status == 2 && bad.stderr.contains { $0.contains("--permit rx: expected rw, ro or wo") }, "\(bad.stderr)")
    }

    /// One log line's direction and bytes.
    static func parse(_ line: String, format: String) throws -> (String, [UInt8]) {
        if format == "jsonl" {
            let record = try #require(JSONValue(line: line), "\(line)")
            let hex = try #require(record["value"]?["hex"]?.string, "\(line)")
            let bytes = stride(from: 0, to: hex.count, by: 2).map { i -> UInt8 in
                let start = hex.index(hex.startIndex, offsetBy: i)
                return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16) ?? 0
            }
            return (record["type"]?.string ?? "", bytes)
        }
        // UTC MONOTONIC DIRECTION DEVICE BODY, the device being "Bluetide UART" here.
        let parts = line.components(separatedBy: " Bluetide UART ")
        try #require(parts.count == 2, "\(line)")
        let direction = parts[0].hasSuffix(">") ? "sent" : "received"
        if format == "hex" { return (direction, parts[1].split(separator: " ").compactMap { UInt8($0, radix: 16) }) }
        return (direction, unescape(parts[1]))
    }

    static func unescape(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            guard byte == 0x5C, let next = bytes.popFirst() else { out.append(byte); continue }
            switch next {
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "x"):
                out.append(UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) ?? 0)
                bytes = bytes.dropFirst(2)
            default: out.append(next)
            }
        }
        return out
    }
}

/// `uart daemon --config`: a bad config fails with the field that is wrong (exit 2).
@Suite struct UARTDaemonConfigTests {
    @Test func badConfigsNameTheFieldThatIsWrong() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("daemon-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let cases: [(String, String)] = [
            (#"{"devices": []}"#, "devices: expected a list of at least one device object"),
            (#"{"devices": [{"device": "R1", "pty": "tty"}]}"#, "devices[0].pty: expected an absolute path"),
            (#"{"devices": [{"device": "R1", "pty": "/tmp/a", "minRssi": -200}]}"#, "devices[0].minRssi: expected dBm from -127 to 20"),
            (#"{"devices": [{"device": "R1", "pty": "/tmp/a"}, {"device": "R2", "pty": "/tmp/a"}]}"#, "devices[1].pty: /tmp/a is used by another device"),
            (#"{"devices": [{"device": "R1", "pty": "/tmp/a", "eol": "lfcr"}]}"#, "devices[0].eol: expected cr, lf, crlf or none"),
            (#"{"devices": [{"device": "R1", "pty": "/tmp/a", "service": "FFE0"}]}"#, "devices[0].service/write/notify: expected all three"),
            (#"{"devices": [{"device": "R1"}]}"#, #"devices[0]: expected one of "pty": "/tmp/ttyRobot1" (a pty's symlink) or "tcp""#),
            (#"{"devices": [{"device": "R1", "pty": "/tmp/a", "tcp": "7001"}]}"#, #"devices[0]: expected one of "pty""#),
            (#"{"devices": [{"device": "R1", "tcp": "127.0.0.1:70000"}]}"#, "devices[0].tcp: expected HOST:PORT or PORT (0–65535), e.g. 127.0.0.1:7001, found 127.0.0.1:70000"),
            (#"{"devices": [{"device": "R1", "tcp": "7001"}, {"device": "R2", "tcp": "127.0.0.1:7001"}]}"#, "devices[1].tcp: 127.0.0.1:7001 is used by another device"),
            ("not json", "the file: expected a JSON object"),
        ]
        for (index, (text, message)) in cases.enumerated() {
            let file = folder.appendingPathComponent("\(index).json").path
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            let run = try await BluetideExecutable.run(["uart", "daemon", "--config", file])
            #expect(run.status == 2, "\(text): \(run.stderr)")
            #expect(run.stderr.contains { $0.contains("--config \(file): \(message)") }, "\(text): \(run.stderr)")
        }
    }
}

/// `uart daemon` as a process: a pty and a TCP port made at start, a TCP client served and let
/// go while no device is around, `--json` records of the one schema, SIGTERM ending it cleanly.
@Suite struct UARTDaemonCommandTests {
    @Test func ptyAndTCPPortsAreMadeAtStartAndServeClientsWithoutTheDevice() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("daemon-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pty = folder.appendingPathComponent("ttyR1").path
        let config = folder.appendingPathComponent("robots.json").path
        try #"{"devices": [{"device": "R1", "pty": "\#(pty)"}, {"device": "R2", "tcp": "127.0.0.1:0", "eol": "crlf"}]}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try BluetideExecutable.launch(["uart", "daemon", "--config", config, "--json"])
        defer { Task { await daemon.stop() } }
        let listening = try await daemon.firstLine(from: .stderr, timeout: .seconds(60), describing: "listening") { $0.contains("\"listening\"") }
        let port = try #require(JSONValue(line: listening)?["port"]?.int.flatMap { UInt16(exactly: $0) }, "\(listening)")
        #expect(port != 0)
        #expect(FileManager.default.fileExists(atPath: pty), "the pty's symlink is made at start")

        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(connected == 0, "connect to the daemon's TCP port")
        _ = try await daemon.firstLine(from: .stderr, timeout: .seconds(60), describing: "client-connected") { $0.contains("\"client-connected\"") }
        close(client)
        _ = try await daemon.firstLine(from: .stderr, timeout: .seconds(60), describing: "client-left") { $0.contains("\"client-left\"") }

        kill(daemon.pid, SIGTERM)
        #expect(await daemon.waitForCompletion(timeout: .seconds(30)) == 0, "SIGTERM ends the daemon cleanly")
        #expect(!FileManager.default.fileExists(atPath: pty), "the symlink is removed at exit")
        let err = await daemon.output(.stderr)
        let types = err.compactMap { JSONValue(line: $0)?["type"]?.string }
        #expect(types.starts(with: ["ready", "listening"]), "\(err)")
        #expect(types.contains("client-connected") && types.contains("client-left"), "\(err)")
        #expect(err.compactMap { JSONValue(line: $0) }.first { $0["type"]?.string == "client-connected" }?["client"]?.string?.hasPrefix("127.0.0.1:") == true, "\(err)")
        try await JSONOutputSchemaTests.expectValid(err.map { "daemon stderr\t\($0)" })
    }
}
