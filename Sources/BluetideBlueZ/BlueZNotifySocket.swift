import Foundation
import Synchronization

/// The socket `AcquireNotify` hands over (a SOCK_SEQPACKET: each read is one notification's
/// value). One thread per socket waits in `poll` on it and on a wake-up pipe, so ``stop()``
/// ends the wait at once without closing a descriptor another thread is reading. The socket
/// hangs up when bluetoothd stops notifying (the link ended); closing it unsubscribes.
final class BlueZNotifySocket: Sendable {
    private struct Descriptors {
        var socket: Int32
        var wakeRead: Int32
        var wakeWrite: Int32
        /// Set (and the descriptors closed) by the reading thread as it ends.
        var closed = false
    }

    private let descriptors: Mutex<Descriptors>
    private let bufferSize: Int

    /// Takes ownership of `fd`.
    init(fd: Int32, bufferSize: Int) {
        var pipe: [Int32] = [-1, -1]
        if Foundation.pipe(&pipe) == 0 {
            for fd in pipe {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            }
        } else {
            pipe = [-1, -1]
        }
        descriptors = Mutex(Descriptors(socket: fd, wakeRead: pipe[0], wakeWrite: pipe[1]))
        self.bufferSize = bufferSize
    }

    /// Starts reading: each value goes to `continuation`, which finishes when the socket hangs
    /// up or ``stop()`` is called.
    func start(_ continuation: AsyncStream<[UInt8]>.Continuation) {
        let (socket, wake) = descriptors.withLock { ($0.socket, $0.wakeRead) }
        let size = bufferSize
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: size)
            var polled = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            reading: while true {
                polled[0].revents = 0
                polled[1].revents = 0
                let ready = poll(&polled, wake >= 0 ? 2 : 1, -1)
                if ready < 0 {
                    if errno == EINTR { continue }
                    break
                }
                if polled[1].revents != 0 { break }
                let events = Int32(polled[0].revents)
                if events & Int32(POLLIN) != 0 {
                    let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress, size) }
                    if count > 0 {
                        continuation.yield(Array(buffer[..<count]))
                        continue reading
                    }
                    if count < 0 && (errno == EINTR || errno == EAGAIN) { continue reading }
                    break
                }
                if events & Int32(POLLHUP | POLLERR | POLLNVAL) != 0 { break }
            }
            descriptors.withLock { state in
                close(state.socket)
                if state.wakeRead >= 0 { close(state.wakeRead) }
                if state.wakeWrite >= 0 { close(state.wakeWrite) }
                state.closed = true
            }
            continuation.finish()
        }
    }

    /// Ends the reading (idempotent; after the thread ended, nothing to do).
    func stop() {
        descriptors.withLock { state in
            guard !state.closed, state.wakeWrite >= 0 else { return }
            var byte: UInt8 = 1
            _ = write(state.wakeWrite, &byte, 1)
        }
    }
}
