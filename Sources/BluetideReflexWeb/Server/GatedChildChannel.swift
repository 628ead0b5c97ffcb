import HummingbirdCore
import Logging
import NIOCore

/// A Hummingbird child channel (`Base`, here HTTP/1.1 with the WebSocket upgrade) behind the
/// dashboard's ``ConnectionGate``: every accepted socket is admitted or refused, watched for
/// silence and idleness (``ConnectionWatch``), and a request that does not parse gets a 400.
struct GatedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    /// A served connection (`served` set) or a refused one (nil: its answer is already on its way).
    struct Value: ServerChildChannelValue {
        let channel: any Channel
        let served: Base.Value?
        /// True once the peer sent a byte; false when it closed (or was evicted) silent.
        let firstByte: EventLoopFuture<Bool>
    }

    let base: Base
    let gate: ConnectionGate
    let logger: Logger

    /// Runs on the new channel's event loop (Hummingbird's child channel initializer).
    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let (id, admission) = gate.admit(channel)
        if admission == .refuse {
            let limit = gate.limits.maximumConnections
            self.logger.warning("refused a connection: all \(limit) connections are in use")
            let refusal = (status: "503 Service Unavailable",
                           text: "the dashboard is busy: all \(limit) connections it serves are in use; try again in a few seconds",
                           extraHeaders: ["Retry-After: 5"])
            let firstByte = channel.eventLoop.makePromise(of: Bool.self)
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(ConnectionWatch(id: id, gate: gate, firstByte: firstByte, refusal: refusal))
                return Value(channel: channel, served: nil, firstByte: firstByte.futureResult)
            }
        }
        let firstByte = channel.eventLoop.makePromise(of: Bool.self)
        let watch = ConnectionWatch(id: id, gate: gate, firstByte: firstByte)
        do { try channel.pipeline.syncOperations.addHandler(watch) } catch {
            firstByte.succeed(false)
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger).assumeIsolated().flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandler(MalformedRequestAnswer(watch: watch))
            return Value(channel: channel, served: value, firstByte: firstByte.futureResult)
        }.nonisolated()
    }

    /// Hands a served connection to `Base` once it speaks: one closed or evicted while silent
    /// needs no handling (and would only log Hummingbird's "error handling upgrade result").
    func handle(value: Value, logger: Logger) async {
        guard let served = value.served, (try? await value.firstByte.get()) == true else { return }
        await base.handle(value: served, logger: logger)
    }
}
