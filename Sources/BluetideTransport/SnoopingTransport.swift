import BluetideHCI

/// Wraps any transport and writes every packet, both ways, to a btsnoop file (`…+snoop:FILE`).
/// Batches pass through as batches, and each batch is one write to the capture. A failed snoop
/// write fails the operation (a capture the user asked for is never lost silently).
public final class SnoopingTransport: HCITransport {
    private let inbox: InboundPackets
    private let inner: any HCITransport
    /// The capture being written.
    public let writer: BTSnoopFileWriter
    private let pump: Task<Void, Never>

    /// Starts recording `inner`'s traffic into `writer`. Take `packets` or `packetBatches` from
    /// this object, not from `inner` (it has one reader: this wrapper).
    public init(wrapping inner: any HCITransport, writer: BTSnoopFileWriter) {
        let inbox = InboundPackets(name: "snoop \(writer.path)")
        self.inbox = inbox
        self.inner = inner
        self.writer = writer
        pump = Task {
            do {
                for try await batch in inner.packetBatches {
                    try await writer.write(batch: batch, direction: .received)
                    inbox.deliver(batch)
                }
                inbox.finish()
            } catch {
                inbox.finish(throwing: error)
            }
        }
    }

    public var packets: AsyncThrowingStream<HCIPacket, any Error> { inbox.packets }

    public var packetBatches: AsyncThrowingStream<[HCIPacket], any Error> { inbox.packetBatches }

    public func send(_ packet: HCIPacket) async throws {
        try await send(batch: [packet])
    }

    public func send(batch packets: [HCIPacket]) async throws {
        try await writer.write(batch: packets, direction: .sent)
        try await inner.send(batch: packets)
    }

    public func close() async {
        inbox.finish()
        await inner.close()
        await pump.value
        await writer.close()
    }
}
