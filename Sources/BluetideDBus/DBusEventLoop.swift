import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The one thread that runs a connection: `poll(2)` on libdbus's watches and a pipe that
/// wakes it, with the nearest of libdbus's timeouts as the poll's limit; then libdbus handles
/// the ready descriptors and dispatches what arrived. Other threads never poll: a send from any
/// thread writes at once when it can, and what remains is written here when the socket is
/// writable (libdbus enables its write watch, which wakes this loop).
final class DBusEventLoop: Sendable {
    private struct TimeoutEntry {
        let timeout: RawPointer
        var deadline: ContinuousClock.Instant?
    }

    private struct State {
        var watches: [RawPointer] = []
        var timeouts: [TimeoutEntry] = []
        var stopping = false
        var finished = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let library: DBusLibrary
    /// The wake-up pipe: the loop polls `wakeFD`, any thread writes a byte to `wakeWriteFD`.
    private let wakeFD: Int32
    private let wakeWriteFD: Int32
    private let state = Mutex(State())

    init(library: DBusLibrary) throws(DBusError) {
        self.library = library
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw DBusError("cannot make the D-Bus loop's wake-up pipe: \(String(cString: strerror(errno)))")
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        wakeFD = fds[0]
        wakeWriteFD = fds[1]
    }

    deinit {
        Glibc.close(wakeFD)
        Glibc.close(wakeWriteFD)
    }

    /// Hands libdbus our watch, timeout, wake-up and dispatch-status functions.
    func install(on connection: OpaquePointer) -> Bool {
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard library.setWatchFunctions(connection, dbusAddWatch, dbusRemoveWatch, dbusToggleWatch, context, nil) != 0,
              library.setTimeoutFunctions(connection, dbusAddTimeout, dbusRemoveTimeout, dbusToggleTimeout, context, nil) != 0
        else { return false }
        library.setWakeupMainFunction(connection, dbusWakeUp, context, nil)
        library.setDispatchStatusFunction(connection, dbusDispatchStatusChanged, context, nil)
        return true
    }

    func wake() {
        // A full pipe already wakes the loop: a failed write is fine.
        var one: UInt8 = 1
        _ = Glibc.write(wakeWriteFD, &one, 1)
    }

    // Called by libdbus (any thread, possibly under its connection lock): only our state and the wake-up pipe.
    func addWatch(_ watch: OpaquePointer) {
        state.withLock { $0.watches.append(RawPointer(watch)) }
        wake()
    }

    func removeWatch(_ watch: OpaquePointer) {
        state.withLock { $0.watches.removeAll { $0.pointer == watch } }
        wake()
    }

    func addTimeout(_ timeout: OpaquePointer) {
        let deadline = deadline(of: timeout)
        state.withLock { $0.timeouts.append(TimeoutEntry(timeout: RawPointer(timeout), deadline: deadline)) }
        wake()
    }

    func removeTimeout(_ timeout: OpaquePointer) {
        state.withLock { $0.timeouts.removeAll { $0.timeout.pointer == timeout } }
        wake()
    }

    func toggleTimeout(_ timeout: OpaquePointer) {
        let deadline = deadline(of: timeout)
        state.withLock { state in
            if let index = state.timeouts.firstIndex(where: { $0.timeout.pointer == timeout }) { state.timeouts[index].deadline = deadline }
        }
        wake()
    }

    private func deadline(of timeout: OpaquePointer) -> ContinuousClock.Instant? {
        guard library.timeoutGetEnabled(timeout) != 0 else { return nil }
        return .now + .milliseconds(Int(library.timeoutGetInterval(timeout)))
    }

