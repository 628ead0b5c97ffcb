import BluetideCore
import BluetideHCI

/// An in-process LE "radio" shared by several ``VirtualController``s.
///
/// It carries advertising to scanning controllers (with a per-pair RSSI), connects an initiator
/// to the advertiser whose address and address type match, forwards ACL data between the two
/// ends of a connection and ends connections. Faults can be injected for tests: packet loss,
/// added latency and ``linkLoss(_:_:)``.
///
/// All controller and connection state lives in this actor (one owner). Time only enters
/// through one timeline (``LinkSchedule``): advertising repeats, deliveries held back by the
/// link's latency, the completions that follow them, and link-layer procedures, which end at
/// least one connection interval after their Command Status as on a real radio. One timer task
/// sleeps until the timeline's next deadline; nothing polls.
public actor VirtualLink {
    /// The link's name in the registry (``named(_:)``).
    public nonisolated let name: String

    var controllers: [Int: ControllerState] = [:]
    var connections: [Int: LinkConnection] = [:]
    private var nextControllerID = 1
    private var nextConnectionID = 1

    func nextConnectionNumber() -> Int {
        defer { nextConnectionID += 1 }
        return nextConnectionID
    }

    /// RSSI reported between two controllers unless set by ``setRSSI(_:between:and:)``, dBm.
    public private(set) var defaultRSSI: Int8 = -50
    private var pairRSSI: [PairKey: Int8] = [:]
    /// Probability (0...1) that an over-the-air delivery (advertising report, ACL packet) is lost.
    public private(set) var packetLossRate: Double = 0
    /// Delay added to over-the-air deliveries.
    public private(set) var latency: Duration = .zero
    var random: LinkRandom

    /// Everything the link does later, in the order it falls due.
    var timeline = LinkSchedule()
    /// The task sleeping until ``timeline``'s next deadline, and that deadline.
    var timerTask: Task<Void, Never>?
    var timerDeadline: ContinuousClock.Instant?
    /// Tells a superseded timer task (woken before it saw its cancellation) to do nothing.
    var timerGeneration: UInt64 = 0

    /// Creates an unnamed-registry link. `seed` makes packet loss reproducible.
    public init(name: String = "default", seed: UInt64 = 0x5EED) {
        self.name = name
        self.random = LinkRandom(state: seed)
    }

    // MARK: Registry

    /// The link with this name, created on first use; every `virtual:NAME` transport of a
    /// process shares it.
    public static func named(_ name: String) async -> VirtualLink {
        await VirtualLinkRegistry.shared.link(named: name)
    }

    // MARK: Attaching

    /// Attaches a new controller with a fresh host connection. Its public address defaults to
    /// `00:00:00:00:00:NN` (NN = its attach number on this link). Leaving `.extendedAdvertising`
    /// out of `leFeatures` makes a legacy-only controller (extended commands are unknown to it).
    public func attachController(
        publicAddress: BluetoothAddress? = nil, leFeatures: LEFeatures = VirtualControllerProfile.leFeatures
    ) -> VirtualController {
        let id = nextControllerID
        nextControllerID += 1
        let address = publicAddress.map { BluetoothAddress(value: $0.value, type: .public) }
            ?? BluetoothAddress(value: UInt64(id), type: .public)
        let (stream, continuation) = AsyncStream<HCIPacket>.makeStream()
        controllers[id] = ControllerState(id: id, publicAddress: address, output: continuation, leFeatures: leFeatures)
        return VirtualController(link: self, id: id, publicAddress: address, packets: stream)
    }

    /// Number of controllers attached now.
    public var controllerCount: Int { controllers.count }

    /// Number of live connections on the link.
    public var connectionCount: Int { connections.count }

    func detach(_ id: Int) {
        guard controllers[id] != nil else { return }
        clearState(of: id)
        controllers[id]?.output.finish()
        controllers[id] = nil
    }

    func resetController(_ id: Int) {
        clearState(of: id)
    }

    /// Ends the controller's connections (peers get 0x08 connection timeout), stops advertising,
    /// scanning and initiating, and forgets every setting, as a power cycle would.
    func clearState(of id: Int) {
        guard let state = controllers[id] else { return }
        for connectionID in Set(state.connections.values) {
            endConnection(connectionID, reasonForInitiator: nil, reasonForPeer: .connectionTimeout, initiator: id)
        }
        let fresh = ControllerState(id: id, publicAddress: state.publicAddress, output: state.output, leFeatures: state.leFeatures)
        controllers[id] = fresh
        controllers[id]?.generationCounter = state.generationCounter + 1
    }

    // MARK: Fault injection and radio conditions

    /// Sets the RSSI both controllers report for each other (advertising reports, Read RSSI).
    public func setRSSI(_ dBm: Int8, between a: VirtualController, and b: VirtualController) {
        pairRSSI[PairKey(a.id, b.id)] = dBm
    }

    /// Sets the RSSI used for pairs without their own value.
    public func setDefaultRSSI(_ dBm: Int8) { defaultRSSI = dBm }

    /// Sets the probability (clamped to 0...1) that an advertising report or an ACL packet is
    /// lost in the air. The sender still gets Number Of Completed Packets for lost ACL.
    public func setPacketLossRate(_ rate: Double) { packetLossRate = min(max(rate, 0), 1) }

    /// Sets the delay added to advertising reports and forwarded ACL data (order is kept).
    public func setLatency(_ latency: Duration) { self.latency = max(latency, .zero) }

    /// The radio link breaks: every connection of `a` (only those with `b` when given) ends on
    /// both sides with reason 0x08 connection timeout.
    public func linkLoss(_ a: VirtualController, _ b: VirtualController? = nil) {
        let lost = connections.filter { _, connection in
            guard let ends = connection.ends(from: a.id) else { return false }
            return b.map { ends.remote.controller == $0.id } ?? true
        }
        for id in lost.keys.sorted() {
            endConnection(id, reasonForInitiator: .connectionTimeout, reasonForPeer: .connectionTimeout, initiator: a.id)
        }
    }

    func rssi(_ a: Int, _ b: Int) -> Int8 { pairRSSI[PairKey(a, b)] ?? defaultRSSI }

    /// Draws whether the next over-the-air delivery is lost.
    func airLoses() -> Bool {
        guard packetLossRate > 0 else { return false }
        return Double.random(in: 0..<1, using: &random) < packetLossRate
    }

    // MARK: Output

    /// Sends a packet to the controller's host now, honouring the host's event masks.
    func emit(_ id: Int, _ packet: HCIPacket) {
        guard let state = controllers[id] else { return }
        if case let .event(code, parameters) = packet, !state.allows(eventCode: code, parameters: parameters) { return }
        state.output.yield(packet)
    }

    func emit(_ id: Int, _ event: HCIEvent) { emit(id, event.packet) }

    func emit(_ id: Int, _ event: LEMetaEvent) { emit(id, HCIEvent.leMeta(event).packet) }

    /// Delivers a packet that crossed the air: after the link's latency, and only if the
    /// connection it belongs to (for ACL) still exists then. Deliveries to one controller keep
    /// their order even when the latency changes meanwhile.
    func deliverOverAir(_ id: Int, _ packet: HCIPacket) {
        guard controllers[id] != nil else { return }
        let queued = timeline.lastDue { action in
            if case let .deliver(controller, _) = action { return controller == id }
            return false
        }
        guard latency > .zero || queued != nil else {
            emit(id, packet)
            return
        }
        let due = max(ContinuousClock.now + latency, queued ?? ContinuousClock.now)
        schedule(.deliver(controller: id, packet: packet), at: due)
    }

    /// When the last delivery queued for controller `id` falls due (nil: nothing queued).
    func lastDeliveryDue(to id: Int) -> ContinuousClock.Instant? {
        timeline.lastDue { action in
            if case let .deliver(controller, _) = action { return controller == id }
            return false
        }
    }
}

/// An unordered pair of controller identifiers.
struct PairKey: Hashable {
    let low: Int
    let high: Int
    init(_ a: Int, _ b: Int) {
        low = min(a, b)
        high = max(a, b)
    }
}

/// Process-wide links by name, for the `virtual:NAME` transport.
actor VirtualLinkRegistry {
    static let shared = VirtualLinkRegistry()
    private var links: [String: VirtualLink] = [:]

    func link(named name: String) -> VirtualLink {
        if let link = links[name] { return link }
        let link = VirtualLink(name: name)
        links[name] = link
        return link
    }
}
