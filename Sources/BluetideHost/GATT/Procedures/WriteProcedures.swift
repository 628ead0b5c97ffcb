import BluetideBase

/// Write Characteristic Value (Core Vol 3 Part G 4.9.3): a Write Request when the value fits in
/// MTU − 3 octets, else a ``LongWrite`` from offset 0.
public struct WriteValue: GATTProcedure {
    /// The attribute written.
    public let handle: UInt16
    /// The value.
    public let value: [UInt8]
    /// The effective ATT MTU at the start, octets.
    public let mtu: Int
    private var long: LongWrite?

    /// Writes `value` to attribute `handle` at ATT MTU `mtu`.
    public init(handle: UInt16, value: [UInt8], mtu: Int) {
        self.handle = handle
        self.value = value
        self.mtu = mtu
    }

    public mutating func start() -> GATTProcedureStep<Void> {
        guard value.count > mtu - 3 else { return .send(.writeRequest(handle: handle, value: value)) }
        var long = LongWrite(handle: handle, value: value, mtu: mtu)
        let step = long.start()
        self.long = long
        return step
    }

    public mutating func handle(response: ATTPDU) -> GATTProcedureStep<Void> {
        if let step = long?.handle(response: response) { return step }
        return GATTResponse.finish(response, answering: .writeRequest) { if case .writeResponse = $0 { () } else { nil } }
    }

    public mutating func handle(failure: any Error) -> GATTProcedureStep<Void> {
        long?.handle(failure: failure) ?? .finished(.failure(failure))
    }
}

/// Write Long Characteristic Values (Core Vol 3 Part G 4.9.4): Prepare Write parts of MTU − 5
/// octets, each echo checked against what was sent, then Execute Write (flags 0x01). When a
/// part fails — an error, an echo that differs, a failure below ATT — the server's queue is
/// cancelled (Execute Write, flags 0x00) and the write ends with the first problem, whatever
/// the cancel's answer.
public struct LongWrite: GATTProcedure {
    /// The attribute written.
    public let handle: UInt16
    /// The value.
    public let value: [UInt8]
    /// The offset of the value's first octet in the attribute.
    public let offset: UInt16
    /// Octets per Prepare Write Request: MTU − 5 (at least 1).
    public let partLength: Int

    private enum Phase: Sendable {
        /// The part starting at `position` of the value is out.
        case preparing(position: Int)
        /// Execute Write (commit) is out.
        case executing
        /// Execute Write (cancel) is out; the write fails with `error` whatever comes back.
        case cancelling(any Error)
    }

    private var phase = Phase.preparing(position: 0)

    /// Writes `value` to attribute `handle` from `offset`, at ATT MTU `mtu`.
    public init(handle: UInt16, value: [UInt8], offset: UInt16 = 0, mtu: Int) {
        self.handle = handle
        self.value = value
        self.offset = offset
        self.partLength = max(mtu - 5, 1)
    }

    /// The part starting at `position` and its offset in the attribute.
    private func part(at position: Int) -> (value: [UInt8], offset: UInt16) {
        (Array(value[position..<min(position + partLength, value.count)]), UInt16(clamping: Int(offset) + position))
    }

    private func prepare(at position: Int) -> ATTPDU {
        let (value, offset) = part(at: position)
        return .prepareWriteRequest(handle: handle, offset: offset, value: value)
    }

    public mutating func start() -> GATTProcedureStep<Void> {
        phase = .preparing(position: 0)
        return .send(prepare(at: 0))
    }

    public mutating func handle(response: ATTPDU) -> GATTProcedureStep<Void> {
        switch phase {
        case let .preparing(position):
            let (sent, sentOffset) = part(at: position)
            do {
                guard case let .prepareWriteResponse(h, o, echoed) = try GATTResponse.check(response, answering: .prepareWriteRequest) else {
                    throw GATTClientError.unexpectedResponse(response, request: .prepareWriteRequest)
                }
                guard h == handle, o == sentOffset, echoed == sent else {
                    throw GATTClientError.writeVerificationFailed(handle: handle, offset: sentOffset)
                }
            } catch {
                return handle(failure: error)
            }
            let next = position + sent.count
            guard next < value.count else {
                phase = .executing
                return .send(.executeWriteRequest(flags: ATTPDU.executeWriteCommit))
            }
            phase = .preparing(position: next)
            return .send(prepare(at: next))
        case .executing:
            return GATTResponse.finish(response, answering: .executeWriteRequest) {
                if case .executeWriteResponse = $0 { () } else { nil }
            }
        case let .cancelling(error):
            return .finished(.failure(error))
        }
    }

    public mutating func handle(failure: any Error) -> GATTProcedureStep<Void> {
        switch phase {
        case .preparing:
            // Empty the server's queue, or its parts would join the next long write.
            phase = .cancelling(failure)
            return .send(.executeWriteRequest(flags: ATTPDU.executeWriteCancel))
        case .executing:
            return .finished(.failure(failure))
        case let .cancelling(error):
            return .finished(.failure(error))
        }
    }
}
