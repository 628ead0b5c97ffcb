import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A connection to a D-Bus message bus on libdbus-1 (loaded at run time, see
/// ``DBusConnection/libraryProblem``): method calls as `async` functions with time limits,
/// signals as `AsyncStream`s.
///
/// One dedicated thread runs the connection: it sleeps in `poll(2)` on libdbus's watches (its
/// socket) and a wake-up descriptor, with libdbus's own timeouts (a call's time limit) as the
/// poll's timeout, and dispatches what arrives — no polling loop, no thread per call. Calls may
/// be made from any task; their replies resume them from that thread.
public final class DBusConnection: Sendable {
    /// Which bus to connect to.
    public enum Bus: Sendable, Equatable {
        /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`): BlueZ's.
        case system
        /// The session bus of the user (`DBUS_SESSION_BUS_ADDRESS`).
        case session
        /// A bus at a D-Bus address (`unix:path=/tmp/bus`), e.g. a test's private `dbus-daemon`.
        case address(String)
    }

    /// Nil when libdbus-1 can be used; else one line naming the Debian package to install.
    public static var libraryProblem: String? {
        if case let .failure(error) = DBusLibrary.shared { return error.message }
        return nil
    }

    /// The loaded libdbus's version (`1.14.10`), nil when it is missing.
    public static var libraryVersion: String? { try? DBusLibrary.shared.get().version }

    /// Our unique name on the bus (`:1.42`).
    public let uniqueName: String
    let library: DBusLibrary
    let loop: DBusEventLoop
    let router: DBusRouter
    /// The libdbus connection; nil once torn down. Sends into libdbus hold this lock (the loop
    /// thread's teardown takes it to drop the connection), so none can use a freed connection.
    let handle: Mutex<RawPointer?>
    private let pendingCalls = Mutex<[ObjectIdentifier: PendingReply]>([:])

    private init(library: DBusLibrary, connection: RawPointer, uniqueName: String, loop: DBusEventLoop, router: DBusRouter) {
        self.library = library
        self.uniqueName = uniqueName
        self.loop = loop
        self.router = router
        self.handle = Mutex(connection)
    }

    /// Connects to `bus` and registers on it (libdbus's authentication and `Hello`, at most
    /// about 25 s, libdbus's default). Throws when libdbus is missing or the bus cannot be
    /// reached, saying which.
    public static func open(_ bus: Bus) async throws(DBusError) -> DBusConnection {
        let library = try DBusLibrary.shared.get()
        let result: Result<DBusConnection, DBusError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                let connection: DBusConnection
                switch connect(library, bus) {
                case let .failure(error):
                    continuation.resume(returning: .failure(error))
                    return
                case let .success(made):
                    connection = made
                }
                continuation.resume(returning: .success(connection))
                connection.loop.run(connection: connection.handle.withLock { $0! }.pointer)
                connection.tearDown()
            }
            thread.name = "bluetide-dbus"
            thread.start()
        }
        return try result.get()
    }

    /// Connects on the calling thread (the connection's own, before its loop starts).
    private static func connect(_ library: DBusLibrary, _ bus: Bus) -> Result<DBusConnection, DBusError> {
        let error = UnsafeMutableRawPointer.allocate(byteCount: DBusLibrary.errorSize, alignment: 16)
        defer { error.deallocate() }
        library.errorInit(error)
        defer { library.errorFree(error) }
        let what: String
        let made: OpaquePointer?
        switch bus {
        case .system:
            what = "the D-Bus system bus"
            made = library.busGetPrivate(1, error)
        case .session:
            what = "the D-Bus session bus"
            made = library.busGetPrivate(0, error)
        case let .address(address):
            what = "the D-Bus bus at \(address)"
            made = library.connectionOpenPrivate(address, error)
            if let made, library.busRegister(made, error) == 0 {
                library.connectionClose(made)
                library.connectionUnref(made)
                let text = library.errorText(error)
                return .failure(DBusError("cannot register on \(what): \(text?.message ?? "no answer")", name: text?.name))
            }
        }
        guard let made else {
            let text = library.errorText(error)
            return .failure(DBusError("cannot connect to \(what): \(text?.message ?? "unknown error")", name: text?.name))
        }
        library.setExitOnDisconnect(made, 0)
        let unique = library.busGetUniqueName(made).map { String(cString: $0) } ?? ""
        let loop: DBusEventLoop
        do {
            loop = try DBusEventLoop(library: library)
        } catch {
            library.connectionClose(made)
            library.connectionUnref(made)
            return .failure(error)
        }
        let router = DBusRouter(loop: loop)
        let connection = DBusConnection(library: library, connection: RawPointer(made), uniqueName: unique, loop: loop, router: router)
        guard loop.install(on: made), library.addFilter(made, dbusFilter, Unmanaged.passUnretained(router).toOpaque(), nil) != 0 else {
            library.connectionClose(made)
            library.connectionUnref(made)
            return .failure(DBusError("cannot set up \(what) (out of memory)"))
        }
        return .success(connection)
    }

    /// Ends the connection: outstanding calls fail, signal streams finish. Returns once the
    /// connection's thread has let go of it. Idempotent.
    public func close() async {
        await loop.stop()
    }

    /// Waits until the connection has ended (``close()``, or the bus went away: see
    /// ``closeReason``).
    public func waitUntilClosed() async { await loop.waitUntilFinished() }

    /// Why the connection ended (the bus went away, ``close()``), nil while it is open.
    public var closeReason: String? { router.closeReason }

    /// Runs on the loop thread after its loop ends: fails what waits, drops the connection.
    private func tearDown() {
        router.finish(reason: router.closeReason ?? "the D-Bus connection was closed")
        let raw = handle.withLock { raw -> RawPointer? in
            let taken = raw
            raw = nil
            return taken
        }
        for call in pendingCalls.withLock({ calls in
            let all = Array(calls.values)
            calls.removeAll()
            return all
        }) {
            call.fail(DBusError("the D-Bus connection closed before the answer came"))
        }
        if let raw {
            library.connectionClose(raw.pointer)
            library.connectionUnref(raw.pointer)
        }
        loop.finished()
    }

    // MARK: Method calls

    /// Calls `member` of `interface` on the object at `path` of `destination` with `arguments`
    /// and returns the reply's values. Throws ``DBusError`` with the error's name when the peer
    /// answers with an error, with `org.freedesktop.DBus.Error.NoReply` when no answer comes
    /// within `timeout`, and `CancellationError` when the task is cancelled (the call is
    /// abandoned; a late reply is dropped).
    public func call(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws -> [DBusValue] {
        let message = try makeCall(destination: destination, path: path, interface: interface, member: member, arguments: arguments)
        defer { library.messageUnref(message) }
        let milliseconds = Int32(clamping: max(1, timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
        let reply = PendingReply(library: library)
        let id = ObjectIdentifier(reply)
        let sent: Bool = handle.withLock { raw in
            guard let raw else { return false }
            var pending: OpaquePointer?
            guard library.sendWithReply(raw.pointer, message, &pending, milliseconds) != 0, let pending else { return false }
            reply.pending = RawPointer(pending)
            // Listed before the lock is let go: the tear-down (which takes this lock first) then
            // finds it and fails it, so no call waits on a connection that is gone.
            pendingCalls.withLock { $0[id] = reply }
            return true
        }
        guard sent else { throw DBusError("the D-Bus connection is closed (\(closeReason ?? "closed")): cannot call \(interface).\(member)") }
        defer { _ = pendingCalls.withLock { $0.removeValue(forKey: id) } }
        let answer = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                reply.wait(continuation)
            }
        } onCancel: {
            reply.fail(CancellationError())
        }
        if answer.kind == .error {
            let text = answer.body.first?.string ?? "no message"
            throw DBusError("\(interface).\(member) on \(path) failed: \(text)", name: answer.errorName)
        }
        return answer.body
    }

    /// Sends a method call and does not wait for (nor want) a reply.
    public func send(destination: String, path: String, interface: String, member: String, arguments: [DBusValue] = []) throws {
        let message = try makeCall(destination: destination, path: path, interface: interface, member: member, arguments: arguments)
        defer { library.messageUnref(message) }
        try sendRaw(message, what: "\(interface).\(member)")
    }

    func sendRaw(_ message: OpaquePointer, what: String) throws(DBusError) {
        let sent: Bool = handle.withLock { raw in
            guard let raw else { return false }
            return library.send(raw.pointer, message, nil) != 0
        }
        guard sent else { throw DBusError("the D-Bus connection is closed: cannot send \(what)") }
    }

    private func makeCall(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue]
    ) throws(DBusError) -> OpaquePointer {
        guard DBusNames.isDottedName(destination) else { throw DBusError("\"\(destination)\" is not a D-Bus bus name") }
        guard DBusNames.isObjectPath(path) else { throw DBusError("\"\(path)\" is not a D-Bus object path") }
        guard DBusNames.isDottedName(interface) else { throw DBusError("\"\(interface)\" is not a D-Bus interface name") }
        guard DBusNames.isMember(member) else { throw DBusError("\"\(member)\" is not a D-Bus member name") }
        guard let message = library.messageNewMethodCall(destination, path, interface, member) else {
            throw DBusError("could not make a D-Bus message (out of memory)")
        }
        do {
            try library.append(arguments, to: message)
        } catch {
            library.messageUnref(message)
            throw error
        }
        return message
    }

    // MARK: Properties

    /// `org.freedesktop.DBus.Properties.Get`: one property's value (variant unwrapped).
    public func property(
        _ name: String, of interface: String, at path: String, destination: String, timeout: Duration = .seconds(25)
    ) async throws -> DBusValue {
        let reply = try await call(
            destination: destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
            arguments: [.string(interface), .string(name)], timeout: timeout)
        guard let value = reply.first else { throw DBusError("\(interface).\(name) on \(path): empty answer") }
        return value.unwrapped
    }

    /// `org.freedesktop.DBus.Properties.Set`.
    public func setProperty(
        _ name: String, of interface: String, at path: String, destination: String, to value: DBusValue,
        timeout: Duration = .seconds(25)
    ) async throws {
        _ = try await call(
            destination: destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "Set",
            arguments: [.string(interface), .string(name), .variant(value)], timeout: timeout)
    }

    // MARK: Signals

    /// The signals that match `rule`, from now on, until the stream is dropped or the connection
    /// ends. The bus is told (AddMatch) before this returns, so nothing sent after it is missed;
    /// at most `bufferLimit` signals wait for a slow reader (the oldest are kept).
    public func signals(_ rule: DBusMatchRule, bufferLimit: Int = 4096) async throws -> AsyncStream<DBusMessage> {
        let text = try rule.text()
        let (stream, continuation) = AsyncStream.makeStream(of: DBusMessage.self, bufferingPolicy: .bufferingOldest(max(1, bufferLimit)))
        let id = router.add(rule, continuation)
        do {
            _ = try await call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "AddMatch", arguments: [.string(text)], timeout: .seconds(10))
        } catch {
            router.remove(id)
            continuation.finish()
            throw error
        }
        continuation.onTermination = { [weak self] _ in
            guard let self, self.router.remove(id) else { return }
            try? self.send(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "RemoveMatch", arguments: [.string(text)])
        }
        return stream
    }

    /// Emits the signal `member` of `interface` from the object at `path` (e.g. an exported
    /// object's `PropertiesChanged`).
    public func emit(path: String, interface: String, member: String, arguments: [DBusValue] = []) throws {
        guard DBusNames.isObjectPath(path) else { throw DBusError("\"\(path)\" is not a D-Bus object path") }
        guard DBusNames.isDottedName(interface) else { throw DBusError("\"\(interface)\" is not a D-Bus interface name") }
        guard DBusNames.isMember(member) else { throw DBusError("\"\(member)\" is not a D-Bus member name") }
        guard let message = library.messageNewSignal(path, interface, member) else {
            throw DBusError("could not make a D-Bus message (out of memory)")
        }
        defer { library.messageUnref(message) }
        try library.append(arguments, to: message)
        try sendRaw(message, what: "signal \(interface).\(member)")
    }

    // MARK: Serving method calls

    /// Answers method calls to objects at or below `path` (an exported object: a BlueZ agent, a
    /// GATT application): `handler` gets each call and returns the reply's values or throws a
    /// ``DBusError`` whose name becomes the error reply's (default
    /// `org.freedesktop.DBus.Error.Failed`). Calls are answered in their own tasks.
    public func export(path: String, handler: @escaping @Sendable (DBusMessage) async throws -> [DBusValue]) throws(DBusError) {
        guard DBusNames.isObjectPath(path) else { throw DBusError("\"\(path)\" is not a D-Bus object path") }
        router.export(path: path, handler: handler, connection: self)
    }

    /// Stops answering calls to `path`.
    public func unexport(path: String) { router.unexport(path: path) }

    /// Sends the answer to the call held in `call` (a referenced libdbus message).
    func answer(_ call: RawPointer, with result: Result<[DBusValue], any Error>) {
        defer { library.messageUnref(call.pointer) }
        guard library.messageGetNoReply(call.pointer) == 0 else { return }
        var reply: OpaquePointer?
        switch result {
        case let .success(values):
            reply = library.messageNewMethodReturn(call.pointer)
            if let made = reply {
                do { try library.append(values, to: made) } catch {
                    library.messageUnref(made)
                    reply = library.messageNewError(call.pointer, "org.freedesktop.DBus.Error.Failed", "bad reply: \(error.message)")
                }
            }
        case let .failure(error):
            let dbus = error as? DBusError
            var name = dbus?.name ?? "org.freedesktop.DBus.Error.Failed"
            if !DBusNames.isDottedName(name) || name.hasPrefix(":") { name = "org.freedesktop.DBus.Error.Failed" }
            let text = (dbus?.message ?? "\(error)").replacingOccurrences(of: "\0", with: "")
            reply = library.messageNewError(call.pointer, name, text)
        }
        guard let reply else { return }
        defer { library.messageUnref(reply) }
        try? sendRaw(reply, what: "a method reply")
    }
}

/// A libdbus pointer handed between threads.
///
/// `@unchecked Sendable`: libdbus objects are thread-safe once `dbus_threads_init_default` ran
/// (``DBusLibrary/shared``); who may use the pointer when is governed by the owner's lock.
struct RawPointer: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

/// One outstanding method call: its libdbus pending call and the task waiting for the reply.
/// Whichever comes first — the reply (libdbus's notify, on the loop thread), the time limit
/// (libdbus's own NoReply error reply), cancellation or the connection's end — resumes the task,
/// once.
final class PendingReply: Sendable {
    private struct State {
        var pending: RawPointer?
        var continuation: CheckedContinuation<DBusMessage, any Error>?
        var early: Result<DBusMessage, any Error>?
        var done = false
    }

    private let library: DBusLibrary
    private let state = Mutex(State())

    init(library: DBusLibrary) { self.library = library }

    /// Set once, right after sending (under the connection's lock).
    var pending: RawPointer? {
        get { state.withLock { $0.pending } }
        set { state.withLock { $0.pending = newValue } }
    }

    /// Parks the caller; arranges libdbus's notify, and checks whether the reply came already.
    func wait(_ continuation: CheckedContinuation<DBusMessage, any Error>) {
        let early: Result<DBusMessage, any Error>? = state.withLock { state in
            if let early = state.early { return early }
            state.continuation = continuation
            return nil
        }
        if let early {
            continuation.resume(with: early)
            return
        }
        // Under the lock, so a concurrent ``fail(_:)`` cannot free the pending call meanwhile.
        let outcome: (completed: Bool, failed: Bool) = state.withLock { state in
            guard !state.done, let pending = state.pending else { return (false, false) }
            let context = Unmanaged.passRetained(self).toOpaque()
            if library.pendingSetNotify(pending.pointer, dbusPendingNotify, context, dbusReleasePendingReply) == 0 {
                Unmanaged<PendingReply>.fromOpaque(context).release()
                return (false, true)
            }
            return (library.pendingGetCompleted(pending.pointer) != 0, false)
        }
        if outcome.failed { fail(DBusError("could not wait for a D-Bus reply (out of memory)")) }
        if outcome.completed { complete() }
    }

    /// The reply is there: take it and resume the caller.
    func complete() {
        let taken: (RawPointer, CheckedContinuation<DBusMessage, any Error>?)? = state.withLock { state in
            guard !state.done, let pending = state.pending else { return nil }
            state.done = true
            let continuation = state.continuation
            state.continuation = nil
            return (pending, continuation)
        }
        guard let (pending, continuation) = taken else { return }
        let result: Result<DBusMessage, any Error>
        if let reply = library.pendingStealReply(pending.pointer) {
            result = .success(library.decode(reply))
            library.messageUnref(reply)
        } else {
            result = .failure(DBusError("the D-Bus call completed without a reply"))
        }
        library.pendingUnref(pending.pointer)
        deliver(result, to: continuation)
    }

    /// Ends the wait with `error` (cancellation, the connection's end) and abandons the call.
    func fail(_ error: any Error) {
        let taken: (RawPointer?, CheckedContinuation<DBusMessage, any Error>?)? = state.withLock { state in
            guard !state.done else { return nil }
            state.done = true
            let continuation = state.continuation
            state.continuation = nil
            return (state.pending, continuation)
        }
        guard let (pending, continuation) = taken else { return }
        if let pending {
            library.pendingCancel(pending.pointer)
            library.pendingUnref(pending.pointer)
        }
        deliver(.failure(error), to: continuation)
    }

    private func deliver(_ result: Result<DBusMessage, any Error>, to continuation: CheckedContinuation<DBusMessage, any Error>?) {
        if let continuation {
            continuation.resume(with: result)
        } else {
            // Not waiting yet: ``wait(_:)`` finds the result.
            let late: CheckedContinuation<DBusMessage, any Error>? = state.withLock { state in
                if let continuation = state.continuation {
                    state.continuation = nil
                    return continuation
                }
                state.early = result
                return nil
            }
            late?.resume(with: result)
        }
    }
}

private func dbusPendingNotify(_ pending: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<PendingReply>.fromOpaque(context).takeUnretainedValue().complete()
}

private func dbusReleasePendingReply(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<PendingReply>.fromOpaque(context).release()
}

/// libdbus's message filter: every incoming signal and method call passes here (on the loop
/// thread); replies to our calls go to their pending calls instead.
private func dbusFilter(_ connection: OpaquePointer?, _ message: OpaquePointer?, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let message, let context else { return 1 }
    let router = Unmanaged<DBusRouter>.fromOpaque(context).takeUnretainedValue()
    return router.route(message) ? 0 : 1
}
