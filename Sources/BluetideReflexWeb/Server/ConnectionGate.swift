import Foundation
import NIOCore
import Synchronization

/// The one owner of the dashboard's ``ConnectionTable``: admits accepted sockets, closes the ones
/// the table evicts, and forgets closed ones. Called from the sockets' event loops.
final class ConnectionGate: Sendable {
    private struct State {
        var table: ConnectionTable
        var channels: [Int: any Channel] = [:]
        var nextID = 0
        var accepted = 0
        var refused = 0
        var evicted = 0
    }

    /// The limits applied.
    let limits: ConnectionLimits
    private let state: Mutex<State>
    /// Broadcast after every change of the figures, for ``waitForFigures(within:until:)``.
    private let changed = NSCondition()

    init(limits: ConnectionLimits) {
        self.limits = limits
        state = Mutex(State(table: ConnectionTable(capacity: limits.maximumConnections)))
    }

    /// Decides on a newly accepted `channel`: its id and whether to serve it. A connection the
    /// table evicts to make room is closed here.
    func admit(_ channel: any Channel) -> (id: Int, admission: ConnectionTable.Admission) {
        let (id, admission, evicted): (Int, ConnectionTable.Admission, (any Channel)?) = state.withLock { state in
            let id = state.nextID
            state.accepted += 1
            state.nextID += 1
            let admission = state.table.admit(id)
            var evicted: (any Channel)?
            switch admission {
            case .accept: state.channels[id] = channel
            case let .acceptEvicting(old):
                state.channels[id] = channel
                evicted = state.channels.removeValue(forKey: old)
                state.evicted += 1
            case .refuse: state.refused += 1
            }
            return (id, admission, evicted)
        }
        evicted?.close(promise: nil)
        announceChange()
        return (id, admission)
    }

    /// Connection `id` sent its first byte.
    func spoke(_ id: Int) {
        state.withLock { $0.table.spoke(id) }
        announceChange()
    }

    /// Connection `id` started another request's header (kept alive).
    func startedHeader(_ id: Int) {
        state.withLock { $0.table.startedHeader(id) }
        announceChange()
    }

    /// Connection `id` sent a whole request header.
    func headerComplete(_ id: Int) {
        state.withLock { $0.table.headerComplete(id) }
        announceChange()
    }

    /// Connection `id` closed.
    func closed(_ id: Int) {
        state.withLock { state in
            state.table.closed(id)
            state.channels[id] = nil
        }
        announceChange()
    }

    /// Wakes the threads in ``waitForFigures(within:until:)`` to look again.
    private func announceChange() {
        changed.lock()
        changed.broadcast()
        changed.unlock()
    }

    /// Blocks the calling thread (never a task of the cooperative pool) until `condition` holds
    /// for the figures or `seconds` pass; true when it held. Woken by each change, so a waiter
    /// (a test, a monitor) waits for the event itself instead of looking again and again.
    func waitForFigures(within seconds: Double, until condition: (ConnectionFigures) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        changed.lock()
        defer { changed.unlock() }
        // A change made between this look and the wait below broadcasts only once the lock is
        // released by `wait`: no change is missed.
        while !condition(figures) {
            if !changed.wait(until: deadline) { return condition(figures) }
        }
        return true
    }

    /// Figures for logs and tests: connections held now, silent ones among them; accepted,
    /// refused and evicted since the start.
    var figures: ConnectionFigures {
        state.withLock {
            ConnectionFigures(held: $0.table.count, silent: $0.table.silentCount, partial: $0.table.partialCount, accepted: $0.accepted,
                              refused: $0.refused, evicted: $0.evicted)
        }
    }
}

/// What the dashboard's connection cap has done (``RunningDashboard/connections``).
public struct ConnectionFigures: Sendable, Hashable {
    /// Connections held now.
    public var held: Int
    /// Held connections that have not sent a byte.
    public var silent: Int
    /// Held connections part-way through a request's header.
    public var partial: Int = 0
    /// Connections accepted from the listen queue since the start.
    public var accepted: Int
    /// Connections refused with `503` since the start.
    public var refused: Int
    /// Silent or partial connections closed to make room for a newer one since the start.
    public var evicted: Int
}
