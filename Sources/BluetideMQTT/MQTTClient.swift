import BluetideSupport
import Foundation
import Synchronization

/// What happened to the client's link to the broker.
public enum MQTTEvent: Sendable, Equatable {
    /// Connected (or reconnected); subscriptions are renewed.
    case connected
    /// The broker answered but refused us: the reason in words (`not authorised`, …).
    case refused(String)
    /// The link was lost; libmosquitto reconnects with back-off.
    case disconnected(String)
    /// The outbox file could not be written (a full disk, …): one line, said once; queued
    /// messages are kept in memory only from then on.
    case outboxFileFailed(String)
    /// The outbox (QoS 1 messages kept while the broker is away) now holds this many messages:
    /// said when the count reaches 1, 2, 4, 8, … (each power of two), so a log shows it growing
    /// without a line per message.
    case queued(Int)
}

/// An MQTT client on libmosquitto (loaded at run time, see ``MQTTClient/libraryProblem``): one
/// broker connection, run by libmosquitto's own network thread (`mosquitto_loop_start`), which
/// also reconnects with exponential back-off. Messages queued at QoS 1 while the broker is away
/// are sent once it is back. Subscriptions are remembered and renewed on every reconnect.
///
/// All state the callbacks touch lives in one ``MQTTSession`` behind one lock; waits have
/// time limits and are cancellable. `events` and `messages` each have one reader.
public final class MQTTClient: Sendable {
    public let options: MQTTOptions
    /// Connection changes, newest kept when nobody reads them (at most 64).
    public let events: AsyncStream<MQTTEvent>
    /// Messages received on the subscriptions, at most ``MQTTOptions/receiveBufferLimit`` waiting.
    public let messages: AsyncStream<MQTTMessage>

    private let core: MQTTSession
    private let library: MosquittoLibrary
    /// The libmosquitto client; nil once closed. Calls into the library happen under this lock
    /// (never taken by the library's callbacks), so none can race with `mosquitto_destroy`.
    private let handle: Mutex<MosquittoHandle?>
    /// Retries a first connection that failed (see `retryFirstConnection`); cancelled on close.
    private let retrying = Mutex<Task<Void, Never>?>(nil)

    /// Nil when libmosquitto can be used; else one line naming the Debian package to install.
    public static var libraryProblem: String? {
        if case let .failure(error) = MosquittoLibrary.shared { return error.message }
        return nil
    }

    /// Makes the client (not yet connected). Throws when libmosquitto is missing or refuses the options.
    public init(_ options: MQTTOptions) throws(MQTTError) {
        let library = try MosquittoLibrary.shared.get()
        self.options = options
        self.library = library
        let (events, eventInput) = AsyncStream.makeStream(of: MQTTEvent.self, bufferingPolicy: .bufferingNewest(64))
        let (messages, messageInput) = AsyncStream.makeStream(
            of: MQTTMessage.self, bufferingPolicy: .bufferingOldest(max(1, options.receiveBufferLimit)))
        self.events = events
        self.messages = messages
        let core = MQTTSession(library: library, endpoint: options.endpoint, events: eventInput, messages: messageInput)
        self.core = core
        core.setOutboxLimit(options.outboxLimit)
        if let path = options.outboxFile { try core.setOutboxFile(path) }
        guard let pointer = options.clientID.withCString({ library.new($0, true, Unmanaged.passUnretained(core).toOpaque()) }) else {
            throw MQTTError("could not create an MQTT client (out of memory, or client id \"\(options.clientID)\" refused)")
        }
        let raw = MosquittoHandle(pointer: pointer)
        handle = Mutex(raw)
        do {
            try configure(raw)
        } catch {
            library.destroy(pointer)
            handle.withLock { $0 = nil }
            throw error
        }
    }

