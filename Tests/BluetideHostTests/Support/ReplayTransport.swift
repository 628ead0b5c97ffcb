import BluetideHCI
import BluetideTransport
import Synchronization

/// Plays a btsnoop capture back to a host in lockstep: every packet the host sends must be the
/// capture's next host→controller packet, byte for byte; after each, the controller→host
/// packets that follow it in the capture are delivered. The first difference stops the replay
/// (the host's transport fails) and is kept in ``mismatch``.
final class ReplayTransport: HCITransport {
    let packets: AsyncThrowingStream<HCIPacket, any Error>
    private let continuation: AsyncThrowingStream<HCIPacket, any Error>.Continuation
    private let state: Mutex<State>

    private struct State {
        var records: [BTSnoopRecord]
        var cursor = 0
        var hostPackets = 0
        var mismatch: String?
    }

    /// Why the replay stopped.
    struct Mismatch: Error, CustomStringConvertible {
        let description: String
    }

    init(records: [BTSnoopRecord]) {
        (packets, continuation) = AsyncThrowingStream.makeStream()
        var state = State(records: records)
        let first = Self.takeControllerPackets(&state)
        self.state = Mutex(state)
        for packet in first { continuation.yield(packet) }
    }

    /// The first difference, if any.
    var mismatch: String? { state.withLock { $0.mismatch } }

    /// Host→controller packets of the capture the host has not sent (yet).
    var unsentHostPackets: Int {
        state.withLock { state in state.records[state.cursor...].filter { $0.direction == .sent }.count }
    }

    /// Controller→host packets of the capture not delivered (yet).
    var undeliveredControllerPackets: Int {
        state.withLock { state in state.records[state.cursor...].filter { $0.direction == .received }.count }
    }

    func send(_ packet: HCIPacket) async throws { try await send(batch: [packet]) }

    func send(batch packets: [HCIPacket]) async throws {
        for packet in packets {
            let outcome = state.withLock { state -> Result<[HCIPacket], Mismatch> in
                if let mismatch = state.mismatch { return .failure(Mismatch(description: mismatch)) }
                let index = state.hostPackets
                guard state.cursor < state.records.count, state.records[state.cursor].direction == .sent else {
                    let problem = "host packet #\(index) \(packet) is not in the capture (it ends, or waits for the controller)"
                    state.mismatch = problem
                    return .failure(Mismatch(description: problem))
                }
                let expected = state.records[state.cursor].packet
                guard expected == packet else {
                    let problem = "host packet #\(index): the capture has \(expected), the host sent \(packet)"
                    state.mismatch = problem
                    return .failure(Mismatch(description: problem))
                }
                state.cursor += 1
                state.hostPackets += 1
                return .success(Self.takeControllerPackets(&state))
            }
            switch outcome {
            case let .success(replies):
                for reply in replies { continuation.yield(reply) }
            case let .failure(mismatch):
                continuation.finish(throwing: mismatch)
                throw mismatch
            }
        }
    }

    func close() async { continuation.finish() }

    /// The controller→host packets from the cursor up to the next host→controller packet.
    private static func takeControllerPackets(_ state: inout State) -> [HCIPacket] {
        var packets: [HCIPacket] = []
        while state.cursor < state.records.count, state.records[state.cursor].direction == .received {
            packets.append(state.records[state.cursor].packet)
            state.cursor += 1
        }
        return packets
    }
}
