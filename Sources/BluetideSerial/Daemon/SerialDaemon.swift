import Bluetide
import Foundation
import Synchronization

/// One device a ``SerialDaemon`` keeps connected, and the pseudo-terminal it gets.
public struct SerialDaemonDevice: Sendable, Equatable {
    /// An advertised name or an address (`AA:BB:…`, optionally `/P` or `/R`).
    public var target: String
    /// Where the pty's symlink goes (it stays there, across link losses, until the daemon stops).
    public var ptyPath: String
    /// Advertisements weaker than this (dBm) are not connected to; nil: any.
    public var minimumRSSI: Int?
    /// The link's options (profile or custom UUIDs, reconnect tries, outage buffer, …).
    public var options: SerialLinkOptions
    /// What each line end (LF, CRLF or a lone CR) written to the pty becomes on the way to the
    /// device (e.g. `[0x0D, 0x0A]`); nil: bytes pass unchanged.
    public var lineEnding: [UInt8]?

    /// A device entry; see each property.
    public init(
        target: String, ptyPath: String, minimumRSSI: Int? = nil, options: SerialLinkOptions = SerialLinkOptions(), lineEnding: [UInt8]? = nil
    ) {
        self.lineEnding = lineEnding
        self.target = target
        self.ptyPath = ptyPath
        self.minimumRSSI = minimumRSSI
        self.options = options
    }
}

/// What happens to one device of a ``SerialDaemon``.
public enum SerialDaemonEvent: Sendable, Equatable, CustomStringConvertible {
    /// The pty is in place; the daemon looks for the device.
    case ready(device: String, ptyPath: String, slavePath: String)
    /// The device was seen (with this RSSI) and is being connected.
    case found(device: String, rssi: Int)
    /// A link event (connected, link lost, reconnecting, gave up, …).
    case link(device: String, SerialStatus)
    /// The link is gone for good; the pty stays and the daemon looks for the device again.
    case waiting(device: String, reason: String)
    /// The pty could not be made; this device is left out.
    case failed(device: String, reason: String)

    /// The device the event is about.
    public var device: String {
        switch self {
        case let .ready(device, _, _), let .found(device, _), let .link(device, _), let .waiting(device, _), let .failed(device, _): device
        }
    }

    /// The event in words, after the device's name.
    public var description: String {
        switch self {
        case let .ready(_, path, slave): "serial port ready: \(path) → \(slave); looking for the device"
        case let .found(_, rssi): "seen at \(rssi) dBm, connecting"
        case let .link(_, status): "\(status)"
        case let .waiting(_, reason): "waiting for the device again (\(reason)); the serial port stays"
        case let .failed(_, reason): "left out: \(reason)"
        }
    }
}

