import Bluetide
import BluetideSerial
import BluetideGateway
import Foundation
import Synchronization

/// `bluetide uart`'s presentation around a ``SerialBridge``: received bytes formatted for the
/// terminal or pipe (or as JSON records), status lines, the `--log`, and the interactive
/// terminal (UARTInteractive.swift). The bridging itself (pipe, pty, TCP, waiting out outages)
/// is the library's.
final class UARTRunner: Sendable {
    let bridge: SerialBridge
    let io: UARTConsole
    let reporter: UARTStatusReporter
    let json: Bool
    private let formatter: Mutex<UARTOutputFormatter>

    init(
        links: [SerialLink], io: UARTConsole, reporter: UARTStatusReporter, formatter: UARTOutputFormatter, json: Bool, broadcast: Bool,
        permit: UARTPermission = .rw, log: UARTTrafficLog? = nil, publisher: AppPublisher? = nil
    ) {
        self.bridge = SerialBridge(links: links, broadcast: broadcast, permission: permit) { event in
            switch event {
            case let .sent(bytes, link):
                log?.record(.sent, device: link.name, address: link.address, bytes: bytes)
                publisher?.publish(Self.record("uart-sent", bytes, link: link, reporter: reporter), type: "uart-sent")
            case let .received(bytes, link):
                log?.record(.received, device: link.name, address: link.address, bytes: bytes)
                publisher?.publish(Self.record("uart-received", bytes, link: link, reporter: reporter), type: "uart-received")
            case let .notice(notice, link): reporter.message("\(notice)", link: link)
            }
        }
        self.io = io
        self.reporter = reporter
        self.json = json
        self.formatter = Mutex(formatter)
    }

    var links: [SerialLink] { bridge.links }

    /// A chunk that crossed the link as `uart --mqtt` publishes it: `device`, `value` (`hex`, and
    /// the text as `summary`), `time`.
    static func record(_ type: String, _ bytes: [UInt8], link: SerialLink, reporter: UARTStatusReporter) -> String {
        reporter.line(type, [
            "device": UARTStatusReporter.device(link),
            "value": ["hex": .string(bytes.map { String(format: "%02x", $0) }.joined()), "summary": .string(String(decoding: bytes, as: UTF8.self))],
        ])
    }

    // MARK: Received bytes

    /// Copies every link's received bytes to the console's output, formatted, in arrival order;
    /// returns when every link has closed.
    func printReceived() async {
        await bridge.receive { [self] link, chunk in await show(chunk, from: link) }
    }

    /// Writes a received chunk: formatted text, or with --json a `received` record (`device`,
    /// `value.hex`, `text` as UTF-8 with invalid bytes replaced, `time`).
    private func show(_ chunk: [UInt8], from link: SerialLink) async {
        let bytes: [UInt8] = formatter.withLock { formatter in
            if json {
                let record = reporter.line("received", [
                    "device": UARTStatusReporter.device(link), "value": JSONOutput.value(chunk),
                    "text": .string(String(decoding: chunk, as: UTF8.self)),
                ])
                return Array((record + "\n").utf8)
            }
            return formatter.format(chunk, from: link.name, at: Date())
        }
        await io.writeData(bytes)
    }

    /// The links input goes to: all with --broadcast, else the selected one.
    var targets: [SerialLink] { bridge.targets }

    /// Sends `bytes` to the targets; a refusal (link down past the outage bound) is reported
    /// and the bytes dropped for that device. Returns false when a link is closed.
    @discardableResult
    func send(_ bytes: [UInt8], endingWrite: Bool = false) async -> Bool {
        await bridge.send(bytes, endingWrite: endingWrite)
    }

    /// Whether received bytes are shown as hex now.
    var hexEnabled: Bool { formatter.withLock { $0.hex } }
    /// Switches hex display on or off.
    func toggleHex() { formatter.withLock { $0.hex.toggle() } }
    /// The link input goes to (without --broadcast).
    var selectedLink: SerialLink { bridge.selectedLink ?? links[0] }
    /// Selects the next link for input.
    func selectNext() { bridge.selectNext() }
    /// Bytes that end an unfinished output line.
    func endLine() -> [UInt8] { formatter.withLock { $0.endLine() } }

    // MARK: Pipe

    /// Stdin to the device(s), received bytes to stdout (see ``SerialBridge/pipe(input:ending:idleTimeout:clock:output:)``).
    func pipe(ending: LineEnding?, idleTimeout: Double) async throws {
        var failure: (any Error)?
        do {
            try await bridge.pipe(
                input: io.input, ending: ending, idleTimeout: .milliseconds(Int64(idleTimeout * 1000)), clock: ContinuousClock()
            ) { [self] link, chunk in await show(chunk, from: link) }
        } catch { failure = error }
        // A decorated output (hex, names, times) ends its last line; raw bytes stay as they came.
        try? await io.output.write(formatter.withLock { $0.decorates ? $0.endLine() : [] })
        if let failure { throw CommandFailure("\(failure)") }
    }

    // MARK: Bridges

    /// Bridges a pseudo-terminal linked at `path` to the (one) link until Ctrl-C/SIGTERM or the link closes.
    func bridgePTY(path: String) async throws {
        try await untilStopSignal { [bridge] in try await bridge.bridgePseudoTerminal(at: path) }
    }

    /// Bridges one TCP client at a time on `host:port` to the (one) link until Ctrl-C/SIGTERM or the link closes.
    func bridgeTCP(host: String, port number: UInt16) async throws {
        try await untilStopSignal { [bridge] in try await bridge.bridgeTCP(host: host, port: number) }
    }

    /// Runs `body` until it ends or a stop signal comes (then cancels it); its failure as a command failure.
    private func untilStopSignal(_ body: @escaping @Sendable () async throws -> Void) async throws {
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await body() }
                group.addTask { _ = await StopSignal.install().wait() }
                try await group.next()
                group.cancelAll()
            }
        } catch { throw CommandFailure("\(error)") }
    }
}
