import Bluetide
import BluetideSerial
import Foundation
import Synchronization

/// Runs an open set of serial links in one of the modes: pipe, interactive terminal, pty or TCP bridge.
final class UARTRunner: Sendable {
    let links: [SerialLink]
    let io: UARTConsole
    let reporter: UARTStatusReporter
    let json: Bool
    let broadcast: Bool
    /// `--permit`: whether input is sent and received bytes shown.
    let permit: UARTPermission
    /// `--log`: every chunk sent and received.
    let log: UARTTrafficLog?
    private let state: Mutex<State>

    struct State {
        var formatter: UARTOutputFormatter
        var selected = 0
        var lastReceived = ContinuousClock.now
    }

    init(
        links: [SerialLink], io: UARTConsole, reporter: UARTStatusReporter, formatter: UARTOutputFormatter, json: Bool, broadcast: Bool,
        permit: UARTPermission = .rw, log: UARTTrafficLog? = nil
    ) {
        self.permit = permit
        self.log = log
        self.links = links
        self.io = io
        self.reporter = reporter
        self.json = json
        self.broadcast = broadcast
        self.state = Mutex(State(formatter: formatter))
    }

    // MARK: Received bytes

    /// Copies every link's received bytes to the console's output, formatted, in arrival order;
    /// returns when every link has closed.
    func printReceived() async {
        await withTaskGroup(of: Void.self) { group in
            for link in links {
                group.addTask { [self] in
                    for await chunk in link.bytes { await show(chunk, from: link) }
                }
            }
        }
    }

    /// Writes a received chunk: formatted text, or with --json a `received` record (`device`,
    /// `value.hex`, `text` as UTF-8 with invalid bytes replaced, `time`).
    private func show(_ chunk: [UInt8], from link: SerialLink) async {
        guard received(chunk, from: link) else { return }
        let bytes: [UInt8] = state.withLock { s in
            s.lastReceived = .now
            if json {
                let record = reporter.line("received", [
                    "device": UARTStatusReporter.device(link), "value": JSONOutput.value(chunk),
                    "text": .string(String(decoding: chunk, as: UTF8.self)),
                ])
                return Array((record + "\n").utf8)
            }
            return s.formatter.format(chunk, from: link.name, at: Date())
        }
        await io.writeData(bytes)
    }

    /// Logs a received chunk (`--log`); whether it is to be shown (`--permit`).
    func received(_ chunk: [UInt8], from link: SerialLink) -> Bool {
        log?.record(.received, device: link.name, address: link.address, bytes: chunk)
        return permit.receives
    }

    /// Logs bytes the link took for writing (`--log`).
    func sent(_ bytes: [UInt8], to link: SerialLink) {
        log?.record(.sent, device: link.name, address: link.address, bytes: bytes)
    }

    /// The links input goes to: all with --broadcast, else the selected one.
    var targets: [SerialLink] {
        broadcast ? links : [links[state.withLock { $0.selected }]]
    }

    /// Sends `bytes` to the targets; a refusal (link down past the outage bound) is reported
    /// and the bytes dropped for that device. Returns false when a link is closed.
    @discardableResult
    func send(_ bytes: [UInt8], endingWrite: Bool = false) async -> Bool {
        var open = true
        guard permit.sends else { return true }
        for link in targets {
            do {
                try await link.send(bytes, endingWrite: endingWrite)
                sent(bytes, to: link)
            } catch let error as SerialLinkError {
                if case .closed = error { open = false }
                reporter.message("\(error)", link: link)
            } catch {
                reporter.message("\(error)", link: link)
            }
        }
        return open
    }

    /// Sends `bytes`, waiting out an outage rather than refusing (bridges hold their input instead).
    func sendPatiently(_ bytes: [UInt8], to link: SerialLink, endingWrite: Bool = false) async throws {
        guard permit.sends else { return }
        while true {
            do {
                try await link.send(bytes, endingWrite: endingWrite)
                sent(bytes, to: link)
                return
            } catch SerialLinkError.linkDown {
                try await link.waitForLink()
            }
        }
    }

    /// Whether received bytes are shown as hex now.
    var hexEnabled: Bool { state.withLock { $0.formatter.hex } }
    /// Switches hex display on or off.
    func toggleHex() { state.withLock { $0.formatter.hex.toggle() } }
    /// The link input goes to (without --broadcast).
    var selectedLink: SerialLink { links[state.withLock { $0.selected }] }
    /// Selects the next link for input.
    func selectNext() { state.withLock { $0.selected = ($0.selected + 1) % links.count } }
    /// Bytes that end an unfinished output line.
    func endLine() -> [UInt8] { state.withLock { $0.formatter.endLine() } }

    // MARK: Pipe

