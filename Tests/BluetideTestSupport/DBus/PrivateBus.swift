import Foundation
import Testing

/// A private bus for one test: `dbus-daemon --nofork` on a socket in a temporary folder, allowing
/// everything. dbus-daemon keeps the descriptors it inherits (checked in /proc/PID/fd), so
/// Foundation's exit watch works for it (see the brief's pitfall about daemons that close them).
public struct PrivateBus: Sendable {
    public let process: BumbleProcess
    /// The bus's D-Bus address (`unix:path=…`).
    public let address: String
    let folder: URL

    /// Starts `dbus-daemon` (`type`: `session` or `system`, which only changes its defaults).
    public static func start(type: String = "session") async throws -> PrivateBus {
        let daemon = try #require(OptionalTool.executable("dbus-daemon"), "dbus-daemon is not installed (apt-get install dbus-daemon)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bluetide-dbus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let socket = folder.appendingPathComponent("bus").path
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>\(type)</type>
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
        let process = try BumbleProcess.launch(name: "dbus-daemon", executable: daemon, arguments: [
            "--config-file=\(folder.appendingPathComponent("bus.conf").path)", "--nofork", "--print-address",
        ])
        do {
            _ = try await process.firstLine(timeout: .seconds(30), describing: "the bus address") { $0.hasPrefix("unix:path=\(socket)") }
        } catch {
            await process.stop()
            throw error
        }
        return PrivateBus(process: process, address: "unix:path=\(socket)", folder: folder)
    }

    public func stop() async {
        await process.stop(grace: .seconds(5))
        try? FileManager.default.removeItem(at: folder)
    }
}

