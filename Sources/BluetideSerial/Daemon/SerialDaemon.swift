#if canImport(Glibc)
import Glibc
#endif
import Bluetide
import Foundation
import Synchronization

/// Where a ``SerialDaemon`` device's bytes go: a pseudo-terminal or a TCP port, either made at
/// start and kept in place until the daemon stops.
public enum SerialDaemonPort: Sendable, Equatable, CustomStringConvertible {
    /// A pseudo-terminal with a symlink at this absolute path.
    case pty(String)
    /// A TCP port serving one client at a time (IPv4 `host`; port 0 picks a free one).
    case tcp(host: String, port: UInt16)

    /// `/tmp/ttyRobot1` or `127.0.0.1:7001`.
    public var description: String {
        switch self {
        case let .pty(path): path
        case let .tcp(host, port): "\(host):\(port)"
        }
    }
}

/// One device a ``SerialDaemon`` keeps connected, and the pseudo-terminal or TCP port it gets.
public struct SerialDaemonDevice: Sendable, Equatable {
    /// An advertised name or an address (`AA:BB:…`, optionally `/P` or `/R`).
    public var target: String
    /// Where the device's bytes go (it stays there, across link losses, until the daemon stops).
    public var port: SerialDaemonPort
    /// Advertisements weaker than this (dBm) are not connected to; nil: any.
    public var minimumRSSI: Int?
    /// The link's options (profile or custom UUIDs, reconnect tries, outage buffer, …).
    public var options: SerialLinkOptions
    /// What each line end (LF, CRLF or a lone CR) written to the port becomes on the way to the
    /// device (e.g. `[0x0D, 0x0A]`); nil: bytes pass unchanged.
    public var lineEnding: [UInt8]?

    /// The pty's symlink path; nil for a TCP port.
    public var ptyPath: String? {
        if case let .pty(path) = port { path } else { nil }
    }

    /// A device entry; see each property.
    public init(
        target: String, port: SerialDaemonPort, minimumRSSI: Int? = nil, options: SerialLinkOptions = SerialLinkOptions(), lineEnding: [UInt8]? = nil
    ) {
        self.lineEnding = lineEnding
        self.target = target
        self.port = port
        self.minimumRSSI = minimumRSSI
        self.options = options
    }

    /// A device entry on a pty linked at `ptyPath`; see each property.
    public init(
        target: String, ptyPath: String, minimumRSSI: Int? = nil, options: SerialLinkOptions = SerialLinkOptions(), lineEnding: [UInt8]? = nil
    ) {
        self.init(target: target, port: .pty(ptyPath), minimumRSSI: minimumRSSI, options: options, lineEnding: lineEnding)
    }
}

/// What happens to one device of a ``SerialDaemon``.
public enum SerialDaemonEvent: Sendable, Equatable, CustomStringConvertible {
    /// The pty is in place; the daemon looks for the device.
    case ready(device: String, ptyPath: String, slavePath: String)
    /// The TCP port listens (`port`: the one bound, also when 0 was asked for); the daemon looks
    /// for the device.
    case listening(device: String, host: String, port: UInt16)
    /// A TCP client connected to the device's port (`peer`: its address and port).
    case clientConnected(device: String, peer: String)
    /// The TCP client left; the port waits for the next one.
    case clientLeft(device: String, peer: String)
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
        case let .ready(device, _, _), let .listening(device, _, _), let .clientConnected(device, _), let .clientLeft(device, _),
             let .found(device, _), let .link(device, _), let .waiting(device, _), let .failed(device, _): device
        }
    }

    /// The event in words, after the device's name.
    public var description: String {
        switch self {
        case let .ready(_, path, slave): "serial port ready: \(path) → \(slave); looking for the device"
        case let .listening(_, host, port): "serial port ready: TCP \(host):\(port); looking for the device"
        case let .clientConnected(_, peer): "TCP client \(peer) connected"
        case let .clientLeft(_, peer): "TCP client \(peer) left; waiting for the next"
        case let .found(_, rssi): "seen at \(rssi) dBm, connecting"
        case let .link(_, status): "\(status)"
        case let .waiting(_, reason): "waiting for the device again (\(reason)); the serial port stays"
        case let .failed(_, reason): "left out: \(reason)"
        }
    }
}

/// Keeps known serial devices connected, each bridged to a pseudo-terminal or a TCP port of its
/// own that stays in place however often the link is lost: a program holding the port open (or
/// connected to the TCP port) never sees it vanish. Each device is looked for (at its minimum RSSI), connected, reconnected by its
/// ``SerialLink`` while it can, and looked for again once the link gives up. What is written to
/// the pty while the link is down waits in the link's outage buffer (then, once the link has
/// given up, in the pty's or the socket's own buffer, which stops the writer when full); bytes the
/// device sends while down are lost, as on any BLE link, and so are bytes it sends while no TCP
/// client is connected.
public actor SerialDaemon {
    /// The devices, in order.
    public nonisolated let devices: [SerialDaemonDevice]
    /// Per-device events, in order; ends when the daemon stops.
    public nonisolated let events: AsyncStream<SerialDaemonEvent>

    private let central: Central
    private let sink: AsyncStream<SerialDaemonEvent>.Continuation
    private var tasks: [Task<Void, Never>] = []
    private var endpoints: [Endpoint] = []
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

    /// Makes every device's pty or TCP port and starts looking for the devices. A port that
    /// cannot be made is reported (``SerialDaemonEvent/failed(device:reason:)``) and its device
    /// left out.
    public func start() {
        for device in devices {
            do {
                let endpoint: Endpoint
                switch device.port {
                case let .pty(path):
                    let terminal = try PseudoTerminal(linkPath: path)
                    endpoint = .terminal(terminal, try terminal.port())
                    sink.yield(.ready(device: device.target, ptyPath: path, slavePath: terminal.slavePath))
                case let .tcp(host, number):
                    let listener = try TCPListener(host: host, port: number)
                    endpoint = .tcp(listener, ClientSlot())
                    sink.yield(.listening(device: device.target, host: host, port: listener.port))
                }
                endpoints.append(endpoint)
                let keeper = DeviceKeeper(device: device, central: central, endpoint: endpoint, sink: sink, searchWindow: searchWindow)
                tasks.append(Task { await keeper.run() })
            } catch {
                sink.yield(.failed(device: device.target, reason: "\(error)"))
            }
        }
    }

    /// Closes every link, removes the ptys' symlinks, closes the TCP ports (and their clients)
    /// and ends ``events``. Idempotent.
    public func stop() async {
        guard !stopped else { return }
        stopped = true
        for endpoint in endpoints { endpoint.stop() }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        for endpoint in endpoints { endpoint.close() }
        endpoints = []
        sink.finish()
    }
}