    /// Stdin to the device(s), received bytes to stdout; ends when stdin has ended, everything
    /// was sent, and nothing came back for `idleTimeout` seconds (or when every link closed).
    /// With an `ending` (--eol), each line is one write (with its end converted), so AT commands
    /// piped in at once reach the device one by one rather than merged into full-size writes.
    func pipe(ending: LineEnding?, idleTimeout: Double) async throws {
        let printer = Task { await printReceived() }
        defer { printer.cancel() }
        // When every link has closed for good, stop waiting for input.
        let watcher = Task { [links, io] in
            for link in links { guard await link.waitForClose() != nil else { return } }
            io.input.stop()
        }
        defer { watcher.cancel() }
        var pendingCR = false
        var failure: String?
        var lines = LineWrites()
        reading: while true {
            let chunk = await io.input.read()
            // Pieces to send: the chunk as it came, or with --eol its whole lines (an unfinished
            // one waits for its end, or for the end of input).
            let pieces: [(bytes: [UInt8], endsWrite: Bool)]
            if let ending {
                guard let chunk else {
                    pieces = lines.flush().map { [($0, true)] } ?? []
                    for piece in pieces { for link in targets { try? await sendPatiently(piece.bytes, to: link, endingWrite: true) } }
                    break reading
                }
                pieces = lines.feed(ending.lineWrites(chunk, pendingCR: &pendingCR)).map { ($0, true) }
            } else {
                guard let chunk else { break reading }
                pieces = [(chunk, false)]
            }
            for piece in pieces {
                for link in targets {
                    do { try await sendPatiently(piece.bytes, to: link, endingWrite: piece.endsWrite) } catch {
                        failure = "\(link.name): \(error)"
                        break reading
                    }
                }
            }
        }
        // A link that is down when input ends is waited for: back (then drained), or given up
        // (within its outage limit), which ends the command with status 1 below.
        for link in links { try? await link.waitForLink() }
        for link in targets { try? await link.drain() }
        state.withLock { $0.lastReceived = .now }
        // Wait for replies to stop: sleep until the idle deadline, later if bytes came meanwhile.
        let idle = Duration.milliseconds(Int64(idleTimeout * 1000))
        while true {
            let deadline = state.withLock { $0.lastReceived } + idle
            if ContinuousClock.now >= deadline { break }
            var open = false
            for link in links where await link.closedReason == nil { open = true }
            if !open { break }
            try? await Task.sleep(until: deadline, clock: .continuous)
        }
        // A decorated output (hex, names, times) ends its last line; raw bytes stay as they came.
        try? await io.output.write(state.withLock { $0.formatter.decorates ? $0.formatter.endLine() : [] })
        for link in links where link.droppedBytes > 0 {
            reporter.message("\(link.droppedBytes) received bytes dropped: the output was not read in time", link: link)
        }
        if let failure { throw CommandFailure(failure) }
        for link in links { if let reason = await link.closedReason { throw CommandFailure("\(link.name): \(reason)") } }
    }

    // MARK: Bridges

    /// Bridges a pseudo-terminal linked at `path` to the (one) link until Ctrl-C/SIGTERM or the link closes.
    func bridgePTY(path: String) async throws {
        let terminal: PseudoTerminal
        let port: FileDescriptorPort
        do {
            terminal = try PseudoTerminal(linkPath: path)
            port = try terminal.port()
        } catch { throw CommandFailure("\(error)") }
        defer { port.close(); terminal.close() }
        let link = links[0]
        reporter.message("serial port ready: \(path) → \(terminal.slavePath)", link: link)
        try await bridge(link: link, stop: { port.stop() }) { [self] in
            let fromDevice = Task {
                for await chunk in link.bytes where self.received(chunk, from: link) { try? await port.write(chunk) }
            }
            defer { fromDevice.cancel() }
            while let chunk = await port.read() {
                try await sendPatiently(chunk, to: link)
            }
            _ = self
        }
    }

    /// Bridges one TCP client at a time on `host:port` to the (one) link.
    func bridgeTCP(host: String, port number: UInt16) async throws {
        let listener: TCPListener
        do { listener = try TCPListener(host: host, port: number) } catch { throw CommandFailure("\(error)") }
        defer { listener.close() }
        let link = links[0]
        reporter.message("listening on \(host):\(listener.port)", link: link)
        let client = CurrentClient()
        try await bridge(link: link, stop: { listener.stop(); client.port?.stop() }) { [self] in
            let fromDevice = Task {
                // Bytes that arrive with no client connected are dropped (as a serial line would).
                for await chunk in link.bytes where self.received(chunk, from: link) {
                    if let port = client.port { try? await port.write(chunk) }
                }
            }
            defer { fromDevice.cancel() }
            while let port = await listener.accept() {
                client.port = port
                reporter.message("TCP client connected", link: link)
                while let chunk = await port.read() { try await sendPatiently(chunk, to: link) }
                client.port = nil
                port.close()
                reporter.message("TCP client left; waiting for the next", link: link)
            }
            _ = self
        }
    }

    /// Runs `body` until it ends, a stop signal arrives, or the link closes; `stop` ends the
    /// blocking reads `body` may be waiting in.
    private func bridge(link: SerialLink, stop: @escaping @Sendable () -> Void, _ body: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask { try await body(); return nil }
            group.addTask { await StopSignal.install().wait(); return nil }
            group.addTask { await link.waitForClose() }
            let first = try await group.next() ?? nil
            stop()
            group.cancelAll()
            if let reason = first { throw CommandFailure("\(link.name): \(reason)") }
        }
    }
}

/// The TCP client being served, if any (bytes from the device go to it).
final class CurrentClient: Sendable {
    private let slot = Mutex<FileDescriptorPort?>(nil)
    var port: FileDescriptorPort? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
}
