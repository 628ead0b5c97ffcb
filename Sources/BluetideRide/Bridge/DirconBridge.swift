import BluetideProfiles

/// Serves a ride over Wahoo Direct Connect (DIRCON): what ``RideBridge`` serves over BLE, for
/// apps that reach the trainer over the network (Zwift on Apple TV, iPad, PC). The caller owns
/// the sockets: it ``open(send:)``s each accepted TCP connection with a way to write to it,
/// hands its bytes to ``receive(_:from:)`` and ``close(_:)``s it; ``publish(_:)`` sends each
/// sample's notifications. The protocol and the control point's rules are
/// ``DirconBridgeCore``'s; commands go to the session's trainer as the BLE bridge sends them.
public actor DirconBridge {
    /// The ride whose trainer the apps control.
    public nonisolated let session: RideSession
    /// What happens on the bridge, as it happens (connections, requests and their answers).
    public nonisolated let events: AsyncStream<RideBridgeEvent>
    private let eventContinuation: AsyncStream<RideBridgeEvent>.Continuation
    private var core: DirconBridgeCore
    private var connections: [Int: (send: @Sendable ([UInt8]) async -> Void, framer: DirconFramer, name: String)] = [:]
    private var nextConnection = 1

    /// A bridge for `session`, serving Cycling Power and Heart Rate too unless told not to.
    public init(session: RideSession, cyclingPower: Bool = true, heartRate: Bool = true) {
        self.session = session
        core = DirconBridgeCore(cyclingPower: cyclingPower, heartRate: heartRate)
        (events, eventContinuation) = AsyncStream<RideBridgeEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
    }

    /// Registers a connection (`name` for messages, e.g. the peer's address) whose bytes are
    /// written with `send`; returns its id.
    public func open(name: String, send: @escaping @Sendable ([UInt8]) async -> Void) -> Int {
        let id = nextConnection
        nextConnection += 1
        connections[id] = (send, DirconFramer(), name)
        eventContinuation.yield(RideBridgeEvent(kind: .connected, text: "app \(name) connected over DIRCON"))
        return id
    }

    /// Bytes read from connection `id`: its whole messages are answered (and control point
    /// requests carried out on the trainer) in order.
    public func receive(_ bytes: [UInt8], from id: Int) async {
        guard var connection = connections[id] else { return }
        let messages = connection.framer.append(bytes)
        connections[id] = connection
        for message in messages {
            let request = message.identifier == DirconMessage.Identifier.writeCharacteristic.rawValue
                && message.uuid() == .fitnessMachineControlPoint ? Array(message.payload.dropFirst(16)) : nil
            var via = ""
            var outputs = core.receive(message, from: id)
            while let index = outputs.firstIndex(where: { if case .forward = $0 { true } else { false } }) {
                guard case let .forward(command, forwarded, connectionID) = outputs[index] else { break }
                await send(Array(outputs[..<index]))
                let failure = await command.carryOut(on: session)
                via = FTMSBridgeCore.TrainerCommand.outcome(failure)
                outputs = Array(outputs[(index + 1)...]) + core.completed(forwarded, failure: failure, connection: connectionID)
            }
            await send(outputs)
            if let request, let response = outputs.lazy.compactMap(Self.controlPointResponse).first {
                let what = (try? FitnessMachineControlPointRequest(bytes: request)).map(RideBridge.describe) ?? "control point write \(request.hexString)"
                eventContinuation.yield(RideBridgeEvent(
                    kind: .request, text: "app \(connection.name): \(what)\(via) → \(response.result)", result: response.result))
            }
        }
    }

    /// The control point response a send carries, if it is one.
    private static func controlPointResponse(_ output: DirconBridgeCore.Output) -> FitnessMachineControlPointResponse? {
        guard case let .send(message, _) = output, message.identifier == DirconMessage.Identifier.notification.rawValue,
              message.uuid() == .fitnessMachineControlPoint else { return nil }
        return try? FitnessMachineControlPointResponse(bytes: Array(message.payload.dropFirst(16)))
    }

    /// Connection `id` closed: its subscriptions end and it releases control.
    public func close(_ id: Int) {
        guard let connection = connections.removeValue(forKey: id) else { return }
        let hadControl = core.controller == id
        core.disconnected(id)
        eventContinuation.yield(RideBridgeEvent(
            kind: .disconnected, text: "app \(connection.name) disconnected\(hadControl ? "; control released" : "")"))
    }

    /// Sends `sample`'s notifications (tick samples) to the subscribed connections.
    public func publish(_ sample: RideSample) async {
        await send(core.publish(sample))
    }

    /// Ends ``events``.
    public func finish() { eventContinuation.finish() }

    private func send(_ outputs: [DirconBridgeCore.Output]) async {
        for case let .send(message, id) in outputs {
            await connections[id]?.send(message.bytes)
        }
    }
}
