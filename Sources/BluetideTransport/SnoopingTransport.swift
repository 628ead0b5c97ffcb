import BluetideHCI

/// Wraps any transport and writes every packet, both ways, to a btsnoop file (`…+snoop:FILE`).
/// A failed snoop write fails the operation (a capture the user asked for is never lost silently).
public final class SnoopingTransport: HCITransport {
    public let packets: AsyncThrowingStream<HCIPacket, any Error>
    private let continuation: AsyncThrowingStream<HCIPacket, any Error>.Continuation
    private let inner: any HCITransport
    /// The capture being written.
    public let writer: BTSnoopFileWriter
    private let pump: Task<Void, Never>

    /// Starts recording `inner`'s traffic into `writer`. Take `packets` from this object, not from
    /// `inner` (it has one consumer: this wrapper).
    public init(wrapping inner: any HCITransport, writer: BTSnoopFileWriter) {
        let (packets, continuation) = AsyncThrowingStream<HCIPacket, any Error>.makeStream()
        self.packets = packets
        self.continuation = continuation
        self.inner = inner
        self.writer = writer
        pump = Task {
            do {
                for try await packet in inner.packets {
                    try await writer.write(packet, direction: .received)
                    continuation.yield(packet)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }

    public func send(_ packet: HCIPacket) async throws {
        try await writer.write(packet, direction: .sent)
        try await inner.send(packet)
    }

    public func close() async {
        continuation.finish()
        await inner.close()
        await pump.value
        await writer.close()
    }
}
