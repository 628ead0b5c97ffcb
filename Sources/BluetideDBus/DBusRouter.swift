import Synchronization

/// Where incoming messages go (on the loop thread, from libdbus's filter): signals to the
/// subscriptions whose rules match, method calls to exported objects. One lock over the
/// subscriptions and exports; streams are fed outside it.
final class DBusRouter: Sendable {
    typealias Handler = @Sendable (DBusMessage) async throws -> [DBusValue]

    private struct Export {
        let handler: Handler
        weak var connection: DBusConnection?
    }

    private struct State {
        var subscriptions: [Int: (rule: DBusMatchRule, continuation: AsyncStream<DBusMessage>.Continuation)] = [:]
        var nextID = 0
        var exports: [String: Export] = [:]
        var closeReason: String?
        var finished = false
    }

    private let state = Mutex(State())
    private let loop: DBusEventLoop

    init(loop: DBusEventLoop) { self.loop = loop }

    /// Adds a subscription; its id removes it.
    func add(_ rule: DBusMatchRule, _ continuation: AsyncStream<DBusMessage>.Continuation) -> Int {
        let finished = state.withLock { $0.finished }
        if finished { continuation.finish() }
        return state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            if !state.finished { state.subscriptions[id] = (rule, continuation) }
            return id
        }
    }

    /// Removes a subscription; false when it was gone already.
    @discardableResult
    func remove(_ id: Int) -> Bool {
        state.withLock { $0.subscriptions.removeValue(forKey: id) != nil }
    }

    func export(path: String, handler: @escaping Handler, connection: DBusConnection) {
        state.withLock { $0.exports[path] = Export(handler: handler, connection: connection) }
    }

    func unexport(path: String) {
        _ = state.withLock { $0.exports.removeValue(forKey: path) }
    }

    var closeReason: String? { state.withLock { $0.closeReason } }

    /// Ends every subscription (the connection is over).
    func finish(reason: String) {
        let continuations = state.withLock { state in
            if state.closeReason == nil { state.closeReason = reason }
            state.finished = true
            let all = state.subscriptions.values.map(\.continuation)
            state.subscriptions.removeAll()
            state.exports.removeAll()
            return all
        }
        for continuation in continuations { continuation.finish() }
    }

    /// Routes one message; true when it was handled here.
    func route(_ raw: OpaquePointer) -> Bool {
        guard let library = try? DBusLibrary.shared.get() else { return false }
        let type = library.messageGetType(raw)
        if type == DBusMessage.Kind.signal.rawValue {
            let message = library.decode(raw)
            if message.interface == "org.freedesktop.DBus.Local", message.member == "Disconnected" {
                state.withLock { if $0.closeReason == nil { $0.closeReason = "the D-Bus bus closed the connection" } }
                loop.requestStop()
                return true
            }
            let targets = state.withLock { state in
                state.subscriptions.values.filter { $0.rule.matches(message) }.map(\.continuation)
            }
            for continuation in targets { continuation.yield(message) }
            return false
        }
        if type == DBusMessage.Kind.methodCall.rawValue {
            guard let path = library.messageGetPath(raw).map({ String(cString: $0) }) else { return false }
            let export: Export? = state.withLock { state in
                var candidate = path
                while true {
                    if let found = state.exports[candidate] { return found }
                    guard let slash = candidate.lastIndex(of: "/"), candidate != "/" else { return nil }
                    candidate = slash == candidate.startIndex ? "/" : String(candidate[..<slash])
                }
            }
            guard let export, let connection = export.connection else { return false }
            let message = library.decode(raw)
            let held = RawPointer(raw)
            library.messageRef(raw)
            let handler = export.handler
            Task {
                let result: Result<[DBusValue], any Error>
                do { result = .success(try await handler(message)) } catch { result = .failure(error) }
                connection.answer(held, with: result)
            }
            return true
        }
        return false
    }
}