/// Keeps known serial devices connected, each bridged to a pseudo-terminal of its own that stays
/// in place however often the link is lost: a program holding the port open never sees it
/// vanish. Each device is looked for (at its minimum RSSI), connected, reconnected by its
/// ``SerialLink`` while it can, and looked for again once the link gives up. What is written to
/// the pty while the link is down waits in the link's outage buffer (then, once the link has
/// given up, in the pty's own buffer, which stops the writer when full); bytes the device sends
/// while down are lost, as on any BLE link.
public actor SerialDaemon {
    /// The devices, in order.
    public nonisolated let devices: [SerialDaemonDevice]
    /// Per-device events, in order; ends when the daemon stops.
    public nonisolated let events: AsyncStream<SerialDaemonEvent>

    private let central: Central
    private let sink: AsyncStream<SerialDaemonEvent>.Continuation
    private var tasks: [Task<Void, Never>] = []
    private var terminals: [(PseudoTerminal, FileDescriptorPort)] = []
    private var stopped = false
    /// How long one search for a device lasts before it starts again.
    let searchWindow: Duration

    /// A daemon for `devices` on `central` (start it with ``start()``).
    public init(devices: [SerialDaemonDevice], central: Central, searchWindow: Duration = .seconds(10)) {
        self.devices = devices
        self.central = central
        self.searchWindow = searchWindow
        (events, sink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
    }

    /// Makes every device's pty and starts looking for the devices. A pty that cannot be made
    /// is reported (``SerialDaemonEvent/failed(device:reason:)``) and its device left out.
    public func start() {
        for device in devices {
            do {
                let terminal = try PseudoTerminal(linkPath: device.ptyPath)
                let port = try terminal.port()
                terminals.append((terminal, port))
                sink.yield(.ready(device: device.target, ptyPath: device.ptyPath, slavePath: terminal.slavePath))
                let keeper = DeviceKeeper(device: device, central: central, port: port, sink: sink, searchWindow: searchWindow)
                tasks.append(Task { await keeper.run() })
            } catch {
                sink.yield(.failed(device: device.target, reason: "\(error)"))
            }
        }
    }

    /// Closes every link, removes the ptys' symlinks and ends ``events``. Idempotent.
    public func stop() async {
        guard !stopped else { return }
        stopped = true
        for (_, port) in terminals { port.stop() }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        for (terminal, port) in terminals {
            port.close()
            terminal.close()
        }
        terminals = []
        sink.finish()
    }
}

/// One device's loop: find, connect, bridge, and again; the pty reader runs throughout.
private final class DeviceKeeper: Sendable {
    let device: SerialDaemonDevice
    let central: Central
    let port: FileDescriptorPort
    let sink: AsyncStream<SerialDaemonEvent>.Continuation
    let searchWindow: Duration
    private let current = CurrentLink()

    init(device: SerialDaemonDevice, central: Central, port: FileDescriptorPort, sink: AsyncStream<SerialDaemonEvent>.Continuation, searchWindow: Duration) {
        self.device = device
        self.central = central
        self.port = port
        self.sink = sink
        self.searchWindow = searchWindow
    }

    func run() async {
        let reader = Task { await pump() }
        defer { reader.cancel() }
        let name = device.target
        while !Task.isCancelled {
            guard let advertisement = await search() else { continue }
            sink.yield(.found(device: name, rssi: advertisement.rssi))
            let link: SerialLink
            do { link = try await SerialLink.connect(to: advertisement.address, name: name, on: central, options: device.options) } catch {
                if Task.isCancelled { break }
                sink.yield(.waiting(device: name, reason: "\(error)"))
                continue
            }
            current.set(link)
            let sink = sink, port = port
            let statuses = Task { for await status in link.status { sink.yield(.link(device: name, status)) } }
            let output = Task { for await chunk in link.bytes { try? await port.write(chunk) } }
            let reason = await withTaskCancellationHandler {
                await link.waitForClose()
            } onCancel: {
                Task { await link.close() }
            }
            current.set(nil)
            await link.close()
            output.cancel()
            await statuses.value
            if Task.isCancelled { break }
            sink.yield(.waiting(device: name, reason: reason ?? "closed"))
        }
    }

    /// Scans one window for the device at its minimum RSSI; nil when not seen.
    private func search() async -> Advertisement? {
        do {
            let found = try await SerialScanner(central: central).find(device.target, timeout: searchWindow, minimumRSSI: device.minimumRSSI)
            return found
        } catch {
            return nil
        }
    }

    /// Reads the pty for the daemon's whole life and hands each chunk to the current link,
    /// waiting for one (and through its outages) rather than dropping anything.
    private func pump() async {
        var converter = LineEndingConverter(ending: device.lineEnding)
        while let read = await port.read() {
            let chunk = converter.convert(read)
            if chunk.isEmpty { continue }
            while !Task.isCancelled {
                let link = await current.next()
                do {
                    try await link.send(chunk)
                    break
                } catch SerialLinkError.linkDown {
                    try? await link.waitForLink()
                } catch {
                    current.clear(link)
                }
            }
        }
    }
}

/// The link a device has now, and waiters for the next one.
private final class CurrentLink: Sendable {
    private struct State {
        var link: SerialLink?
        var waiters: [CheckedContinuation<SerialLink, Never>] = []
    }
    private let state = Mutex(State())

    func set(_ link: SerialLink?) {
        let waiters = state.withLock { s -> [CheckedContinuation<SerialLink, Never>] in
            s.link = link
            guard link != nil else { return [] }
            defer { s.waiters = [] }
            return s.waiters
        }
        if let link { for waiter in waiters { waiter.resume(returning: link) } }
    }

    func clear(_ link: SerialLink) {
        state.withLock { s in if s.link === link { s.link = nil } }
    }

    /// The current link, waiting for one when there is none.
    func next() async -> SerialLink {
        await withCheckedContinuation { continuation in
            let link = state.withLock { s -> SerialLink? in
                if let link = s.link { return link }
                s.waiters.append(continuation)
                return nil
            }
            if let link { continuation.resume(returning: link) }
        }
    }
}

/// Replaces each line end (LF, CRLF or a lone CR) with `ending`; the LF of a CRLF split across
/// two chunks is still one line end. Pure; nil `ending` passes bytes unchanged.
struct LineEndingConverter: Sendable {
    let ending: [UInt8]?
    private var afterCR = false

    init(ending: [UInt8]?) { self.ending = ending }

    mutating func convert(_ bytes: [UInt8]) -> [UInt8] {
        guard let ending else { return bytes }
        var out: [UInt8] = []
        for byte in bytes {
            if byte == 0x0A, afterCR { afterCR = false; continue }  // the LF of a CRLF already ended the line
            afterCR = byte == 0x0D
            if byte == 0x0D || byte == 0x0A { out += ending } else { out.append(byte) }
        }
        return out
    }
}