/// A device's pty or TCP port as its keeper uses it.
private enum Endpoint: Sendable {
    case terminal(PseudoTerminal, FileDescriptorPort)
    case tcp(TCPListener, ClientSlot)

    /// Hands bytes from the device to the pty, or to the TCP client (dropped when there is none).
    func write(_ chunk: [UInt8]) async {
        switch self {
        case let .terminal(_, port): try? await port.write(chunk)
        case let .tcp(_, slot): if let client = slot.port { try? await client.write(chunk) }
        }
    }

    /// Ends the waits on the port (a pending read, accept or client read).
    func stop() {
        switch self {
        case let .terminal(_, port): port.stop()
        case let .tcp(listener, slot): listener.stop(); slot.stop()
        }
    }

    /// Closes the port: the pty and its symlink, or the listener and the client.
    func close() {
        switch self {
        case let .terminal(terminal, port): port.close(); terminal.close()
        case let .tcp(listener, slot): slot.stop(); listener.close()
        }
    }
}

/// The TCP client a device's port serves, if any. It owns the client's socket: whoever takes
/// the client out (the reader when it leaves, or ``stop()``) shuts it down and closes it, once.
private final class ClientSlot: Sendable {
    private struct State {
        var port: FileDescriptorPort?
        var stopped = false
    }
    private let state = Mutex(State())

    /// The client now, if any.
    var port: FileDescriptorPort? { state.withLock { $0.port } }

    /// Makes `client` the current one; false (and the client closed) once stopped.
    func serve(_ client: FileDescriptorPort) -> Bool {
        let accepted = state.withLock { s -> Bool in
            guard !s.stopped else { return false }
            s.port = client
            return true
        }
        if !accepted { Self.end(client) }
        return accepted
    }

    /// Ends `client` if it is still the current one.
    func release(_ client: FileDescriptorPort) {
        let taken = state.withLock { s -> Bool in
            guard s.port === client else { return false }
            s.port = nil
            return true
        }
        if taken { Self.end(client) }
    }

    /// Ends the current client and refuses later ones.
    func stop() {
        let client = state.withLock { s -> FileDescriptorPort? in
            s.stopped = true
            defer { s.port = nil }
            return s.port
        }
        if let client { Self.end(client) }
    }

    /// Shutting the socket down first ends a write blocked on a client that stopped reading.
    private static func end(_ client: FileDescriptorPort) {
        shutdown(client.input, Int32(SHUT_RDWR))
        client.close()
    }
}

/// One device's loop: find, connect, bridge, and again; the pty or TCP reader runs throughout.
private final class DeviceKeeper: Sendable {
    let device: SerialDaemonDevice
    let central: Central
    let endpoint: Endpoint
    let sink: AsyncStream<SerialDaemonEvent>.Continuation
    let searchWindow: Duration
    private let current = CurrentLink()

    init(device: SerialDaemonDevice, central: Central, endpoint: Endpoint, sink: AsyncStream<SerialDaemonEvent>.Continuation, searchWindow: Duration) {
        self.device = device
        self.central = central
        self.endpoint = endpoint
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
            let sink = sink, endpoint = endpoint
            let statuses = Task { for await status in link.status { sink.yield(.link(device: name, status)) } }
            let output = Task { for await chunk in link.bytes { await endpoint.write(chunk) } }
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

    /// Reads the pty (or each TCP client in turn) for the daemon's whole life and hands each
    /// chunk to the current link, waiting for one (and through its outages) rather than
    /// dropping anything.
    private func pump() async {
        switch endpoint {
        case let .terminal(_, port):
            var converter = LineEndingConverter(ending: device.lineEnding)
            while let read = await port.read() { await deliver(converter.convert(read)) }
        case let .tcp(listener, slot):
            while let client = await listener.accept() {
                guard slot.serve(client) else { return }
                let peer = Self.peerName(client.input)
                sink.yield(.clientConnected(device: device.target, peer: peer))
                var converter = LineEndingConverter(ending: device.lineEnding)
                while let read = await client.read() { await deliver(converter.convert(read)) }
                slot.release(client)
                sink.yield(.clientLeft(device: device.target, peer: peer))
            }
        }
    }

    /// Sends `chunk` on the current link, waiting for one and through its outages.
    private func deliver(_ chunk: [UInt8]) async {
        if chunk.isEmpty { return }
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

    /// `127.0.0.1:54321` for a connected IPv4 socket; `?` when it cannot be told.
    private static func peerName(_ socket: Int32) -> String {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let got = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(socket, $0, &length) }
        }
        guard got == 0 else { return "?" }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count)) != nil else { return "?" }
        return "\(String(cString: text)):\(UInt16(bigEndian: address.sin_port))"
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
