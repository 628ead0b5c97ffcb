/// Splits an outgoing byte stream into writes that fit one ATT Write (Command): at most MTU − 3
/// bytes each. The default, 20 bytes, suits the default MTU of 23 and old HM-10 firmware.
///
/// The chunk size is kept within 1...512 (the longest attribute value) whatever it is given.
public struct SerialChunker: Hashable, Sendable, Encodable {
    /// Bytes of payload in one write at the default ATT MTU of 23.
    public static let defaultMaxChunkSize = 20
    /// The longest attribute value ATT allows.
    public static let maximumAttributeLength = 512

    /// Most bytes per chunk (1...512).
    public let maxChunkSize: Int

    /// A chunker with this many bytes per chunk at most (clamped to 1...512).
    public init(maxChunkSize: Int = SerialChunker.defaultMaxChunkSize) {
        self.maxChunkSize = min(max(maxChunkSize, 1), Self.maximumAttributeLength)
    }

    /// A chunker for a negotiated ATT MTU: MTU − 3 bytes per chunk (the ATT write header).
    public init(mtu: Int) {
        self.init(maxChunkSize: mtu - 3)
    }

    /// The chunks of `bytes`, in order; each is full size except possibly the last. Empty input gives no chunks.
    public func chunks(_ bytes: [UInt8]) -> [[UInt8]] {
        stride(from: 0, to: bytes.count, by: maxChunkSize).map { start in
            Array(bytes[start..<min(start + maxChunkSize, bytes.count)])
        }
    }

    /// The chunks of a string's UTF-8 bytes (a multi-byte character may straddle two chunks;
    /// ``LineAssembler`` joins them again on the other side).
    public func chunks(_ text: String) -> [[UInt8]] { chunks(Array(text.utf8)) }
}
