import Bluetide
import Foundation
import Synchronization

/// Which way data may go through a bridge, as ble-serial's `--permit` has it.
public enum SerialPermission: String, Sendable, CaseIterable {
    /// Both ways.
    case rw
    /// Only receive: input is not sent to the device(s).
    case ro
    /// Only send: bytes received from the device(s) are not delivered.
    case wo

    /// Whether input is sent to the device(s).
    public var sends: Bool { self != .ro }
    /// Whether received bytes are delivered (shown, written to the port).
    public var receives: Bool { self != .wo }
}

/// Something a bridge carries bytes between a link and: a pseudo-terminal, a TCP client, a pipe,
/// or anything else a caller adapts (an MQTT topic pair, a test double).
public protocol SerialEndpoint: Sendable {
    /// The next bytes for the device, waiting until some come; nil once the endpoint has ended
    /// (or ``stop()`` was called).
    func nextBytes() async -> [UInt8]?
    /// Hands bytes received from the device to the endpoint.
    func deliver(_ bytes: [UInt8]) async throws
    /// Ends a wait in ``nextBytes()`` (the bridge is stopping). Must not block.
    func stop()
}

extension FileDescriptorPort: SerialEndpoint {
    /// Reads what is there (up to 4 KB), waiting for it; nil at end of file or once stopped.
    public func nextBytes() async -> [UInt8]? { await read() }
    /// Writes all of `bytes`.
    public func deliver(_ bytes: [UInt8]) async throws { try await write(bytes) }
}

/// What a bridge reports besides the data it carries, in the order it happens: for traffic
/// logs (`--log`) and status lines.
public enum SerialBridgeEvent: Sendable {
    /// `bytes` were taken by `link` for writing.
    case sent([UInt8], link: SerialLink)
    /// `bytes` came from `link` (reported whether or not the permission lets them be delivered).
    case received([UInt8], link: SerialLink)
    /// Something about `link`'s bridge a user wants to know; its description is a status line.
    case notice(SerialBridgeNotice, link: SerialLink)
}

/// A bridge's status messages. Descriptions are the text `bluetide uart` prints after the device's name.
public enum SerialBridgeNotice: Sendable, Equatable, CustomStringConvertible {
    /// The link refused bytes (down past its outage bound, or closed); they were dropped for it.
    case refused(String)
    /// A pseudo-terminal is ready: `linkPath` is the symlink made to its device `devicePath`.
    case portReady(linkPath: String, devicePath: String)
    /// The TCP bridge listens on `host:port` (the port the system gave when 0 was asked for).
    case listening(host: String, port: UInt16)
    /// A TCP client connected (it is served until it leaves).
    case clientConnected
    /// The TCP client left; the next is waited for.
    case clientLeft
    /// Bytes the link received but dropped because they were not read in time.
    case receivedBytesDropped(Int)

    public var description: String {
        switch self {
        case let .refused(why): why
        case let .portReady(linkPath, devicePath): "serial port ready: \(linkPath) → \(devicePath)"
        case let .listening(host, port): "listening on \(host):\(port)"
        case .clientConnected: "TCP client connected"
        case .clientLeft: "TCP client left; waiting for the next"
        case let .receivedBytesDropped(count): "\(count) received bytes dropped: the output was not read in time"
        }
    }
}

/// Why a bridge stopped with a failure.
public enum SerialBridgeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bridge was made with no link.
    case noLink
    /// `device`'s link closed for good (it gave up reconnecting, or was closed) with `reason`.
    case linkClosed(device: String, reason: String)
    /// Sending to `device` failed with `reason` (the link closed while input was pending).
    case sendFailed(device: String, reason: String)
    /// The pseudo-terminal or TCP port could not be made: `reason`.
    case port(String)

    public var description: String {
        switch self {
        case .noLink: "no device to bridge: connect at least one link"
        case let .linkClosed(device, reason), let .sendFailed(device, reason): "\(device): \(reason)"
        case let .port(reason): reason
        }
    }
}

