import BluetideHCI
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// H4 over an open file descriptor, read on a dedicated thread: a UART (``SerialTransport``) or
/// the Linux HCI user channel (``HCISocketTransport``).
///
/// The reader thread `poll`s the descriptor and a wake-up pipe, frames what it reads and yields
/// packets; writes happen on this actor, one whole packet per `write` call (which the user
/// channel requires). The descriptor is closed by ``close()`` after the reader thread has stopped,
/// so no read or write can ever touch a recycled descriptor number.
public actor FileDescriptorTransport: HCITransport {
    public nonisolated let packets: AsyncThrowingStream<HCIPacket, any Error>
    private nonisolated let continuation: AsyncThrowingStream<HCIPacket, any Error>.Continuation
    /// The spec this transport was opened with, for messages.
    public nonisolated let name: String
    private let fd: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let readerStopped: AsyncStream<Never>
    private var closed = false

    /// Wake-up byte values: the owner closes the descriptors, or the reader must (owner gone).
    private static let wakeOwnerCloses: UInt8 = 1
    private static let wakeReaderCloses: UInt8 = 2

    /// Takes ownership of `fd` (already configured) and starts reading it.
    init(fd: Int32, name: String) throws {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            let code = POSIX.errorNumber
            closeDescriptor(fd)
            throw TransportError.openFailed("\(name): cannot create a wake-up pipe: \(POSIX.describe(code))")
        }
        let (packets, continuation) = AsyncThrowingStream<HCIPacket, any Error>.makeStream()
        let (stopped, stoppedContinuation) = AsyncStream<Never>.makeStream()
        self.packets = packets
        self.continuation = continuation
        self.name = name
        self.fd = fd
        self.wakeRead = pipeEnds[0]
        self.wakeWrite = pipeEnds[1]
        self.readerStopped = stopped
        let wakeRead = pipeEnds[0]
        let wakeWrite = pipeEnds[1]
        let thread = Thread {
            Self.readLoop(fd: fd, wakeRead: wakeRead, wakeWrite: wakeWrite, name: name, continuation: continuation)
            stoppedContinuation.finish()
        }
        thread.name = "bluetide \(name) reader"
        thread.start()
    }

    /// Reads until the wake-up pipe fires, the peer hangs up, or framing or I/O fails.
    private static func readLoop(
        fd: Int32, wakeRead: Int32, wakeWrite: Int32, name: String,
        continuation: AsyncThrowingStream<HCIPacket, any Error>.Continuation
    ) {
        var receiver = H4PacketReceiver(continuation: continuation)
        // The largest H4 packet: type, 4-byte ACL header, 65535 bytes.
        var buffer = [UInt8](repeating: 0, count: 65_540)
        var fds = [
            pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            fds[0].revents = 0
            fds[1].revents = 0
            if poll(&fds, 2, -1) < 0 {
                let code = POSIX.errorNumber
                if code == EINTR { continue }
                receiver.finish(throwing: TransportError.ioFailed("\(name): poll failed: \(POSIX.describe(code))"))
                return
            }
            if fds[1].revents != 0 {
                var wake: UInt8 = 0
                _ = read(wakeRead, &wake, 1)
                receiver.finish()
                if wake == wakeReaderCloses {
                    closeDescriptor(fd)
                    closeDescriptor(wakeRead)
                    closeDescriptor(wakeWrite)
                }
                return
            }
            guard fds[0].revents != 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                if !receiver.receive(buffer[0..<count]) {
                    return  // framing error: the stream has ended with it
                }
            } else if count == 0 {
                receiver.finish(throwing: TransportError.closedByPeer(name))
                return
            } else {
                let code = POSIX.errorNumber
                if code == EINTR || code == EAGAIN || code == EWOULDBLOCK { continue }
                receiver.finish(throwing: TransportError.ioFailed("\(name): read failed: \(POSIX.describe(code))"))
                return
            }
        }
    }

    public func send(_ packet: HCIPacket) async throws {
        try sendRaw(packet.h4Bytes)
    }

    /// Writes raw bytes in one call (serial resync padding, tests).
    func sendRaw(_ bytes: [UInt8]) throws {
        guard !closed else { throw TransportError.closed(name) }
        let code = POSIX.writeAll(fd, bytes)
        guard code == 0 else {
            throw TransportError.ioFailed("\(name): write failed: \(POSIX.describe(code))")
        }
    }

    public func close() async {
        guard !closed else { return }
        closed = true
        continuation.finish()
        var wake = Self.wakeOwnerCloses
        _ = write(wakeWrite, &wake, 1)
        for await _ in readerStopped {}
        closeDescriptor(fd)
        closeDescriptor(wakeRead)
        closeDescriptor(wakeWrite)
    }

    deinit {
        // Never closed: tell the reader to stop and release the descriptors itself.
        if !closed {
            var wake = Self.wakeReaderCloses
            _ = write(wakeWrite, &wake, 1)
        }
    }
}