    private func configure(_ raw: MosquittoHandle) throws(MQTTError) {
        let mosq = raw.pointer
        _ = library.intOption(mosq, 1, 4)  // MOSQ_OPT_PROTOCOL_VERSION = MQTT 3.1.1
        library.connectCallbackSet(mosq, mqttOnConnect)
        library.disconnectCallbackSet(mosq, mqttOnDisconnect)
        library.publishCallbackSet(mosq, mqttOnPublish)
        library.subscribeCallbackSet(mosq, mqttOnSubscribe)
        library.messageCallbackSet(mosq, mqttOnMessage)
        _ = library.reconnectDelaySet(
            mosq, UInt32(max(1, options.reconnectDelaySeconds.first)),
            UInt32(max(options.reconnectDelaySeconds.first, options.reconnectDelaySeconds.longest)), true)
        if options.username != nil || options.password != nil {
            let code = library.usernamePasswordSet(mosq, options.username, options.password)
            guard code == 0 else { throw MQTTError("username/password refused by libmosquitto: \(library.describe(code))") }
        }
        if let will = options.will {
            let code = will.payload.withUnsafeBytes {
                library.willSet(mosq, will.topic, Int32(will.payload.count), $0.baseAddress, will.qos.rawValue, will.retain)
            }
            guard code == 0 else { throw MQTTError("last will on \(will.topic) refused: \(library.describe(code))") }
        }
        if options.useTLS {
            let capath = options.caFile == nil ? "/etc/ssl/certs" : nil
            if let caFile = options.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
                throw MQTTError("CA file \(caFile) cannot be read; expected a PEM file of the broker's CA")
            }
            let code = library.tlsSet(mosq, options.caFile, capath, nil, nil, nil)
            guard code == 0 else { throw MQTTError("TLS set-up refused (CA file \(options.caFile ?? capath ?? "")): \(library.describe(code))") }
        }
    }

    /// Whether ``start()`` succeeded: libmosquitto's thread runs and keeps trying to connect.
    public var isStarted: Bool { core.isStarted }

    /// Starts connecting in the background (libmosquitto's thread); reconnects on its own after.
    public func start() throws(MQTTError) {
        var firstAttemptFailed = false
        let result: Int32? = handle.withLock { raw in
            guard let raw else { return nil }
            let code = library.connectAsync(raw.pointer, options.host, Int32(options.port), Int32(options.keepAliveSeconds))
            firstAttemptFailed = code != 0
            if code != 0 { core.noteConnectError(library.describe(code) + (code == 14 ? ": " + String(cString: strerror(errno)) : "")) }
            // Lookup and argument errors are final; a refused or unreachable broker is retried by the loop.
            if code == 3 || code == 15 || code == 20 { return code }
            let started = library.loopStart(raw.pointer)
            return started == 0 ? 0 : started
        }
        guard let result else { throw MQTTError("the MQTT client is closed") }
        guard result == 0 else { throw MQTTError("cannot connect to \(options.endpoint): \(library.describe(result))") }
        core.noteStarted()
        if firstAttemptFailed { retryFirstConnection() }
    }

    /// libmosquitto's thread reconnects a link that was up once, but not a first connection that
    /// failed (a broker not running yet): that one is tried again here, with the same back-off,
    /// until it goes through; from then on the thread carries on by itself.
    private func retryFirstConnection() {
        let library = library
        let delays = options.reconnectDelaySeconds
        let task = Task { [weak self] in
            var delay = max(1, delays.first)
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(delay))
                guard let self, !Task.isCancelled, !self.core.isConnected else { return }
                let code: Int32? = self.handle.withLock { raw in raw.map { library.reconnectAsync($0.pointer) } }
                guard let code, code != 0 else { return }  // closed, or under way
                self.core.noteConnectError(library.describe(code) + (code == 14 ? ": " + String(cString: strerror(errno)) : ""))
                delay = min(delay * 2, max(delay, delays.longest))
            }
        }
        retrying.withLock { $0 = task }
    }

    /// Starts and waits until the broker accepts us. Throws one line when it refuses (bad
    /// credentials, …) or does not answer within `timeout`.
    public func connect(timeout: Duration = .seconds(10)) async throws {
        try start()
        try await waitUntilConnected(timeout: timeout)
    }

    /// Waits until connected (at once when already).
    public func waitUntilConnected(timeout: Duration) async throws {
        let core = self.core
        let endpoint = options.endpoint
        try await core.wait(for: .connected, timeout: timeout) {
            let last = core.lastConnectError.map { " (last error: \($0))" } ?? ""
            return MQTTError("no answer from the MQTT broker at \(endpoint) within \(timeout)\(last): is it running, and is the address right?")
        }
    }

    /// Waits until the link is down (at once when it is).
    public func waitUntilDisconnected(timeout: Duration) async throws {
        try await core.wait(for: .disconnected, timeout: timeout) { MQTTError("still connected after \(timeout)") }
    }

    /// Whether the broker link is up now.
    public var isConnected: Bool { core.isConnected }

    /// Waits until at least `count` messages wait in the outbox (the broker is away); throws at `timeout`.
    public func waitUntilQueued(atLeast count: Int, timeout: Duration) async throws {
        try await core.wait(for: .queued(count), timeout: timeout) { MQTTError("fewer than \(count) messages queued after \(timeout)") }
    }

    /// Queues `message` for sending and returns its message id (0 when it waits in the outbox).
    /// QoS 1 messages published while the broker is away wait in a bounded outbox
    /// (``MQTTOptions/outboxLimit``; when full the oldest are dropped and counted in
    /// ``droppedCount``) and are sent in order once it is back; QoS 0 ones throw when not connected.
    /// Never blocks on the network.
    @discardableResult
    public func publish(_ message: MQTTMessage) throws(MQTTError) -> Int32 {
        if message.qos == .atLeastOnce, core.keepIfOffline(message) { return 0 }
        var mid: Int32 = 0
        let code: Int32? = handle.withLock { raw in
            guard let raw else { return nil }
            return message.payload.withUnsafeBytes {
                library.publish(raw.pointer, &mid, message.topic, Int32($0.count), $0.baseAddress, message.qos.rawValue, message.retain)
            }
        }
        guard let code else { throw MQTTError("the MQTT client is closed") }
        if code == 4, message.qos == .atLeastOnce {  // MOSQ_ERR_NO_CONN: the link just went down
            core.keepRefused(message)
            return 0
        }
        guard code == 0 else { throw MQTTError("publishing on \(message.topic) failed: \(library.describe(code))") }
        core.sent(mid)
        return mid
    }

    /// Publishes and waits until the broker acknowledged it (QoS 1) or it was written (QoS 0).
    public func publishAndWait(_ message: MQTTMessage, timeout: Duration = .seconds(10)) async throws {
        let mid = try publish(message)
        let topic = message.topic
        try await core.wait(for: mid == 0 ? .drained : .acknowledged(mid), timeout: timeout) {
            MQTTError("the broker did not acknowledge the message on \(topic) within \(timeout)")
        }
    }

    /// Subscribes to `filter` (MQTT wildcards `+` and `#` allowed) and waits for the broker's
    /// answer when connected; the subscription is renewed on every reconnect.
    public func subscribe(_ filter: String, qos: MQTTQoS = .atLeastOnce, timeout: Duration = .seconds(10)) async throws {
        core.remember(filter, qos: qos)
        var mid: Int32 = 0
        let code: Int32? = handle.withLock { raw in
            guard let raw else { return nil }
            return library.subscribe(raw.pointer, &mid, filter, qos.rawValue)
        }
        guard let code else { throw MQTTError("the MQTT client is closed") }
        if code == 4 { return }  // not connected: sent on connect
        guard code == 0 else { throw MQTTError("subscribing to \(filter) failed: \(library.describe(code))") }
        try await core.wait(for: .subscribed(mid), timeout: timeout) {
            MQTTError("the broker did not answer the subscription to \(filter) within \(timeout)")
        }
    }

    /// Waits until every queued QoS 1 message is acknowledged; false at the time limit.
    public func flush(timeout: Duration) async -> Bool {
        do {
            try await core.wait(for: .drained, timeout: timeout) { MQTTError("messages still unacknowledged") }
            return true
        } catch {
            return false
        }
    }

    /// Messages sent but not yet acknowledged (QoS 1) or written (QoS 0), plus those waiting in the outbox.
    public var unacknowledgedCount: Int { core.unacknowledgedCount }

    /// Why the outbox file stopped being written (a full disk, …), nil while it works or without one.
    public var outboxFileFailure: String? { core.outboxFileProblem }

    /// QoS 1 messages dropped (oldest first) because the outbox was full while the broker was away.
    public var droppedCount: Int { core.droppedCount }

    /// Clean shutdown: waits up to `timeout` for queued QoS 1 messages, disconnects (so the
    /// broker does not publish the will), stops the network thread and frees the client.
    /// Publish a final state (e.g. `offline`) before calling this. Safe to call twice.
    public func close(timeout: Duration = .seconds(2)) async {
        if core.isConnected { _ = await flush(timeout: timeout) }
        let wasConnected = core.isConnected
        let disconnected: Bool? = handle.withLock { raw in
            guard let raw else { return nil }
            return library.disconnect(raw.pointer) == 0
        }
        retrying.withLock { $0?.cancel() }
        guard let disconnected else { return }
        var clean = false
        if disconnected && wasConnected {
            clean = (try? await core.wait(for: .disconnected, timeout: timeout) { MQTTError("no disconnect") }) != nil
        }
        handle.withLock { raw in
            guard let pointer = raw?.pointer else { return }
            // After a clean DISCONNECT the thread ends by itself; otherwise it may be sleeping in
            // its back-off or blocked on a socket, and is cancelled.
            _ = library.loopStop(pointer, !clean)
            library.destroy(pointer)
            raw = nil
        }
        core.finish()
    }

    /// Ends the connection without a DISCONNECT, as a crash or a lost network would, so the
    /// broker publishes the last will; the client is closed afterwards.
    public func drop() {
        retrying.withLock { $0?.cancel() }
        handle.withLock { raw in
            guard let pointer = raw?.pointer else { return }
            _ = library.loopStop(pointer, true)
            library.destroy(pointer)
            raw = nil
        }
        core.finish()
    }

    deinit {
        retrying.withLock { $0?.cancel() }
        if let raw = handle.withLock({ $0 }) {
            _ = library.loopStop(raw.pointer, true)
            library.destroy(raw.pointer)
        }
        core.finish()
    }
}

/// The libmosquitto client pointer. `@unchecked Sendable`: libmosquitto serialises access to a
/// client internally when its network thread runs (`mosquitto_loop_start`); Bluetide calls it
/// only under ``MQTTClient``'s lock, and destroys it after stopping that thread.
struct MosquittoHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
