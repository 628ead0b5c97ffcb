import BluetideTestSupport
import Foundation
import Testing

/// `Interop/bluez/build-image.sh` takes its Debian mirror from the machine's own apt sources
/// (no mirror host written in the script), with `BLUETIDE_BLUEZ_MIRROR` as the override.
/// `--print-mirror` prints the choice without building; `BLUETIDE_APT_ETC` points it at a
/// stand-in for `/etc/apt`. Needs neither qemu nor root.
@Suite struct BlueZImageMirrorTests {
    static var script: URL { BlueZGuestEnvironment.rigDirectory.appendingPathComponent("build-image.sh") }

    /// Runs `build-image.sh --print-mirror` with `environment` added; returns status and output.
    static func printMirror(_ environment: [String: String]) async throws -> (status: Int32?, stdout: [String], stderr: [String]) {
        var merged = ProcessInfo.processInfo.environment
        merged["BLUETIDE_BLUEZ_MIRROR"] = nil
        merged.merge(environment) { $1 }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script.path, "--print-mirror"]
        process.environment = merged
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        func lines(_ data: Data) -> [String] { String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init) }
        return (process.terminationStatus, lines(stdout), lines(stderr))
    }

    /// A stand-in for /etc/apt with `files` (path relative to it → contents).
    static func aptDirectory(_ files: [String: String]) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluez-apt-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("sources.list.d"), withIntermediateDirectories: true)
        for (path, text) in files {
            try text.write(to: directory.appendingPathComponent(path), atomically: true, encoding: .utf8)
        }
        return directory
    }

    @Test func theScriptNamesNoMirrorHost() throws {
        let text = try String(contentsOf: Self.script, encoding: .utf8)
        let hosts = text.split(separator: "\n").filter { line in
            !line.trimmingCharacters(in: .whitespaces).hasPrefix("#") && line.contains("://")
        }
        #expect(hosts.isEmpty, "build-image.sh names a URL: \(hosts)")
    }

    @Test func aDeb822SourceGivesTheMirrorAndOthersArePassedOver() async throws {
        let apt = try Self.aptDirectory([
            // Not a Debian suite debootstrap knows (a vendor's repository), and a disabled one.
            "sources.list.d/vendor.sources": """
                Types: deb
                URIs: https://vendor.example/apt
                Suites: nodistro
                Components: main

                """,
            "sources.list.d/old.sources": """
                Enabled: no
                Types: deb
                URIs: http://disabled.example/debian
                Suites: bookworm
                Components: main

                """,
            "sources.list.d/debian.sources": """
                Types: deb deb-src
                # a comment inside the paragraph
                URIs: http://mirror-a.example/debian/
                Suites: bookworm bookworm-updates
                Components: main
                Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

                Types: deb
                URIs: http://mirror-a.example/debian-security
                Suites: bookworm-security
                Components: main

                """,
            // Not read: apt itself ignores files without .list or .sources.
            "sources.list.d/other.list.disabled": "deb http://ignored.example/debian bookworm main\n",
        ])
        defer { try? FileManager.default.removeItem(at: apt) }
        let result = try await Self.printMirror(["BLUETIDE_APT_ETC": apt.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == ["http://mirror-a.example/debian"], "\(result)")
    }

    @Test func aOneLineSourceWithOptionsGivesTheMirror() async throws {
        let apt = try Self.aptDirectory([
            "sources.list": """
                # deb http://commented.example/debian bookworm main
                deb-src http://source-only.example/debian bookworm main
                deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror-b.example/debian trixie main contrib

                """,
        ])
        defer { try? FileManager.default.removeItem(at: apt) }
        let result = try await Self.printMirror(["BLUETIDE_APT_ETC": apt.path])
        #expect(result.stdout == ["http://mirror-b.example/debian"], "\(result)")
    }

    @Test func theEnvironmentOverridesAndNoSourceIsAClearUsageError() async throws {
        let apt = try Self.aptDirectory([:])
        defer { try? FileManager.default.removeItem(at: apt) }
        let overridden = try await Self.printMirror(["BLUETIDE_APT_ETC": apt.path, "BLUETIDE_BLUEZ_MIRROR": "http://mine.example/debian"])
        #expect(overridden.stdout == ["http://mine.example/debian"], "\(overridden)")
        let none = try await Self.printMirror(["BLUETIDE_APT_ETC": apt.path])
        #expect(none.status == 2)
        #expect(none.stderr.count == 1 && none.stderr[0].contains("BLUETIDE_BLUEZ_MIRROR"), "\(none.stderr)")
    }
}
