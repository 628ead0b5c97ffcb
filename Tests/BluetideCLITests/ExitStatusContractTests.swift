import BluetideTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The exit status contract (docs/json-output.md): bad input exits 2, a failure while running
/// exits 1 — checked on the `bluetide` executable for the cases that broke it, and the one
/// "port in use" failure all three `serve` commands give.
@Suite(.timeLimit(.minutes(4))) struct ExitStatusContractTests {
    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "bluetide-exit-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Each is bad input: exit 2 with one line on standard error naming what was wrong.
    @Test func badInputExitsTwo() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("chip = /dev/gpiochip0\n[target.0]\nled = 17\nsensor = 17\n".utf8).write(to: URL(fileURLWithPath: folder + "/bad.conf"))
        let db = folder + "/coach.sqlite"
        let cases: [(arguments: [String], stdin: String?, says: String)] = [
            (["reflex", "device", "--config", folder + "/bad.conf", "--gpio", "sim", "--duration", "1"], nil, "bad.conf"),
            (["ride", "--emulate", "ftms-bike", "--erg", "200", "--grade", "3", "--duration", "1"], nil, "choose one of --erg"),
            (["reflex", "coach", "sequences", "random", "Long", "--steps", "600", "--db", db], nil, "--steps 600"),
            (["reflex", "coach", "password", "--db", db], "abc\n", "password"),
            (["ring", "power-off", "--emulate", "colmi-r02"], nil, "--yes"),
            (["ring", "reset", "--emulate", "colmi-r02"], nil, "--yes"),
            (["ring", "hr-log", "--on", "--off", "--emulate", "colmi-r02"], nil, "--on or --off"),
            (["ring", "settings", "--set", "age=300", "--emulate", "colmi-r02"], nil, "--set age=300: expected years 1 to 120"),
            (["ring", "sync", "--every", "soon", "--emulate", "colmi-r02"], nil, "--every soon: expected a duration"),
            (["reflex", "coach", "athletes", "add", " ", "--db", db], nil, "NAME"),
        ]
        for item in cases {
            let run = try await BluetideExecutable.run(item.arguments, stdin: item.stdin ?? "")
            #expect(run.status == 2, "bluetide \(item.arguments.joined(separator: " ")): exit \(String(describing: run.status)), stderr \(run.stderr)")
            #expect(run.stderr.count == 1 && run.stderr.first?.contains(item.says) == true, "\(item.arguments): \(run.stderr)")
        }
        // With --json the same failure is a usage error record.
        let json = try await BluetideExecutable.run(["reflex", "coach", "sequences", "random", "Long", "--steps", "600", "--db", db, "--json"])
        #expect(json.status == 2)
        let error = try #require(json.stderr.first.flatMap { JSONValue(line: $0) }?["error"], "\(json.stderr)")
        #expect(error["code"]?.string == "usage" && error["field"]?.string == "--steps")
    }

    /// A port another program holds: every serve command says the same thing (the address,
    /// that the port is in use, what to try), exits 1, and names no socket call.
    @Test func portInUseIsOneMessageAndOneStatusForEveryServeCommand() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (socket, port) = try Self.listeningSocket()
        defer { close(socket) }
        // ring serve needs a database to serve.
        let ringDB = folder + "/ring.sqlite"
        let paired = try await BluetideExecutable.run(["ring", "pair", "--first", "--emulate", "colmi-r02"],
                                                      environment: ["XDG_DATA_HOME": folder, "XDG_CONFIG_HOME": folder])
        try #require(paired.status == 0, "ring pair: \(paired.stderr)")
        let synced = try await BluetideExecutable.run(["ring", "sync", "--days", "1", "--db", ringDB],
                                                      environment: ["XDG_DATA_HOME": folder, "XDG_CONFIG_HOME": folder])
        try #require(synced.status == 0, "ring sync: \(synced.stderr)")
        let commands: [[String]] = [
            ["reflex", "coach", "serve", "--emulate", "--db", folder + "/coach.sqlite", "--port", "\(port)"],
            ["ring", "serve", "--db", ringDB, "--port", "\(port)"],
            ["ride", "serve", "--emulate", "ftms-bike", "--port", "\(port)"],
        ]
        let expected = "bluetide: cannot listen on 127.0.0.1:\(port): the port is in use (another program, or another bluetide serve, listens there); stop it, or pick another with --port (e.g. --port \(port + 1)), or --port 0 for any free one"
        for arguments in commands {
            let run = try await BluetideExecutable.run(arguments, environment: ["XDG_DATA_HOME": folder])
            #expect(run.status == 1, "bluetide \(arguments.joined(separator: " ")): exit \(String(describing: run.status)), \(run.stderr)")
            #expect(run.stderr.last == expected, "bluetide \(arguments.joined(separator: " ")): \(run.stderr)")
            #expect(!run.stderr.joined().contains("bind("), "\(run.stderr)")
        }
    }

    /// A TCP socket listening on 127.0.0.1 at a port the system picked, and that port.
    static func listeningSocket() throws -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0 && listen(fd, 1) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
