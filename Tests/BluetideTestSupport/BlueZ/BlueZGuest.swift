import Foundation

/// The Debian BlueZ guest, booted under qemu by `Interop/bluez/guest.py agent`, with its
/// controller on a `bluetide controllers` port; commands run in it through the guest's agent.
///
/// Commands are shell lines run as root in the guest (`/share` is the shared folder: the rig's
/// scripts in `/share/guest`, anything the test puts in `shareDirectory`). Their output comes
/// back line by line. Run one command at a time to completion with `run(_:timeout:)`, or start
/// one with `start(_:timeout:)` and wait for its lines (`line(of:timeout:matching:)`) while the
/// host does its part. The guest stops when this object's process ends its stdin (`stop()`) or
/// when the test process exits.
public actor BlueZGuest {
    /// What a finished guest command printed and how it ended.
    public struct Result: Sendable {
        /// The shell's exit status (-9: the agent killed it at its timeout).
        public var status: Int
        /// Its stdout lines, in order.
        public var stdout: [String]
        /// Its stderr lines, in order.
        public var stderr: [String]
        /// Its stdout lines that are JSON objects, decoded.
        public var json: [[String: Any]] {
            stdout.compactMap { line in
                guard line.hasPrefix("{") else { return nil }
                return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            }
        }
    }

    /// Seconds from qemu's start to the agent's hello (boot time), and the accelerator used.
    nonisolated public let bootSeconds: Double
    /// `kvm` or `tcg` (qemu's software emulation).
    nonisolated public let accelerator: String
    /// The folder the guest sees as `/share`.
    nonisolated public let shareDirectory: URL
    /// The guest's console (kernel log and init messages).
    nonisolated public let consoleLog: URL
    private let process: BumbleProcess
    private var nextID = 1
    private var pending: [Int: (stdout: [String], stderr: [String], status: Int?)] = [:]
    /// Per command, how many of its stdout lines `line(of:timeout:matching:)` already returned.
    private var consumed: [Int: Int] = [:]

    private init(process: BumbleProcess, bootSeconds: Double, accelerator: String, share: URL, console: URL) {
        self.process = process
        self.bootSeconds = bootSeconds
        self.accelerator = accelerator
        self.shareDirectory = share
        self.consoleLog = console
    }

    /// Boots the guest with its controller at `hci` (`HOST:PORT` of a `bluetide controllers`
    /// port) and waits for its agent (at most `timeout`, which covers a slow software boot).
    /// `share` is shared as `/share` (the rig's scripts are copied into `share/guest`);
    /// `swiftRuntime` is shared read-only as `/opt/swiftlib`.
    public static func boot(
        hci: String, share: URL, swiftRuntime: URL?, console: URL, timeout: Duration = .seconds(240)
    ) async throws -> BlueZGuest {
        var arguments = ["agent", "--hci", hci, "--share", share.path, "--console", console.path]
        if let swiftRuntime { arguments += ["--swift-lib", swiftRuntime.path] }
        let script = BlueZGuestEnvironment.rigDirectory.appendingPathComponent("guest.py")
        // guest.py needs only Python's standard library (not Bumble): any python3 runs it.
        guard let python = BlueZGuestEnvironment.executable(named: "python3") else {
            throw BumbleHarnessError(description: "the BlueZ guest runner needs python3 on PATH (apt-get install python3)")
        }
        let process = try BumbleProcess.launch(name: "bluez-guest", executable: python, arguments: [script.path] + arguments)
        do {
            let hello = try await process.firstLine(timeout: timeout, describing: "the guest's agent (boot)") { line in
                line.contains("\"hello\"") || line.contains("\"error\"") || line.contains("\"event\": \"exit\"")
            }
            let object = (try? JSONSerialization.jsonObject(with: Data(hello.utf8))) as? [String: Any] ?? [:]
            guard object["event"] as? String == "hello" else {
                throw BumbleHarnessError(description: "the BlueZ guest did not boot: \(hello)")
            }
            return BlueZGuest(
                process: process, bootSeconds: object["boot_seconds"] as? Double ?? 0,
                accelerator: object["accelerator"] as? String ?? "?", share: share, console: console)
        } catch {
            await process.stop()
            throw error
        }
    }

    /// Starts `command` in the guest (the agent kills it after `timeout`) and returns its id.
    public func start(_ command: String, timeout: Duration) async throws -> Int {
        let id = nextID
        nextID += 1
        pending[id] = ([], [], nil)
        let request: [String: Any] = ["id": id, "run": command, "timeout": Double(timeout.components.seconds)]
        let data = try JSONSerialization.data(withJSONObject: request)
        try await process.writeToStdin(String(decoding: data, as: UTF8.self) + "\n")
        return id
    }

    /// Asks the agent to end command `id` (SIGTERM to its process group, SIGKILL 3 s later).
    public func kill(_ id: Int) async throws {
        try await process.writeToStdin("{\"id\": \(id), \"kill\": true}\n")
    }

    /// The next stdout line of command `id` that satisfies `matching` (earlier lines of it are
    /// passed over); throws after `timeout`, or when the command ends first.
    public func line(of id: Int, timeout: Duration, matching: @Sendable (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            let lines = pending[id]?.stdout ?? []
            let start = consumed[id, default: 0]
            if let index = lines[start...].firstIndex(where: matching) {
                consumed[id] = index + 1
                return lines[index]
            }
            consumed[id] = lines.count
            if let status = pending[id]?.status {
                throw BumbleHarnessError(description: "guest command \(id) ended (status \(status)) before the awaited line; stdout: \(lines.suffix(6)) stderr: \(pending[id]?.stderr.suffix(6) ?? [])")
            }
            try await receive(until: deadline, waitingFor: "a line of guest command \(id)")
        }
    }

    /// Waits for command `id` to end (at most `timeout`) and returns what it printed.
    public func result(of id: Int, timeout: Duration) async throws -> Result {
        let deadline = ContinuousClock.now + timeout
        while pending[id]?.status == nil {
            try await receive(until: deadline, waitingFor: "the end of guest command \(id)")
        }
        let finished = pending.removeValue(forKey: id)!
        consumed[id] = nil
        return Result(status: finished.status ?? -1, stdout: finished.stdout, stderr: finished.stderr)
    }

    /// Runs `command` to completion (the agent kills it after `timeout`).
    public func run(_ command: String, timeout: Duration) async throws -> Result {
        let id = try await start(command, timeout: timeout)
        return try await result(of: id, timeout: timeout + .seconds(15))
    }

    /// Ends the guest (qemu is killed when the runner's stdin closes).
    public func stop() async {
        await process.stop(grace: .seconds(5))
    }

    /// The guest console's last lines, for failure messages.
    public func consoleTail(_ count: Int = 20) -> [String] {
        let text = (try? String(contentsOf: consoleLog, encoding: .utf8)) ?? ""
        return Array(text.split(separator: "\n").suffix(count).map(String.init))
    }

    /// Reads one message from the runner and files it under its command.
    private func receive(until deadline: ContinuousClock.Instant, waitingFor what: String) async throws {
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else {
            throw BumbleHarnessError(description: "no \(what) in time; guest console: \(consoleTail(8))")
        }
        guard let line = try await process.nextLine(timeout: remaining) else {
            throw BumbleHarnessError(description: "the guest runner ended while waiting for \(what); console: \(consoleTail(12))")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else { return }
        if object["event"] as? String == "exit" {
            throw BumbleHarnessError(description: "qemu exited while waiting for \(what): \(line)")
        }
        guard let id = object["id"] as? Int, pending[id] != nil else { return }
        if let text = object["line"] as? String {
            if object["stream"] as? String == "stderr" { pending[id]?.stderr.append(text) } else { pending[id]?.stdout.append(text) }
        } else if let status = object["exit"] as? Int {
            pending[id]?.status = status
        }
    }
}
