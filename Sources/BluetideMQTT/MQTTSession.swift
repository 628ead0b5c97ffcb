import BluetideSupport
import Foundation
import Synchronization

/// One client's session with its broker (a reference with a lock, not a pure value, hence not
/// "Core"): the state libmosquitto's callbacks and the client's callers share, behind one lock: whether
/// the link is up, which messages await their acknowledgement, who waits for what, and the
/// subscriptions to renew. The callbacks run on libmosquitto's network thread; they never call
/// back into the client's lock, so the two locks cannot deadlock.
final class MQTTSession: Sendable {
    enum Wait: Equatable, Sendable {
        case connected
        case acknowledged(Int32)
        case subscribed(Int32)
        case drained
        case disconnected
        /// At least this many messages wait in the outbox.
        case queued(Int)
    }

    private struct Waiter {
        let kind: Wait
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var connected = false
        var started = false
        var refusal: String?
        var lastConnectError: String?
        /// Message ids sent and not yet acknowledged.
        var inFlight: Set<Int32> = []
        /// Acknowledgements that came before `publish` returned the id.
        var earlyAcks: Set<Int32> = []
        var subscribed: [Int32: String?] = [:]
        var subscriptions: [String: MQTTQoS] = [:]
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0
        var finished = false
        /// QoS 1 messages kept while the broker is away, oldest first; sent in order on connect.
        var outbox: [MQTTMessage] = []
        var outboxStart = 0
        var draining = false
        var dropped = 0
        var outboxLimit = 10_000

        var outboxCount: Int { outbox.count - outboxStart }

        /// The outbox's copy on disk (``MQTTOptions/outboxFile``), nil without one.
        var file: MQTTOutboxFile?
        /// Ids of messages sent from the outbox while it has a copy on disk: once all are
        /// acknowledged and the outbox is empty, the copy is emptied.
        var fileMids: Set<Int32> = []

        /// Keeps `message` at the end of the outbox (and its file); returns a file failure, once.
        mutating func keep(_ message: MQTTMessage) -> String? {
            if outboxCount >= outboxLimit {
                outboxStart += 1
                dropped += 1
            }
            outbox.append(message)
            if outboxStart > 1024 && outboxStart * 2 > outbox.count {
                outbox.removeFirst(outboxStart)
                outboxStart = 0
            }
            guard var journal = file else { return nil }
            defer { file = journal }
            // Bounded on disk too: rewritten from the (bounded) outbox at twice its bound.
            if journal.records + 1 >= outboxLimit * 2 { return journal.rewrite(outbox[outboxStart...]) }
            return journal.append(message)
        }

        /// Empties the file once everything it held is acknowledged.
        mutating func clearFileIfDelivered() -> String? {
            guard var journal = file, journal.records > 0 || journal.failure != nil,
                  outboxCount == 0, !draining, fileMids.isEmpty else { return nil }
            defer { file = journal }
            return journal.clear()
        }

        mutating func takeFromOutbox() -> MQTTMessage? {
            guard outboxStart < outbox.count else {
                outbox.removeAll(keepingCapacity: true)
                outboxStart = 0
                return nil
            }
            defer { outboxStart += 1 }
            return outbox[outboxStart]
        }

        func outcome(_ kind: Wait) -> Result<Void, any Error>? {
            switch kind {
            case .connected:
                if connected { return .success(()) }
                if let refusal { return .failure(MQTTError(refusal)) }
                return nil
            case let .acknowledged(mid): return inFlight.contains(mid) ? nil : .success(())
            case let .subscribed(mid):
                guard let answer = subscribed[mid] else { return nil }
                if let refused = answer { return .failure(MQTTError(refused)) }
                return .success(())
            case .drained: return inFlight.isEmpty && outboxCount == 0 ? .success(()) : nil
            case .disconnected: return connected ? nil : .success(())
            case let .queued(count): return outboxCount >= count ? .success(()) : nil
            }
        }

        /// Removes and returns the waiters whose wait is over, with their outcome.
        mutating func ready() -> [(CheckedContinuation<Void, any Error>, Result<Void, any Error>)] {
            var done: [(CheckedContinuation<Void, any Error>, Result<Void, any Error>)] = []
            for (id, waiter) in waiters {
                if let outcome = outcome(waiter.kind) {
                    done.append((waiter.continuation, outcome))
                    waiters[id] = nil
                }
            }
            return done
        }
    }

    private let state = Mutex(State())
    let library: MosquittoLibrary
    let endpoint: String
    private let events: AsyncStream<MQTTEvent>.Continuation
    private let messages: AsyncStream<MQTTMessage>.Continuation

    init(library: MosquittoLibrary, endpoint: String, events: AsyncStream<MQTTEvent>.Continuation,
         messages: AsyncStream<MQTTMessage>.Continuation) {
        self.library = library
        self.endpoint = endpoint
        self.events = events
        self.messages = messages
    }

