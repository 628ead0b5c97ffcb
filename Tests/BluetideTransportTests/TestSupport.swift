import BluetideHCI

/// The error that ends `iterator`'s stream at its next element, or nil when an element or the end came.
func nextError(_ iterator: inout AsyncThrowingStream<HCIPacket, any Error>.Iterator) async -> (any Error)? {
    do {
        _ = try await iterator.next()
        return nil
    } catch {
        return error
    }
}

/// True when `error` is the H4 framing error for `type` at stream byte `offset`.
func isFramingError(_ error: (any Error)?, type: UInt8, offset: Int) -> Bool {
    guard let framing = error as? H4FramingError else { return false }
    return framing.packetType == type && framing.streamOffset == offset
}