/// Carries bytes between open serial links and the user's side: a pipe (standard input and
/// output), a pseudo-terminal, a TCP port, or any ``SerialEndpoint``.
///
/// Input goes to the selected link, or to every link with `broadcast`. While a link is down the
/// bridges hold their input and send it once the link is back (``sendPatiently(_:to:endingWrite:)``;
/// the link itself holds up to its `outageBufferLimit` of bytes already taken, see
/// ``SerialLinkOptions``); a link that gives up ends the bridge with ``SerialBridgeError/linkClosed(device:reason:)``.
/// `events` sees every chunk sent and received and each status message, synchronously and in
/// order (it must not block: log, print, or hand on).
public final class SerialBridge: Sendable {
    /// The links bridged (the first is the selected one at start; pty and TCP bridges use it).
    public let links: [SerialLink]
    /// Whether input goes to every link (else to the selected one).
    public let broadcast: Bool
    /// Which way data may go.
    public let permission: SerialPermission
    private let events: @Sendable (SerialBridgeEvent) -> Void
    private let selected = Mutex(0)

    /// A bridge over `links` (at least one, all open).
    public init(
        links: [SerialLink], broadcast: Bool = false, permission: SerialPermission = .rw,
        events: @escaping @Sendable (SerialBridgeEvent) -> Void = { _ in }
    ) {
        self.links = links
        self.broadcast = broadcast
        self.permission = permission
        self.events = events
    }

    // MARK: Selection

    /// The link input goes to without `broadcast`; nil when there is no link.
    public var selectedLink: SerialLink? {
        let index = selected.withLock { $0 }
        return links.indices.contains(index) ? links[index] : nil
    }

    /// Selects the next link for input (round the list).
    public func selectNext() {
        guard !links.isEmpty else { return }
        selected.withLock { $0 = ($0 + 1) % links.count }
    }

    /// The links input goes to: all with `broadcast`, else the selected one.
    public var targets: [SerialLink] {
        broadcast ? links : selectedLink.map { [$0] } ?? []
    }

    // MARK: Sending and receiving

    /// Sends `bytes` to the targets now; a refusal (a link down past its outage bound, or closed)
    /// is reported as a ``SerialBridgeNotice/refused(_:)`` and the bytes dropped for that link.
    /// Returns false when a link is closed. Nothing is sent without send permission.
    @discardableResult
    public func send(_ bytes: [UInt8], endingWrite: Bool = false) async -> Bool {
        guard permission.sends else { return true }
        var open = true
        for link in targets {
            do {
                try await link.send(bytes, endingWrite: endingWrite)
                events(.sent(bytes, link: link))
            } catch {
                if case SerialLinkError.closed = error { open = false }
                events(.notice(.refused("\(error)"), link: link))
            }
        }
        return open
    }

    /// Sends `bytes` to `link`, waiting out an outage rather than refusing (bridges hold their
    /// input instead of dropping it). Throws when the link gives up or closes.
    public func sendPatiently(_ bytes: [UInt8], to link: SerialLink, endingWrite: Bool = false) async throws {
        guard permission.sends else { return }
        while true {
            do {
                try await link.send(bytes, endingWrite: endingWrite)
                events(.sent(bytes, link: link))
                return
            } catch SerialLinkError.linkDown {
                try await link.waitForLink()
            }
        }
    }

    /// Hands every link's received bytes to `deliver` in arrival order (per link), as the
    /// permission allows; returns when every link has closed, or when cancelled.
    public func receive(_ deliver: @escaping @Sendable (SerialLink, [UInt8]) async -> Void) async {
        await receive(from: links, deliver)
    }

