import BluetideMQTT

/// What a gateway needs of its MQTT client: an ``MQTTClient`` in use; in tests a stand-in that
/// records what is published, so the gateway's timing can be checked without a broker.
public protocol GatewayMQTT: Sendable {
    /// The messages of the subscriptions, as they arrive.
    var messages: AsyncStream<MQTTMessage> { get }
    /// The link to the broker: connected, lost, refused, messages queued.
    var events: AsyncStream<MQTTEvent> { get }
    /// Messages the outbox dropped (oldest first) while the broker was away.
    var droppedCount: Int { get }
    /// Publishes `message` (QoS 1 waits in the outbox while the broker is away); returns its id.
    @discardableResult func publish(_ message: MQTTMessage) throws(MQTTError) -> Int32
    /// Subscribes to `filter`, waiting at most `timeout` (wall clock) for the broker's answer.
    func subscribe(_ filter: String, qos: MQTTQoS, timeout: Duration) async throws
}

extension MQTTClient: GatewayMQTT {}
