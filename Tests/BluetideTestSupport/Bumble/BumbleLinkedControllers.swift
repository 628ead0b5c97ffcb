import Foundation

/// `Interop/bumble/controllers.py`: N Bumble virtual controllers on one link, each a TCP server
/// on 127.0.0.1 that a host (Bluetide or a Bumble script) connects to with
/// `tcp-client:127.0.0.1:<port>`.
///
/// Ports: the script binds port 0 itself and reports the ports the OS chose on its `READY` line,
/// so there is no window in which another process could take a port. Start fresh controllers
/// for each test: Bumble's controllers keep stale state across hosts.
public enum BumbleLinkedControllers {
    /// Default wait for the `READY` line.
    public static let startupTimeout: Duration = .seconds(30)

    /// The script's arguments (after its path).
    /// - Parameters:
    ///   - legacyReports: clear the extended-advertising feature bit, so scanners get legacy
    ///     advertising reports (0x02) instead of extended ones (0x0D).
    ///   - leACLLength: LE ACL data packet length the controllers report (Bumble default 27).
    public static func arguments(count: Int, legacyReports: Bool = false, leACLLength: Int? = nil) -> [String] {
        var arguments = Array(repeating: "0", count: count) + ["--exit-on-stdin-eof"]
        if legacyReports { arguments.append("--legacy-reports") }
        if let leACLLength { arguments += ["--le-acl-length", String(leACLLength)] }
        return arguments
    }

    /// Starts `count` linked controllers and waits (up to `timeout`) for their `READY` line.
    /// On any failure the process is stopped before the error (with its output) is thrown;
    /// on success the caller stops it (`BumbleProcess.stop(grace:)`).
    /// - Returns: the process and the TCP port of each controller (127.0.0.1), in order.
    public static func start(
        count: Int = 2, legacyReports: Bool = false, leACLLength: Int? = nil, stderrLog: URL? = nil,
        timeout: Duration = startupTimeout
    ) async throws -> (process: BumbleProcess, ports: [UInt16]) {
        let process = try await BumbleProcess.launchPython(
            .interopScript("controllers.py"),
            arguments: arguments(count: count, legacyReports: legacyReports, leACLLength: leACLLength),
            name: "controllers", stderrLog: stderrLog)
        do {
            let line = try await process.firstLine(timeout: timeout, describing: "READY line") {
                $0.hasPrefix("READY ") || $0.hasPrefix("ERROR ")
            }
            let ports = line.split(separator: " ").dropFirst().compactMap { UInt16($0) }
            guard line.hasPrefix("READY "), ports.count == count, !ports.contains(0) else {
                throw await process.failure("unexpected controller start line: \(line)")
            }
            return (process, ports)
        } catch {
            await process.stop()
            throw error
        }
    }
}
