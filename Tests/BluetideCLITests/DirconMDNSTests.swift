import BluetideTestSupport
import Foundation
import Testing

/// Issue 29 item 2's discovery: `ride bridge --dircon` advertised over mDNS by Avahi, found by name
/// by a DIRCON app (Interop/dircon/dircon_app.py with `--mdns`), which then rides the emulated Tacx.
///
/// Avahi needs a D-Bus system bus. When an avahi-daemon already runs (`avahi-daemon -c`), the test
/// uses it; otherwise it starts its own: a private `dbus-daemon` (system-type bus on a socket in a
/// temporary folder, given to the children as `DBUS_SYSTEM_BUS_ADDRESS`) and an `avahi-daemon` on
/// that bus, on the loopback interface only (root, no chroot, no privilege drop). Only the bridge,
/// its `avahi-publish-service` and the app's `avahi-browse` see the private bus; this process's
/// environment is left alone. Debian packages: avahi-daemon avahi-utils dbus-daemon.
@Suite(.serialized) struct DirconMDNSTests {
    static let tools = ["avahi-daemon", "avahi-browse", "avahi-publish-service", "dbus-daemon", "python3"]

    @Test(.enabled(
        if: OptionalTool.isCI || tools.allSatisfy { OptionalTool.executable($0, extraPaths: ["/usr/sbin"]) != nil },
        "Avahi is not installed (apt-get install avahi-daemon avahi-utils dbus-daemon; .ci/run does): skipped outside CI"),
        .timeLimit(.minutes(3)))
    func aDirconAppFindsTheBridgeOverMDNSAndRidesTheEmulatedTacx() async throws {
        let binary = try #require(BuiltExecutables.bluetide, "bluetide executable not built next to the tests")
        let python = try #require(OptionalTool.executable("python3"))
        let mdns = try await MDNSResponder.start()
        var children: [BumbleProcess] = []
        do {
            // The responder must not hide other children's exits from Foundation's `Process`
            // (avahi-daemon closes the descriptor by which `Process` learns of its exit; see
            // `BumbleProcess.launch(keepsExitWatch:)`): a short program started now is seen to end.
            let short = try BumbleProcess.launch(name: "true", executable: URL(fileURLWithPath: "/bin/true"), arguments: [])
            let shortStatus = await short.waitForExit(timeout: .seconds(30))
            #expect(shortStatus == 0, "a child that ended while the mDNS responder ran was not seen to end")
            let name = "BT mDNS \(UUID().uuidString.prefix(8))"
            let bridge = try BumbleProcess.launch(name: "bridge", executable: binary, arguments: [
                "ride", "bridge", "--emulate", "tacx-fec,heart-rate", "--transport", privateLink(), "--timeout", "5",
                "--name", name, "--dircon", "--dircon-host", "127.0.0.1", "--dircon-port", "0", "--duration", "90", "--json",
            ], environment: mdns.environment)
            children.append(bridge)
            let notice = try await bridge.firstLine(timeout: .seconds(60), describing: "the DIRCON notice") {
                $0.contains("DIRCON on 127.0.0.1:")
            }
            #expect(notice.contains("advertising over mDNS as \\\"\(name)\\\""), "\(notice)")
            let port = try #require(notice.range(of: #"127\.0\.0\.1:[0-9]+"#, options: .regularExpression)
                .flatMap { Int(notice[$0].split(separator: ":").last ?? "") })
            let script = BumbleEnvironment.repositoryRoot.appendingPathComponent("Interop/dircon/dircon_app.py")
            // The app's outcome is its last line (its exit is not waited for; it is stopped by PID
            // below).
            let app = try BumbleProcess.launch(name: "dircon-app", executable: python, arguments: [
                script.path, "--mdns", name, "--interface", "lo", "--erg", "180", "--timeout", "60",
            ], environment: mdns.environment)
            children.append(app)
            let last = try await app.firstLine(from: .either, timeout: .seconds(120), describing: "the app's outcome") {
                $0.hasPrefix("settled ") || $0.hasPrefix("power did not settle") || $0.hasSuffix(" refused") || $0.hasPrefix("RuntimeError")
            }
            let appOutput = await app.output(.stdout) + app.output(.stderr)
            #expect(last.hasPrefix("settled "), "\(appOutput.joined(separator: "\n"))")
            #expect(appOutput.contains { $0.hasPrefix("found \(name) on lo at 127.0.0.1:\(port) txt ") && $0.contains("ble-service-uuids=") },
                    "the app found the bridge by its name, at its port: \(appOutput)")
            #expect(appOutput.contains("control success") && appOutput.contains("erg success"), "\(appOutput)")
            await bridge.stop(grace: .seconds(20))
            let lines = await bridge.output(.stdout)
            let requests = lines.compactMap { JSONValue(line: $0) }.filter { $0["type"]?.string == "bridge-request" }
            #expect(requests.last?["text"]?.string == "app DIRCON #1: set target power 180 W → trainer confirmed → success", "\(lines)")
            #expect(!lines.contains { $0.contains("the mDNS advertisement ended") }, "the advertiser ran to the bridge's end")
        } catch {
            for child in children { await child.stop() }
            await mdns.stop()
            throw error
        }
        for child in children { await child.stop() }
        await mdns.stop()
    }
}