    var isConnected: Bool { state.withLock { $0.connected } }
    var isStarted: Bool { state.withLock { $0.started } }
    func noteStarted() { state.withLock { $0.started = true } }
    var lastConnectError: String? { state.withLock { $0.lastConnectError } }
    var unacknowledgedCount: Int { state.withLock { $0.inFlight.count + $0.outboxCount } }
    var droppedCount: Int { state.withLock { $0.dropped } }

    func setOutboxLimit(_ limit: Int) { state.withLock { $0.outboxLimit = max(1, limit) } }

    /// Keeps the outbox in `path` too, and queues the messages a previous process left there
    /// (oldest first; beyond the bound the oldest are dropped and counted). Call before `start`.
    func setOutboxFile(_ path: String) throws(MQTTError) {
        let (file, kept) = try MQTTOutboxFile.open(path: path)
        state.withLock { state in
            state.file = nil
            for message in kept { _ = state.keep(message) }
            state.file = file
            if kept.count > state.outboxLimit { _ = state.file?.rewrite(state.outbox[state.outboxStart...]) }
        }
    }

    /// Why the outbox file stopped being written, nil while it works.
    var outboxFileProblem: String? { state.withLock { $0.file?.failure } }

    /// Reports a file failure once (as an event).
    private func report(_ failure: String?) {
        if let failure { events.yield(.outboxFileFailed(failure)) }
    }

    /// Whether a QoS 1 message goes to the outbox instead of libmosquitto: while the broker is
    /// away and while the outbox is being sent, so messages keep their order.
    func keepIfOffline(_ message: MQTTMessage) -> Bool {
        var kept = false
        var failure: String?
        var count = 0
        update { state in
            guard !state.connected || state.draining || state.outboxCount > 0 else { return }
            kept = true
            failure = state.keep(message)
            count = state.outboxCount
        }
        report(failure)
        reportQueued(count)
        return kept
    }

    /// Says that the outbox holds `count` messages when that is a power of two.
    private func reportQueued(_ count: Int) {
        if count > 0, count & (count - 1) == 0 { events.yield(.queued(count)) }
    }

    /// A QoS 1 message libmosquitto refused because the link just went down: kept.
    func keepRefused(_ message: MQTTMessage) {
        var failure: String?
        var count = 0
        update { state in
            failure = state.keep(message)
            count = state.outboxCount
        }
        report(failure)
        reportQueued(count)
    }

    /// Sends the outbox in order through `mosq` (from the connect callback); stops if the link drops.
    private func drain(_ mosq: OpaquePointer?) {
        while true {
            let next: MQTTMessage? = state.withLock { state in
                guard state.connected, let message = state.takeFromOutbox() else {
                    state.draining = false
                    return nil
                }
                return message
            }
            guard let message = next else { break }
            var mid: Int32 = 0
            let code = message.payload.withUnsafeBytes {
                library.publish(mosq, &mid, message.topic, Int32($0.count), $0.baseAddress, message.qos.rawValue, message.retain)
            }
            if code == 0 {
                sent(mid)
                state.withLock { state in if state.file != nil { state.fileMids.insert(mid) } }
            } else {
                state.withLock { state in
                    // Put it back in front and wait for the next connect.
                    state.outboxStart = max(0, state.outboxStart - 1)
                    if state.outboxStart < state.outbox.count { state.outbox[state.outboxStart] = message }
                    state.draining = false
                }
                break
            }
        }
        var failure: String?
        update { failure = $0.clearFileIfDelivered() }
        report(failure)
    }

    private func update(_ body: (inout State) -> Void) {
        let ready = state.withLock { state in
            body(&state)
            return state.ready()
        }
        for (continuation, outcome) in ready { continuation.resume(with: outcome) }
    }

    func noteConnectError(_ text: String) { state.withLock { $0.lastConnectError = text } }

    func remember(_ filter: String, qos: MQTTQoS) { state.withLock { $0.subscriptions[filter] = qos } }

    /// `publish` returned `mid`: it is in flight unless its acknowledgement already came.
    func sent(_ mid: Int32) {
        state.withLock { state in
            if state.earlyAcks.remove(mid) == nil { state.inFlight.insert(mid) }
        }
    }

