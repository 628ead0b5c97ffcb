import BluetideTestSupport
import Foundation

/// Starts and stops the Bumble side of an interop test: linked virtual controllers
/// (`Interop/bumble/controllers.py`, via `BumbleLinkedControllers`), the test peripheral and the
/// test central.
///
/// Use it through `withBumble { bumble in ... }`, which stops every process it started (by PID:
/// SIGTERM, then SIGKILL after a grace period) when the body returns or throws. Each test gets
/// fresh controllers on fresh ports, because Bumble's controllers keep stale state across hosts.
actor BumbleHarness {
    /// Default wait for a process to become ready.
    static let startupTimeout: Duration = BumbleLinkedControllers.startupTimeout

    private let logDirectory: URL
    private var processes: [BumbleProcess] = []
    private var logCount = 0

    /// Fails (with the install command) when Python, Bumble or the interop scripts are missing.
    init() async throws {
        _ = try await BumbleEnvironment.requireAvailable()
        logDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("bluetide-bumble-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: true)
    }

    /// Folder holding each process's stderr log.
    var logs: URL { logDirectory }

    /// A fresh stderr log file for the next process called `name`.
    private func nextLog(_ name: String) -> URL {
        defer { logCount += 1 }
        return logDirectory.appendingPathComponent("\(logCount)-\(name).stderr.log")
    }

    /// Starts a Python script from the interop folder; the harness will stop it.
    func startScript(name: String, script: String, arguments: [String]) async throws -> BumbleProcess {
        let process = try await BumbleProcess.launchPython(
            .interopScript(script), arguments: arguments, name: name, stderrLog: nextLog(name))
        processes.append(process)
        return process
    }

    /// Starts `count` linked controllers and waits for their `READY` line.
    ///
    /// - Parameters:
    ///   - legacyReports: clear the extended-advertising feature bit, so scanners get legacy
    ///     advertising reports (0x02) instead of extended ones (0x0D).
    ///   - leACLLength: LE ACL data packet length the controllers report (Bumble default 27).
    /// - Returns: the controllers and the TCP port of each (127.0.0.1), in order.
    func startControllers(
        count: Int = 2, legacyReports: Bool = false, leACLLength: Int? = nil,
        timeout: Duration = startupTimeout
    ) async throws -> (process: BumbleProcess, ports: [UInt16]) {
        // On failure `start` has already stopped the process.
        let (process, ports) = try await BumbleLinkedControllers.start(
            count: count, legacyReports: legacyReports, leACLLength: leACLLength,
            stderrLog: nextLog("controllers"), timeout: timeout)
        processes.append(process)
        return (process, ports)
    }

    /// Starts `peripheral.py` on controller `port` and waits for its `ready` event (advertising).
    /// - Returns: the process and its `ready` event (name, address, value handles).
    func startPeripheral(
        port: UInt16, options: BumblePeripheralOptions = .init(), timeout: Duration = startupTimeout
    ) async throws -> (process: BumbleProcess, ready: JSONValue) {
        let process = try await startScript(
            name: "peripheral", script: "peripheral.py", arguments: options.arguments(port: port))
        let ready = try await process.firstJSON("event", "ready", timeout: timeout)
        return (process, ready)
    }

    /// Starts `central.py` on controller `port`. Read its steps with `jsonLines(timeout:)` or
    /// wait for the end with `centralSummary(_:timeout:)`.
    func startCentral(port: UInt16, options: BumbleCentralOptions) async throws -> BumbleProcess {
        try await startScript(name: "central", script: "central.py", arguments: options.arguments(port: port))
    }

    /// Waits for the central's summary line and decodes it.
    func centralSummary(_ central: BumbleProcess, timeout: Duration = .seconds(90)) async throws
        -> BumbleCentralSummary
    {
        let line = try await central.firstLine(timeout: timeout, describing: "central summary") {
            JSONValue(line: $0)?["step"]?.string == "summary"
        }
        do {
            return try BumbleCentralSummary(line: line)
        } catch {
            throw await central.failure("cannot decode the summary: \(error)")
        }
    }

    /// Stops every process this harness started, most recent first.
    func stopAll(grace: Duration = .seconds(3)) async {
        for process in processes.reversed() {
            await process.stop(grace: grace)
        }
    }
}

/// Runs `body` with a fresh `BumbleHarness`, then stops every process it started, whether
/// `body` returned or threw. Throws (with `python3 -m pip install bumble==0.0.236`) when Bumble is
/// missing; mark suites with `.bumbleInterop` so `BLUETIDE_SKIP_BUMBLE=1` skips them.
/// The processes' stderr logs are deleted when `body` returns, kept when it throws (their tails
/// are in the error) or when `BLUETIDE_KEEP_BUMBLE_LOGS=1`.
func withBumble<Value: Sendable>(
    _ body: (BumbleHarness) async throws -> Value
) async throws -> Value {
    let harness = try await BumbleHarness()
    let value: Value
    do {
        value = try await body(harness)
    } catch {
        await harness.stopAll()
        throw error
    }
    await harness.stopAll()
    if ProcessInfo.processInfo.environment["BLUETIDE_KEEP_BUMBLE_LOGS"] != "1" {
        try? FileManager.default.removeItem(at: await harness.logs)
    }
    return value
}