    private func receive(from links: [SerialLink], _ deliver: @escaping @Sendable (SerialLink, [UInt8]) async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            for link in links {
                group.addTask { [self] in
                    for await chunk in link.bytes where received(chunk, from: link) { await deliver(link, chunk) }
                }
            }
        }
    }

    /// Reports a received chunk; whether the permission lets it be delivered.
    private func received(_ chunk: [UInt8], from link: SerialLink) -> Bool {
        events(.received(chunk, link: link))
        return permission.receives
    }

    /// Drains every target link's queued bytes (each waits for its link to be up).
    public func drainTargets() async {
        for link in targets { try? await link.drain() }
    }

    // MARK: Pipe

    /// Input to the device(s), received bytes to `output`; ends when the input has ended,
    /// everything was sent, and nothing came back for `idleTimeout` on `clock` (or when every
    /// link closed). With an `ending`, each input line is one write with its end converted, so AT
    /// commands piped in at once reach the device one by one rather than merged into full-size writes.
    /// Throws when sending failed or a link closed for good (after the idle wait; `output` has
    /// had everything received).
    public func pipe<C: Clock>(
        input: some SerialEndpoint, ending: LineEnding?, idleTimeout: Duration, clock: C,
        output: @escaping @Sendable (SerialLink, [UInt8]) async -> Void
    ) async throws where C.Duration == Duration {
        guard !links.isEmpty else { throw SerialBridgeError.noLink }
        let lastReceived = Latest(clock.now)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                await receive { link, chunk in
                    lastReceived.set(clock.now)
                    await output(link, chunk)
                }
            }
            // When every link has closed for good, stop waiting for input.
            group.addTask { [links] in
                for link in links { guard await link.waitForClose() != nil else { return } }
                input.stop()
            }
            defer { group.cancelAll() }
            let failure = await sendInput(input, ending: ending)
            // A link that is down when input ends is waited for: back (then drained), or given up
            // (within its outage limit), which ends the pipe with a failure below.
            for link in links { try? await link.waitForLink() }
            await drainTargets()
            lastReceived.set(clock.now)
            // Wait for replies to stop: sleep until the idle deadline, later if bytes came meanwhile.
            while true {
                let deadline = lastReceived.value.advanced(by: idleTimeout)
                if clock.now >= deadline { break }
                var open = false
                for link in links where await link.closedReason == nil { open = true }
                if !open { break }
                try? await clock.sleep(until: deadline, tolerance: nil)
            }
            for link in links where link.droppedBytes > 0 {
                events(.notice(.receivedBytesDropped(link.droppedBytes), link: link))
            }
            if let failure { throw failure }
            for link in links { if let reason = await link.closedReason { throw SerialBridgeError.linkClosed(device: link.name, reason: reason) } }
        }
    }

    /// Sends the input until it ends; the failure that stopped it early, if any.
    private func sendInput(_ input: some SerialEndpoint, ending: LineEnding?) async -> SerialBridgeError? {
        var pendingCR = false
        var lines = LineWrites()
        while true {
            let chunk = await input.nextBytes()
            // Pieces to send: the chunk as it came, or with an ending its whole lines (an unfinished
            // one waits for its end, or for the end of input).
            let pieces: [(bytes: [UInt8], endsWrite: Bool)]
            if let ending {
                guard let chunk else {
                    for line in lines.flush().map({ [$0] }) ?? [] {
                        for link in targets { try? await sendPatiently(line, to: link, endingWrite: true) }
                    }
                    return nil
                }
                pieces = lines.feed(ending.lineWrites(chunk, pendingCR: &pendingCR)).map { ($0, true) }
            } else {
                guard let chunk else { return nil }
                pieces = [(chunk, false)]
            }
            for piece in pieces {
                for link in targets {
                    do { try await sendPatiently(piece.bytes, to: link, endingWrite: piece.endsWrite) } catch {
                        return .sendFailed(device: link.name, reason: "\(error)")
                    }
                }
            }
        }
    }

    // MARK: Bridges

    /// Carries bytes between `endpoint` and the first link until the endpoint ends, the link
    /// closes (throws ``SerialBridgeError/linkClosed(device:reason:)``), or the calling task is
    /// cancelled (then it returns). Input waits out outages.
    public func serve(_ endpoint: some SerialEndpoint) async throws {
        guard let link = links.first else { throw SerialBridgeError.noLink }
        try await run(link: link, stop: { endpoint.stop() }) { [self] in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await self.receive(from: [link]) { _, chunk in try? await endpoint.deliver(chunk) }
                }
                defer { group.cancelAll() }
                while let chunk = await endpoint.nextBytes() { try await sendPatiently(chunk, to: link) }
            }
        }
    }

    /// Makes a pseudo-terminal with a symlink at `path` (for minicom, screen, pyserial) and
    /// bridges it to the first link, as ``serve(_:)``; reports ``SerialBridgeNotice/portReady(linkPath:devicePath:)``
    /// once it can be opened. The symlink and terminal are removed at the end.
    public func bridgePseudoTerminal(at path: String) async throws {
        guard let link = links.first else { throw SerialBridgeError.noLink }
        let (terminal, port) = try PseudoTerminal.bridgeEnd(at: path)
        defer { port.close(); terminal.close() }
        events(.notice(.portReady(linkPath: path, devicePath: terminal.slavePath), link: link))
        try await serve(port)
    }

    /// Listens on `host:port` (0: any free port, reported in ``SerialBridgeNotice/listening(host:port:)``)
    /// and bridges one TCP client at a time to the first link until the link closes or the
    /// calling task is cancelled. Bytes that arrive with no client connected are dropped, as a
    /// serial line would.
    public func bridgeTCP(host: String, port number: UInt16) async throws {
        guard let link = links.first else { throw SerialBridgeError.noLink }
        let listener: TCPListener
        do { listener = try TCPListener(host: host, port: number) } catch { throw SerialBridgeError.port("\(error)") }
        defer { listener.close() }
        events(.notice(.listening(host: host, port: listener.port), link: link))
        let client = CurrentClient()
        try await run(link: link, stop: { listener.stop(); client.port?.stop() }) { [self] in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await self.receive(from: [link]) { _, chunk in
                        if let port = client.port { try? await port.write(chunk) }
                    }
                }
                defer { group.cancelAll() }
                while let port = await listener.accept() {
                    client.port = port
                    events(.notice(.clientConnected, link: link))
                    while let chunk = await port.read() { try await sendPatiently(chunk, to: link) }
                    client.port = nil
                    port.close()
                    events(.notice(.clientLeft, link: link))
                }
            }
        }
    }

    /// Runs `body` until it ends, the task is cancelled, or `link` closes; `stop` ends the
    /// blocking reads `body` may be waiting in.
    private func run(link: SerialLink, stop: @escaping @Sendable () -> Void, _ body: @escaping @Sendable () async throws -> Void) async throws {
        try await withTaskCancellationHandler {
            try await withThrowingTaskGroup(of: String?.self) { group in
                group.addTask { try await body(); return nil }
                group.addTask { await link.waitForClose() }
                let first = try await group.next() ?? nil
                stop()
                group.cancelAll()
                if let reason = first { throw SerialBridgeError.linkClosed(device: link.name, reason: reason) }
            }
        } onCancel: {
            stop()
        }
    }
}

extension PseudoTerminal {
    /// A pseudo-terminal with a symlink at `path` and its master side as a port, for a bridge;
    /// a failure is ``SerialBridgeError/port(_:)`` (nothing is left open then).
    static func bridgeEnd(at path: String) throws -> (PseudoTerminal, FileDescriptorPort) {
        do {
            let terminal = try PseudoTerminal(linkPath: path)
            do { return (terminal, try terminal.port()) } catch { terminal.close(); throw error }
        } catch { throw SerialBridgeError.port("\(error)") }
    }
}

/// The latest of some value, shared between tasks.
final class Latest<Value: Sendable>: Sendable {
    private let slot: Mutex<Value>
    init(_ value: Value) { slot = Mutex(value) }
    var value: Value { slot.withLock { $0 } }
    func set(_ value: Value) { slot.withLock { $0 = value } }
}

/// The TCP client being served, if any (bytes from the device go to it): shared between the
/// task that accepts clients and the one that forwards received bytes.
public final class CurrentClient: Sendable {
    private let slot = Mutex<FileDescriptorPort?>(nil)
    /// No client yet.
    public init() {}
    /// The client's connection; nil between clients.
    public var port: FileDescriptorPort? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
}