/// An mDNS responder for a test: the machine's running avahi-daemon, or a private D-Bus system bus
/// and avahi-daemon started for the test (stopped by ``stop()``).
struct MDNSResponder {
    /// What the children need to reach the responder (the private bus's address, or nothing).
    var environment: [String: String]
    private var processes: [BumbleProcess]
    private var folder: URL?

    static func start() async throws -> MDNSResponder {
        let avahi = try #require(OptionalTool.executable("avahi-daemon", extraPaths: ["/usr/sbin"]), "avahi-daemon is not installed")
        if try await run(avahi, ["-c"]) == 0 { return MDNSResponder(environment: [:], processes: [], folder: nil) }
        let dbus = try #require(OptionalTool.executable("dbus-daemon"), "dbus-daemon is not installed")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bluetide-mdns-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let socket = folder.appendingPathComponent("bus").path
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>
            """.write(to: folder.appendingPathComponent("bus.conf"), atomically: true, encoding: .utf8)
        try """
            [server]
            use-ipv4=yes
            use-ipv6=no
            allow-interfaces=lo
            enable-dbus=yes
            [publish]
            publish-workstation=no
            publish-hinfo=no
            """.write(to: folder.appendingPathComponent("avahi.conf"), atomically: true, encoding: .utf8)
        var responder = MDNSResponder(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(socket)"], processes: [], folder: folder)
        do {
            let bus = try BumbleProcess.launch(name: "dbus-daemon", executable: dbus, arguments: [
                "--config-file=\(folder.appendingPathComponent("bus.conf").path)", "--nofork", "--print-address",
            ], keepsExitWatch: true)
            responder.processes.append(bus)
            _ = try await bus.firstLine(timeout: .seconds(30), describing: "the bus address") { $0.hasPrefix("unix:path=\(socket)") }
            let daemon = try BumbleProcess.launch(name: "avahi-daemon", executable: avahi, arguments: [
                "-f", folder.appendingPathComponent("avahi.conf").path, "--no-drop-root", "--no-chroot", "--no-rlimits",
            ], environment: responder.environment, keepsExitWatch: true)
            responder.processes.append(daemon)
            _ = try await daemon.firstLine(from: .stderr, timeout: .seconds(30), describing: "avahi-daemon's startup") {
                $0.hasPrefix("Server startup complete")
            }
        } catch {
            await responder.stop()
            throw error
        }
        return responder
    }

    /// Stops what ``start()`` started (avahi-daemon first, then its bus) and removes the folder.
    func stop() async {
        for process in processes.reversed() { await process.stop(grace: .seconds(10)) }
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    private static func run(_ executable: URL, _ arguments: [String]) async throws -> Int32 {
        let process = try BumbleProcess.launch(name: executable.lastPathComponent, executable: executable, arguments: arguments)
        return try #require(await process.waitForCompletion(timeout: .seconds(30)), "\(executable.lastPathComponent) did not end")
    }
}
