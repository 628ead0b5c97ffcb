import Foundation
import Synchronization

/// Packets from the peer, stamped with their arrival time as the stack hands them over, and
/// taken one at a time with a timeout. Arrival times are taken at push, so a packet that waits
/// in the inbox (while the sender is still busy sending) keeps its true arrival time.
final class BumbleBenchInbox: Sendable {
    /// One packet and when it arrived (``BumbleBenchInbox/now()`` seconds).
    struct Arrival: Sendable {
        let bytes: [UInt8]
        let time: Double
    }

    /// Why ``next(timeout:)`` returned no packet.
    enum Failure: Error, Equatable, Sendable {
        /// Nothing arrived within the timeout, seconds.
        case stalled(seconds: Double)
        /// The link ended (with what the stack said).
        case linkLost(String)

        /// True for ``linkLost(_:)``.
        var isLinkLoss: Bool { if case .linkLost = self { true } else { false } }
    }

    private struct State {
        var queue: [Arrival] = []
        var head = 0
        var ended: String?
        var waiter: (id: UInt64, continuation: CheckedContinuation<Arrival, any Error>)?
        var nextID: UInt64 = 0
        /// A timeout or cancellation that fired before its waiter was registered.
        var earlyFailure: (id: UInt64, error: any Error)?
    }

    private let state = Mutex(State())

    /// The monotonic clock every bench time is read from, seconds.
    static func now() -> Double { ProcessInfo.processInfo.systemUptime }

    /// Adds a packet that arrived now (called from the stack's delivery path).
    func push(_ bytes: [UInt8]) {
        let arrival = Arrival(bytes: bytes, time: Self.now())
        let waiter = state.withLock { state -> CheckedContinuation<Arrival, any Error>? in
            guard state.ended == nil else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter.continuation
            }
            state.queue.append(arrival)
            return nil
        }
        waiter?.resume(returning: arrival)
    }

    /// Ends the inbox: packets already queued are still handed out, then ``Failure/linkLost(_:)``.
    func end(_ reason: String) {
        let waiter = state.withLock { state -> CheckedContinuation<Arrival, any Error>? in
            if state.ended == nil { state.ended = reason }
            defer { state.waiter = nil }
            return state.waiter?.continuation
        }
        waiter?.resume(throwing: Failure.linkLost(reason))
    }

    /// The next packet; throws ``Failure/stalled(seconds:)`` when none arrives within `timeout`
    /// seconds (nil waits for ever), ``Failure/linkLost(_:)`` once the link ended and the queue
    /// is empty, or `CancellationError` when the calling task is cancelled.
    func next(timeout: Double?) async throws -> Arrival {
        let id = state.withLock { state -> UInt64 in
            state.nextID &+= 1
            return state.nextID
        }
        let timer = timeout.map { seconds in
            Task { [weak self] in
                try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                if !Task.isCancelled { self?.fail(id, Failure.stalled(seconds: seconds)) }
            }
        }
        defer { timer?.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let immediate = state.withLock { state -> Result<Arrival, any Error>? in
                    if state.head < state.queue.count {
                        let arrival = state.queue[state.head]
                        state.head += 1
                        if state.head > 1024, state.head * 2 > state.queue.count {
                            state.queue.removeFirst(state.head)
                            state.head = 0
                        }
                        return .success(arrival)
                    }
                    if let reason = state.ended { return .failure(Failure.linkLost(reason)) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if let early = state.earlyFailure, early.id == id {
                        state.earlyFailure = nil
                        return .failure(early.error)
                    }
                    state.waiter = (id, continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            fail(id, CancellationError())
        }
    }

    /// Fails the waiter `id`, if it still waits.
    private func fail(_ id: UInt64, _ error: any Error) {
        let waiter = state.withLock { state -> CheckedContinuation<Arrival, any Error>? in
            guard let waiter = state.waiter, waiter.id == id else {
                if state.waiter == nil { state.earlyFailure = (id, error) }
                return nil
            }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume(throwing: error)
    }
}
