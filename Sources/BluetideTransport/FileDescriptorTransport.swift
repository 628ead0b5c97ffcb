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
/// The reader thread `poll`s the descriptor and a wake-up pipe, frames what it reads and hands
/// the reader one batch per wake-up. Writes happen on this actor: a batch is one `write` on a
/// byte stream (a UART); on a packet socket (the user channel, which takes one whole packet per
/// `write`) it is one `write` per packet, all in one turn of the actor. The descriptor is closed
/// by ``close()`` after the reader thread has stopped, so no read or write can ever touch a
/// recycled descriptor number.
public actor FileDescriptorTransport: HCITransport {
    private nonisolated let inbox: InboundPackets
    /// The spec this transport was opened with, for messages.
    public nonisolated let name: String
    private let fd: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let readerStopped: AsyncStream<Never>
    private var closed = false
    /// True for a packet socket: one packet per `read` and per `write`.
    private let packetPerWrite: Bool
    /// Where a batch is encoded before its write (kept, so a batch allocates nothing once warm).
    private var output: [UInt8] = []

    /// Wake-up byte values: the owner closes the descriptors, or the reader must (owner gone).
    private static let wakeOwnerCloses: UInt8 = 1
    private static let wakeReaderCloses: UInt8 = 2

    /// Takes ownership of `fd` (already configured) and starts reading it. `packetPerWrite`: the
    /// descriptor is a packet socket (each `read` returns, each `write` must carry, one packet).
    init(fd: Int32, name: String, packetPerWrite: Bool = false) throws {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            let code = POSIX.errorNumber
            closeDescriptor(fd)
            throw TransportError.openFailed("\(name): cannot create a wake-up pipe: \(POSIX.describe(code))")
        }
        let inbox = InboundPackets(name: name)
        let (stopped, stoppedContinuation) = AsyncStream<Never>.makeStream()
        self.inbox = inbox
        self.packetPerWrite = packetPerWrite
        self.name = name
        self.fd = fd
        self.wakeRead = pipeEnds[0]
        self.wakeWrite = pipeEnds[1]
        self.readerStopped = stopped
        let wakeRead = pipeEnds[0]
        let wakeWrite = pipeEnds[1]
        let thread = Thread {
            Self.readLoop(
                fd: fd, wakeRead: wakeRead, wakeWrite: wakeWrite, name: name, drainPackets: packetPerWrite, inbox: inbox)
            stoppedContinuation.finish()
        }
        thread.name = "bluetide \(name) reader"
        thread.start()
    }

    /// Reads until the wake-up pipe fires, the peer hangs up, or framing or I/O fails. Each
    /// wake-up is one batch: one read of a byte stream, or (`drainPackets`, a packet socket)
    /// every packet waiting, up to ``maxPacketsPerBatch``.
    private static func readLoop(
        fd: Int32, wakeRead: Int32, wakeWrite: Int32, name: String, drainPackets: Bool, inbox: InboundPackets
    ) {
        var receiver = H4PacketReceiver(inbox: inbox)
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
                guard buffer.withUnsafeBytes({ receiver.append(bytes: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }) else {
                    return  // framing error: the stream has ended with it
                }
                if drainPackets, !drainWaitingPackets(fd: fd, buffer: &buffer, into: &receiver) { return }
                receiver.flush()
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

    /// Packets a packet socket's reader takes in one wake-up, at most.
    static let maxPacketsPerBatch = 64

    /// Reads the packets already waiting on a packet socket without blocking (`MSG_DONTWAIT`)
    /// into the receiver's batch. Returns false when framing failed (the stream has ended);
    /// errors of these extra reads are left for the next `poll` and blocking read to report.
    private static func drainWaitingPackets(fd: Int32, buffer: inout [UInt8], into receiver: inout H4PacketReceiver) -> Bool {
        for _ in 1..<maxPacketsPerBatch {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { return true }
            guard buffer.withUnsafeBytes({ receiver.append(bytes: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }) else {
                return false
            }
        }
        return true
    }

    public nonisolated var packets: AsyncThrowingStream<HCIPacket, any Error> { inbox.packets }

    public nonisolated var packetBatches: AsyncThrowingStream<[HCIPacket], any Error> { inbox.packetBatches }

    public func send(_ packet: HCIPacket) async throws {
        try writeBatch([packet])
    }

    /// Writes `packets` in order: one `write` for the whole batch on a byte stream, one per
    /// packet on a packet socket, with no suspension in between.
    public func send(batch packets: [HCIPacket]) async throws {
        try writeBatch(packets)
    }

    private func writeBatch(_ packets: [HCIPacket]) throws {
        guard !closed else { throw TransportError.closed(name) }
        if packetPerWrite {
            for packet in packets {
                output.removeAll(keepingCapacity: true)
                output.appendH4(packet)
                try writeOutput()
            }
        } else {
            output.removeAll(keepingCapacity: true)
            for packet in packets { output.appendH4(packet) }
            try writeOutput()
        }
    }

    /// Writes raw bytes in one call (serial resync padding, tests).
    func sendRaw(_ bytes: [UInt8]) throws {
        guard !closed else { throw TransportError.closed(name) }
        output = bytes
        try writeOutput()
    }

    private func writeOutput() throws {
        guard !output.isEmpty else { return }
        let code = POSIX.writeAll(fd, output)
        guard code == 0 else {
            throw TransportError.ioFailed("\(name): write failed: \(POSIX.describe(code))")
        }
    }

    public func close() async {
        guard !closed else { return }
        closed = true
        inbox.finish()
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
