import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's `chromium`, headless, driven over the DevTools protocol on a pipe
/// (`--remote-debugging-pipe`: JSON messages ending in NUL on file descriptors 3 and 4).
///
/// Everything here blocks, so it only ever runs on a thread of its own (see ``session(_:)``),
/// never on the cooperative pool. Every wait has a deadline.
public final class HeadlessChromium {
    /// A step the browser did not do (with what and why).
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// The chromium binary, if installed.
    public static func executable() -> String? {
        for path in ["/usr/bin/chromium", "/usr/local/bin/chromium", "/usr/bin/chromium-browser"]
        where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        return nil
    }

    /// The flags every launch uses: headless, no sandbox (root in CI), no GPU, a throw-away profile.
    public static func baseArguments(profile: String) -> [String] {
        ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
         "--disable-background-networking", "--disable-sync", "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
         "--user-data-dir=\(profile)"]
    }

    /// Runs `chromium --dump-dom URL` (our JavaScript runs before the dump) on a thread of its own.
    public static func dumpDOM(_ url: String, windowSize: String = "1000,1400") async throws -> String {
        guard let chromium = executable() else { throw Failure("chromium is not installed") }
        return try await onThread {
            let profile = NSTemporaryDirectory() + "chromium-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: profile) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: chromium)
            process.arguments = baseArguments(profile: profile) + ["--window-size=\(windowSize)", "--dump-dom", url]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw Failure("chromium --dump-dom exited with \(process.terminationStatus)") }
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// Runs `body` with a browser on a thread of its own; the browser is closed afterwards.
    public static func session<T: Sendable>(_ body: @escaping @Sendable (HeadlessChromium) throws -> T) async throws -> T {
        try await onThread {
            let browser = try HeadlessChromium()
            defer { browser.close() }
            return try body(browser)
        }
    }

    /// Runs blocking work on a new thread and resumes with its result.
    public static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    private let pid: pid_t
    private let toBrowser: Int32
    private let fromBrowser: Int32
    private let profile: String
    private var buffer: [UInt8] = []
    private var nextID = 1
    /// The attached page's session.
    private var sessionID: String?

    private init() throws {
        guard let chromium = Self.executable() else { throw Failure("chromium is not installed") }
        profile = NSTemporaryDirectory() + "chromium-\(UUID().uuidString)"
        // Pipe ends above 4, close-on-exec, so that only the dup2 copies on 3 and 4 reach chromium.
        func pipeAbove4() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw Failure("pipe failed") }
            let read = fcntl(fds[0], F_DUPFD_CLOEXEC, 10), write = fcntl(fds[1], F_DUPFD_CLOEXEC, 10)
            Glibc.close(fds[0]); Glibc.close(fds[1])
            return (read, write)
        }
        let commands = try pipeAbove4(), answers = try pipeAbove4()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, commands.read, 3)
        posix_spawn_file_actions_adddup2(&actions, answers.write, 4)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = [chromium] + Self.baseArguments(profile: profile) + ["--remote-debugging-pipe", "about:blank"]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, chromium, &actions, nil, argv, environ)
        Glibc.close(commands.read)
        Glibc.close(answers.write)
        guard status == 0 else {
            Glibc.close(commands.write); Glibc.close(answers.read)
            throw Failure("cannot start chromium: posix_spawn error \(status)")
        }
        pid = child
        toBrowser = commands.write
        fromBrowser = answers.read
        signal(SIGPIPE, SIG_IGN)

        let target = try call("Target.createTarget", ["url": "about:blank"])
        guard let targetID = target["targetId"] as? String else { throw Failure("no target: \(target)") }
        let attached = try call("Target.attachToTarget", ["targetId": targetID, "flatten": true])
        sessionID = attached["sessionId"] as? String
        _ = try call("Page.enable")
        _ = try call("Runtime.enable")
        // Every document from now on tells `waitUntil` when something happened in it (see there).
        _ = try call("Page.addScriptToEvaluateOnNewDocument", ["source": Self.changeSignals])
    }

    /// Installed in every page before its own scripts: `__bluetideChanged()` runs the waiting
    /// checks of ``waitUntil(_:what:seconds:)`` once the current task is done, and is called on
    /// every change a page's state can come from — a DOM mutation, a loading step, a WebSocket's
    /// open, message, error or close, a fetch ending. A check therefore runs after each event,
    /// never on a timer.
    static let changeSignals = """
        (() => {
          const checks = new Set();
          let queued = false;
          const changed = () => {
            if (queued || checks.size === 0) return;
            queued = true;
            setTimeout(() => { queued = false; for (const check of [...checks]) check(); }, 0);
          };
          Object.defineProperty(window, "__bluetideChecks", { value: checks });
          Object.defineProperty(window, "__bluetideChanged", { value: changed });
          const NativeWebSocket = window.WebSocket;
          window.WebSocket = class extends NativeWebSocket {
            constructor(...args) {
              super(...args);
              for (const type of ["open", "message", "error", "close"]) this.addEventListener(type, changed);
            }
          };
          const nativeFetch = window.fetch;
          window.fetch = (...args) => nativeFetch(...args).finally(changed);
          new MutationObserver(changed).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
          document.addEventListener("readystatechange", changed);
          window.addEventListener("load", changed);
        })();
        """

    /// Closes the browser and waits for it to exit.
    public func close() {
        _ = try? call("Browser.close", deadline: 5)
        Glibc.close(toBrowser)
        Glibc.close(fromBrowser)
        // Its exit, waited for on a thread of its own; killed when not gone within 5 s.
        let exited = DispatchSemaphore(value: 0)
        let pid = self.pid
        Thread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1, errno == EINTR {}
            exited.signal()
        }.start()
        if exited.wait(timeout: .now() + 5) == .timedOut {
            kill(pid, SIGKILL)
            exited.wait()
        }
        try? FileManager.default.removeItem(atPath: profile)
    }

    /// Sends one DevTools command (to the page once attached) and returns its result.
    @discardableResult
    public func call(_ method: String, _ parameters: [String: Any] = [:], deadline seconds: Double = 20) throws -> [String: Any] {
        let id = nextID
        nextID += 1
        var message: [String: Any] = ["id": id, "method": method, "params": parameters]
        if let sessionID, !method.hasPrefix("Target."), method != "Browser.close" { message["sessionId"] = sessionID }
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(toBrowser, $0.baseAddress, $0.count) }
            guard written > 0 else { throw Failure("chromium closed its command pipe (\(method))") }
            offset += written
        }
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let answer = try readMessage(until: deadline, waitingFor: method)
            guard answer["id"] as? Int == id else { continue }  // an event, or an older answer
            if let error = answer["error"] { throw Failure("\(method) failed: \(error)") }
            return answer["result"] as? [String: Any] ?? [:]
        }
    }

    private func readMessage(until deadline: Date, waitingFor method: String) throws -> [String: Any] {
        while true {
            if let end = buffer.firstIndex(of: 0) {
                let data = Data(buffer[..<end])
                buffer.removeSubrange(...end)
                return (try JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw Failure("chromium did not answer \(method) in time") }
            var poller = pollfd(fd: fromBrowser, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(remaining, 1) * 1000))
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let count = read(fromBrowser, &chunk, chunk.count)
            guard count > 0 else { throw Failure("chromium closed its answer pipe while waiting for \(method)") }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    // MARK: Page helpers

    /// Sets the viewport (CSS pixels).
    public func viewport(width: Int, height: Int, mobile: Bool = false) throws {
        try call("Emulation.setDeviceMetricsOverride", ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile])
    }

    /// Opens `url` and waits until the document has loaded.
    public func open(_ url: String) throws {
        try call("Page.navigate", ["url": url])
        try waitUntil("document.readyState === 'complete' && location.href === \(Self.jsString(url))", what: "loading \(url)")
    }

    /// Evaluates `expression` in the page (promises awaited) and returns its JSON value.
    public func evaluate(_ expression: String) throws -> Any? {
        let result = try call("Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true])
        if let exception = result["exceptionDetails"] { throw Failure("script failed: \(expression): \(exception)") }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Waits until `condition` (a JavaScript boolean expression) holds: the page checks it at
    /// once and again after each change it sees (``changeSignals``), and answers when it holds;
    /// a hang guard of `seconds`, not a timing check. A navigation that replaces the document
    /// while waiting starts the wait again in the new one.
    public func waitUntil(_ condition: String, what: String, seconds: Double = 30) throws {
        let deadline = Date().addingTimeInterval(seconds)
        let script = """
            new Promise((resolve) => {
              const holds = () => { try { return Boolean(\(condition)); } catch (error) { return false; } };
              if (holds()) { resolve(true); return; }
              const checks = window.__bluetideChecks;
              const check = () => { if (holds()) { checks.delete(check); resolve(true); } };
              // A document from before the signals (the first about:blank) has no checks: a
              // navigation replaces it and ends this wait.
              if (checks) checks.add(check);
              setTimeout(() => { if (checks) checks.delete(check); resolve(false); }, \(Int(seconds * 1000)));
            })
            """
        for _ in 0..<20 {  // at most 20 documents replaced while waiting
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { break }
            do {
                let result = try call("Runtime.evaluate", ["expression": script, "returnByValue": true, "awaitPromise": true], deadline: remaining + 5)
                if let exception = result["exceptionDetails"] { throw Failure("waiting for \(what): \(exception)") }
                if (result["result"] as? [String: Any])?["value"] as? Bool == true { return }
                break
            } catch let failure as Failure where failure.description.contains("Runtime.evaluate failed") {
                continue  // the document went away (a navigation) while waiting: wait in the new one
            }
        }
        throw Failure("gave up waiting for \(what) after \(Int(seconds)) s")
    }

    /// The page as a PNG: the whole document (up to `maxHeight` CSS pixels) at the current width.
    public func screenshot(maxHeight: Double = 4000) throws -> Data {
        let metrics = try call("Page.getLayoutMetrics")
        let content = metrics["cssContentSize"] as? [String: Any]
        let viewport = metrics["cssLayoutViewport"] as? [String: Any]
        let width = (viewport?["clientWidth"] as? Double) ?? 1000
        let height = min((content?["height"] as? Double) ?? 1400, maxHeight)
        let shot = try call("Page.captureScreenshot", [
            "format": "png", "captureBeyondViewport": true,
            "clip": ["x": 0, "y": 0, "width": width, "height": height, "scale": 1],
        ])
        guard let base64 = shot["data"] as? String, let data = Data(base64Encoded: base64) else { throw Failure("no screenshot data") }
        return data
    }

    /// `text` as a JavaScript string literal.
    public static func jsString(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text])) ?? Data("[\"\"]".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }
}