    /// Asks the loop to end (from any thread) and waits until the connection is let go of.
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.finished { return true }
                state.stopping = true
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() } else { wake() }
        }
    }

    /// Waits until the loop has ended and let go of the connection (after ``stop()`` or the bus going away).
    func waitUntilFinished() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.finished { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Asks the loop to end without waiting (from the loop thread: the bus went away).
    func requestStop() {
        state.withLock { $0.stopping = true }
        wake()
    }

    /// Called by the loop thread after tear-down.
    func finished() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.finished = true
            let waiters = state.waiters
            state.waiters = []
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The loop (on the connection's thread) until ``stop()`` or the bus goes away.
    func run(connection: OpaquePointer) {
        // Messages that arrived with the Hello reply are dispatched first.
        while library.dispatch(connection) == 0 {}
        while true {
            let (watches, limit, stopping) = state.withLock { state -> ([RawPointer], Int32, Bool) in
                let now = ContinuousClock.now
                let next = state.timeouts.compactMap(\.deadline).min()
                let limit: Int32 = next.map { deadline in
                    let left = now.duration(to: deadline)
                    if left <= .zero { return 0 }
                    let ms = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1
                    return Int32(clamping: ms)
                } ?? -1
                return (state.watches.filter { library.watchGetEnabled($0.pointer) != 0 }, limit, state.stopping)
            }
            if stopping { return }
            var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            for watch in watches {
                let flags = library.watchGetFlags(watch.pointer)
                var events: Int16 = 0
                if flags & 1 != 0 { events |= Int16(POLLIN) }
                if flags & 2 != 0 { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: library.watchGetUnixFD(watch.pointer), events: events, revents: 0))
            }
            let ready = poll(&fds, nfds_t(fds.count), limit)
            if ready < 0 && errno != EINTR { return }
            if fds[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 256)
                while Glibc.read(wakeFD, &drain, drain.count) > 0 {}
            }
            for (index, watch) in watches.enumerated() where fds[index + 1].revents != 0 {
                guard state.withLock({ $0.watches.contains { $0.pointer == watch.pointer } }) else { continue }
                let revents = Int32(fds[index + 1].revents)
                var flags: UInt32 = 0
                if revents & Int32(POLLIN) != 0 { flags |= 1 }
                if revents & Int32(POLLOUT) != 0 { flags |= 2 }
                if revents & Int32(POLLERR) != 0 { flags |= 4 }
                if revents & Int32(POLLHUP) != 0 { flags |= 8 }
                _ = library.watchHandle(watch.pointer, flags)
            }
            fireTimeouts()
            while library.dispatch(connection) == 0 {}
        }
    }

    private func fireTimeouts() {
        let now = ContinuousClock.now
        let due = state.withLock { state -> [RawPointer] in
            var due: [RawPointer] = []
            for index in state.timeouts.indices {
                if let deadline = state.timeouts[index].deadline, deadline <= now {
                    due.append(state.timeouts[index].timeout)
                    state.timeouts[index].deadline = nil
                }
            }
            return due
        }
        for timeout in due {
            guard state.withLock({ $0.timeouts.contains { $0.timeout.pointer == timeout.pointer } }) else { continue }
            _ = library.timeoutHandle(timeout.pointer)
            // A timeout that stays enabled fires again after its interval.
            let next = deadline(of: timeout.pointer)
            state.withLock { state in
                if let index = state.timeouts.firstIndex(where: { $0.timeout.pointer == timeout.pointer }), state.timeouts[index].deadline == nil {
                    state.timeouts[index].deadline = next
                }
            }
        }
    }
}

private func loop(_ context: UnsafeMutableRawPointer?) -> DBusEventLoop? {
    context.map { Unmanaged<DBusEventLoop>.fromOpaque($0).takeUnretainedValue() }
}

private func dbusAddWatch(_ watch: OpaquePointer?, _ context: UnsafeMutableRawPointer?) -> UInt32 {
    guard let watch, let loop = loop(context) else { return 0 }
    loop.addWatch(watch)
    return 1
}

private func dbusRemoveWatch(_ watch: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    guard let watch else { return }
    loop(context)?.removeWatch(watch)
}

private func dbusToggleWatch(_ watch: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    loop(context)?.wake()
}

private func dbusAddTimeout(_ timeout: OpaquePointer?, _ context: UnsafeMutableRawPointer?) -> UInt32 {
    guard let timeout, let loop = loop(context) else { return 0 }
    loop.addTimeout(timeout)
    return 1
}

private func dbusRemoveTimeout(_ timeout: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    guard let timeout else { return }
    loop(context)?.removeTimeout(timeout)
}

private func dbusToggleTimeout(_ timeout: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    guard let timeout else { return }
    loop(context)?.toggleTimeout(timeout)
}

private func dbusWakeUp(_ context: UnsafeMutableRawPointer?) {
    loop(context)?.wake()
}

private func dbusDispatchStatusChanged(_ connection: OpaquePointer?, _ status: Int32, _ context: UnsafeMutableRawPointer?) {
    if status == 0 { loop(context)?.wake() }
}