    /// Waits until `kind` holds, at most `timeout`; cancellable.
    func wait(for kind: Wait, timeout: Duration, onTimeout: @escaping @Sendable () -> MQTTError) async throws {
        try await withTimeLimit(timeout, onTimeout: onTimeout) { [self] in
            let id = state.withLock { state in
                state.nextWaiter += 1
                return state.nextWaiter
            }
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let immediate: Result<Void, any Error>? = state.withLock { state in
                        if let outcome = state.outcome(kind) { return outcome }
                        if state.finished { return .failure(MQTTError("the MQTT client is closed")) }
                        if Task.isCancelled { return .failure(CancellationError()) }
                        state.waiters[id] = Waiter(kind: kind, continuation: continuation)
                        return nil
                    }
                    if let immediate { continuation.resume(with: immediate) }
                }
            } onCancel: {
                let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.continuation.resume(throwing: CancellationError())
            }
        }
    }

    /// Ends the streams and fails every waiter (the client is closed).
    func finish() {
        let waiters = state.withLock { state in
            state.finished = true
            state.file?.close()
            state.file = nil
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: MQTTError("the MQTT client is closed")) }
        events.finish()
        messages.finish()
    }

    // MARK: callbacks (libmosquitto's network thread)

    fileprivate func didConnect(_ code: Int32, mosq: OpaquePointer?) {
        guard code == 0 else {
            let reason = library.describeRefusal(code)
            let hint = (code == 4 || code == 5) ? " (check the username and password; see docs/gateway.md)" : ""
            update { state in
                state.connected = false
                state.refusal = "the MQTT broker at \(endpoint) refused the connection: \(reason)\(hint)"
            }
            events.yield(.refused(reason))
            return
        }
        var renew: [(String, MQTTQoS)] = []
        update { state in
            state.connected = true
            state.draining = state.outboxCount > 0
            state.refusal = nil
            state.lastConnectError = nil
            renew = state.subscriptions.map { ($0.key, $0.value) }
        }
        for (filter, qos) in renew.sorted(by: { $0.0 < $1.0 }) {
            _ = library.subscribe(mosq, nil, filter, qos.rawValue)
        }
        drain(mosq)
        events.yield(.connected)
    }

    fileprivate func didDisconnect(_ code: Int32) {
        let wasConnected = state.withLock { $0.connected }
        update { $0.connected = false }
        if code != 0 {
            let reason = library.describe(code)
            noteConnectError(reason)
            if wasConnected { events.yield(.disconnected(reason)) }
        }
    }

    fileprivate func didPublish(_ mid: Int32) {
        var failure: String?
        update { state in
            if state.inFlight.remove(mid) == nil { state.earlyAcks.insert(mid) }
            if state.fileMids.remove(mid) != nil { failure = state.clearFileIfDelivered() }
        }
        report(failure)
    }

    fileprivate func didSubscribe(_ mid: Int32, granted: [Int32]) {
        update { state in
            state.subscribed[mid] = granted.contains(0x80) ? "the broker refused the subscription (not allowed for this user?)" : .some(nil)
            if state.subscribed.count > 256 { state.subscribed.removeAll() }
        }
    }

    fileprivate func didReceive(_ message: MQTTMessage) { messages.yield(message) }
}

private func core(_ object: UnsafeMutableRawPointer?) -> MQTTSession? {
    object.map { Unmanaged<MQTTSession>.fromOpaque($0).takeUnretainedValue() }
}

func mqttOnConnect(_ mosq: OpaquePointer?, _ object: UnsafeMutableRawPointer?, _ code: Int32) {
    core(object)?.didConnect(code, mosq: mosq)
}

func mqttOnDisconnect(_ mosq: OpaquePointer?, _ object: UnsafeMutableRawPointer?, _ code: Int32) {
    core(object)?.didDisconnect(code)
}

func mqttOnPublish(_ mosq: OpaquePointer?, _ object: UnsafeMutableRawPointer?, _ mid: Int32) {
    core(object)?.didPublish(mid)
}

func mqttOnSubscribe(_ mosq: OpaquePointer?, _ object: UnsafeMutableRawPointer?, _ mid: Int32, _ count: Int32, _ granted: UnsafePointer<Int32>?) {
    let values = granted.map { Array(UnsafeBufferPointer(start: $0, count: Int(max(0, count)))) } ?? []
    core(object)?.didSubscribe(mid, granted: values)
}

/// Reads `struct mosquitto_message { int mid; char *topic; void *payload; int payloadlen; int qos; bool retain; }`
/// field by field at its C offsets.
func mqttOnMessage(_ mosq: OpaquePointer?, _ object: UnsafeMutableRawPointer?, _ message: UnsafeRawPointer?) {
    guard let message, let core = core(object) else { return }
    let pointerSize = MemoryLayout<UnsafeRawPointer>.size
    let topicOffset = pointerSize  // after `int mid`, aligned to a pointer
    let payloadOffset = topicOffset + pointerSize
    let lengthOffset = payloadOffset + pointerSize
    let qosOffset = lengthOffset + 4
    let retainOffset = qosOffset + 4
    guard let topic = message.load(fromByteOffset: topicOffset, as: UnsafePointer<CChar>?.self) else { return }
    let payload = message.load(fromByteOffset: payloadOffset, as: UnsafeRawPointer?.self)
    let length = Int(max(0, message.load(fromByteOffset: lengthOffset, as: Int32.self)))
    let qos = message.load(fromByteOffset: qosOffset, as: Int32.self)
    let retain = message.load(fromByteOffset: retainOffset, as: Bool.self)
    let bytes = payload.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
    core.didReceive(MQTTMessage(topic: String(cString: topic), payload: bytes, qos: qos == 0 ? .atMostOnce : .atLeastOnce, retain: retain))
}
