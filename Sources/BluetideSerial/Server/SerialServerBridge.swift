import Foundation

/// What a ``SerialServerBridge`` reports besides the data it carries, in the order it happens:
/// for traffic logs (`--log`) and status lines.
public enum SerialServerBridgeEvent: Sendable {
    /// `bytes` were queued for the subscribed centrals.
    case sent([UInt8])
    /// A central wrote `chunk` (reported whether or not the permission lets it be delivered).
    case received(SerialServerChunk)
    /// A status message: a port ready, listening, a TCP client come or gone, bytes dropped.
    case notice(SerialBridgeNotice)
}

/// Carries bytes between a ``SerialServer`` (the centrals that write to it and read its
/// notifications) and the user's side: a pipe, a pseudo-terminal, a TCP port or any
/// ``SerialEndpoint`` — what ``SerialBridge`` does for links to devices, on the server's side
/// (`bluetide uart serve`). The same endpoints, notices and permission as ``SerialBridge``.
/// `events` sees every chunk sent and received and each notice, synchronously and in order (it
/// must not block: log, print, or hand on).
public final class SerialServerBridge: Sendable {
    /// The server bridged.
    public let server: SerialServer
    /// Which way data may go.
    public let permission: SerialPermission
    private let events: @Sendable (SerialServerBridgeEvent) -> Void

    /// A bridge over `server` (started).
    public init(server: SerialServer, permission: SerialPermission = .rw, events: @escaping @Sendable (SerialServerBridgeEvent) -> Void = { _ in }) {
        self.server = server
        self.permission = permission
        self.events = events
    }

    /// Queues `bytes` for the subscribed centrals (reported as sent), unless the permission
    /// forbids sending. Throws ``SerialServerError/closed`` once the server is closed.
    public func send(_ bytes: [UInt8]) async throws {
        guard permission.sends else { return }
        try await server.send(bytes)
        events(.sent(bytes))
    }

    /// Hands what the centrals write to `deliver`, as the permission allows, until the server
    /// closes or the task is cancelled; `heard` is called for every chunk, delivered or not.
    private func receive(heard: @escaping @Sendable () -> Void = {}, _ deliver: @escaping @Sendable (SerialServerChunk) async -> Void) async {
        for await chunk in server.received {
            heard()
            events(.received(chunk))
            guard permission.receives else { continue }
            await deliver(chunk)
        }
    }

    /// Input to the centrals, what they write to `output`. Ends once the input has ended, every
    /// byte was notified, and no central wrote for `idleTimeout` on `clock`; or early when
    /// sending fails (the server closed) or the task is cancelled (the input is stopped).
    public func pipe<C: Clock>(
        input: some SerialEndpoint, idleTimeout: Duration, clock: C, output: @escaping @Sendable (SerialServerChunk) async -> Void
    ) async where C.Duration == Duration {
        let lastReceived = Latest(clock.now)
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [self] in await receive(heard: { lastReceived.set(clock.now) }, output) }
                defer { group.cancelAll() }
                while let chunk = await input.nextBytes() {
                    do { try await send(chunk) } catch { return }
                }
                // Everything read goes out once a central has taken it; then wait for writes to stop.
                do { try await server.drain() } catch { return }
                lastReceived.set(clock.now)
                while true {
                    let deadline = lastReceived.value.advanced(by: idleTimeout)
                    if clock.now >= deadline { break }
                    do { try await clock.sleep(until: deadline, tolerance: nil) } catch { break }
                }
                if server.droppedBytes > 0 { events(.notice(.receivedBytesDropped(server.droppedBytes))) }
            }
        } onCancel: {
            input.stop()
        }
    }

    /// Carries bytes between `endpoint` and the centrals until the endpoint ends, sending fails
    /// (the server closed), or the calling task is cancelled.
    public func serve(_ endpoint: some SerialEndpoint) async {
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [self] in await receive { chunk in try? await endpoint.deliver(chunk.bytes) } }
                defer { group.cancelAll() }
                while let chunk = await endpoint.nextBytes() {
                    do { try await send(chunk) } catch { return }
                }
            }
        } onCancel: {
            endpoint.stop()
        }
    }

    /// Makes a pseudo-terminal with a symlink at `path` (for minicom, screen, pyserial) and
    /// bridges it to the centrals, as ``serve(_:)``; reports ``SerialBridgeNotice/portReady(linkPath:devicePath:)``
    /// once it can be opened. The symlink and terminal are removed at the end.
    public func bridgePseudoTerminal(at path: String) async throws {
        let (terminal, port) = try PseudoTerminal.bridgeEnd(at: path)
        defer { port.close(); terminal.close() }
        events(.notice(.portReady(linkPath: path, devicePath: terminal.slavePath)))
        await serve(port)
    }

    /// Listens on `host:port` (0: any free port, reported in ``SerialBridgeNotice/listening(host:port:)``)
    /// and bridges one TCP client at a time to the centrals until the calling task is cancelled.
    /// What centrals write while no client is connected is dropped, as a serial line would.
    public func bridgeTCP(host: String, port number: UInt16) async throws {
        let listener: TCPListener
        do { listener = try TCPListener(host: host, port: number) } catch { throw SerialBridgeError.port("\(error)") }
        defer { listener.close() }
        events(.notice(.listening(host: host, port: listener.port)))
        let client = CurrentClient()
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [self] in
                    await receive { chunk in if let port = client.port { try? await port.write(chunk.bytes) } }
                }
                defer { group.cancelAll() }
                while let port = await listener.accept() {
                    client.port = port
                    events(.notice(.clientConnected))
                    while let chunk = await port.read() {
                        do { try await send(chunk) } catch { break }
                    }
                    client.port = nil
                    port.close()
                    events(.notice(.clientLeft))
                }
            }
        } onCancel: {
            listener.stop()
            client.port?.stop()
        }
    }
}
