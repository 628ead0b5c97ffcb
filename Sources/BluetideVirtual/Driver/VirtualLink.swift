import BluetideBase
import BluetideHCI
import BluetideSupport
import Synchronization

/// An in-process LE "radio" shared by several ``VirtualController``s.
///
/// It carries advertising to scanning controllers (with a per-pair RSSI), connects an initiator
/// to the advertiser whose address and address type match, forwards ACL data between the two
/// ends of a connection and ends connections. Faults can be injected for tests: packet loss,
/// added latency and ``linkLoss(_:_:)``.
///
/// The protocol logic is a value (``LinkCore``) that takes inputs with the time and returns
/// packets for hosts; this class only drives it. One lock owns the core and the packets waiting
/// for each host, so a host's packets are handled where it hands them in (no task, no actor hop
/// per packet), and a reader takes everything queued for it at once. Time comes from the
/// injected clock: one timer task sleeps until the core's next deadline (advertising repeats,
/// deliveries held back by latency, link-layer procedures, which end at least one connection
/// interval after their Command Status as on a real radio). Nothing polls.
public final class VirtualLink: Sendable {
    /// The link's name in the registry (``named(_:)``).
    public let name: String

    private let clock: LinkClock
    private let state: Mutex<DriverState>

    /// Creates a link running on `clock` (a manual clock in tests: advertising repeats, latency
    /// and link-layer procedures then wait for the test to advance it). `seed` makes packet
    /// loss and LE Rand reproducible.
    public init<C: Clock>(name: String = "default", seed: UInt64 = 0x5EED, clock: C) where C.Duration == Duration {
        self.name = name
        self.clock = LinkClock(clock)
        state = Mutex(DriverState(core: LinkCore(seed: seed)))
    }

    /// Creates a link on the continuous clock. `seed` makes packet loss and LE Rand reproducible.
    public convenience init(name: String = "default", seed: UInt64 = 0x5EED) {
        self.init(name: name, seed: seed, clock: ContinuousClock())
    }

    deinit {
        state.withLock { $0.timer.task?.cancel() }
    }

    // MARK: Registry

    /// The link with this name, created on first use; every `virtual:NAME` transport of a
    /// process shares it.
    public static func named(_ name: String) async -> VirtualLink {
        await VirtualLinkRegistry.shared.link(named: name)
    }

    /// The link with this name, created on first use running on `clock` (a link already in use
    /// keeps its own clock): so a test or a virtual world puts the radio on the same clock as
    /// its hosts.
    public static func named<C: Clock>(_ name: String, clock: C) async -> VirtualLink where C.Duration == Duration {
        await VirtualLinkRegistry.shared.link(named: name) { VirtualLink(name: name, clock: clock) }
    }

    // MARK: Attaching

    /// Attaches a new controller with a fresh host connection. Its public address defaults to
    /// `00:00:00:00:00:NN` (NN = its attach number on this link). Leaving `.extendedAdvertising`
    /// out of `leFeatures` makes a legacy-only controller (extended commands are unknown to it).
    public func attachController(
        publicAddress: BluetoothAddress? = nil, leFeatures: LEFeatures = VirtualControllerProfile.leFeatures
    ) async -> VirtualController {
        let (id, address) = state.withLock { state in
            let attached = state.core.attach(publicAddress: publicAddress, leFeatures: leFeatures)
            state.ports[attached.id] = HostPort()
            return attached
        }
        return VirtualController(link: self, id: id, publicAddress: address)
    }

    /// Number of controllers attached now.
    public var controllerCount: Int {
        get async { state.withLock { $0.core.controllers.count } }
    }

    /// Number of live connections on the link.
    public var connectionCount: Int {
        get async { state.withLock { $0.core.connections.count } }
    }

    // MARK: Fault injection and radio conditions

    /// RSSI reported between two controllers unless set by ``setRSSI(_:between:and:)``, dBm.
    public var defaultRSSI: Int8 {
        get async { state.withLock { $0.core.defaultRSSI } }
    }

    /// Probability (0...1) that an over-the-air delivery (advertising report, ACL packet) is lost.
    public var packetLossRate: Double {
        get async { state.withLock { $0.core.packetLossRate } }
    }

    /// Delay added to over-the-air deliveries.
    public var latency: Duration {
        get async { state.withLock { $0.core.latency } }
    }

    /// Sets the RSSI both controllers report for each other (advertising reports, Read RSSI).
    public func setRSSI(_ dBm: Int8, between a: VirtualController, and b: VirtualController) async {
        state.withLock { $0.core.pairRSSI[PairKey(a.id, b.id)] = dBm }
    }

    /// Sets the RSSI used for pairs without their own value.
    public func setDefaultRSSI(_ dBm: Int8) async {
        state.withLock { $0.core.defaultRSSI = dBm }
    }

    /// Sets the probability (clamped to 0...1) that an advertising report or an ACL packet is
    /// lost in the air. The sender still gets Number Of Completed Packets for lost ACL.
    public func setPacketLossRate(_ rate: Double) async {
        state.withLock { $0.core.packetLossRate = min(max(rate, 0), 1) }
    }

    /// Sets the delay added to advertising reports and forwarded ACL data (order is kept).
    public func setLatency(_ latency: Duration) async {
        state.withLock { $0.core.latency = max(latency, .zero) }
    }

    /// The radio link breaks: every connection of `a` (only those with `b` when given) ends on
    /// both sides with reason 0x08 connection timeout.
    public func linkLoss(_ a: VirtualController, _ b: VirtualController? = nil) async {
        apply(.linkLoss(a.id, b?.id))
    }

    // MARK: Hosts (used by VirtualController)

    /// A host hands its controller packets; they are handled now, in order.
    func fromHost(_ id: Int, _ packet: HCIPacket) {
        apply(.fromHost(controller: id, packet))
    }

    /// A host hands its controller several packets: handled in order in one turn of the lock.
    func fromHost(_ id: Int, batch packets: [HCIPacket]) {
        guard !packets.isEmpty else { return }
        let wakeups = state.withLock { state -> [Wakeup] in
            let now = clock.now()
            for packet in packets { state.core.handle(.fromHost(controller: id, packet), now: now, into: &state.outputs) }
            return settle(&state, now: now)
        }
        Self.resume(wakeups)
    }

    /// The host left: the controller leaves the link; packets already queued can still be read.
    func detach(_ id: Int) { apply(.detach(controller: id)) }

    /// The controller's handle is gone, so nobody can read its packets any more: it leaves the
    /// link and what was queued for its host is dropped.
    func release(_ id: Int) {
        apply(.detach(controller: id))
        state.withLock { _ = $0.ports.removeValue(forKey: id) }
    }

    /// The controller forgets everything as a power cycle would, telling its host nothing.
    func reset(_ id: Int) { apply(.reset(controller: id)) }

    /// The next packet for controller `id`'s host (nil once the controller left).
    func nextPacket(for id: Int) async -> HCIPacket? {
        switch await next(for: id, batch: false) {
        case let .packet(packet): packet
        case let .batch(packets): packets.first
        case .end: nil
        }
    }

    /// Every packet queued for controller `id`'s host, waiting for at least one (nil once the
    /// controller left).
    func nextBatch(for id: Int) async -> [HCIPacket]? {
        switch await next(for: id, batch: true) {
        case let .packet(packet): [packet]
        case let .batch(packets): packets
        case .end: nil
        }
    }

    // MARK: Driving the core

    /// A reader to resume once the lock is released. (Structs, not tuples, in the containers of
    /// the data path: a tuple element type costs a runtime metadata lookup per array.)
    private struct Wakeup {
        let continuation: CheckedContinuation<HostPort.Delivery, Never>
        let delivery: HostPort.Delivery
    }

    /// Everything the driver owns, behind its one lock.
    private struct DriverState: Sendable {
        var core: LinkCore
        var ports: [Int: HostPort] = [:]
        /// Outputs of the core not yet handed to ports (reused buffers).
        var outputs: [LinkOutput] = []
        var spare: [LinkOutput] = []
        /// Ports with a waiting reader that got packets in this turn (reused buffer).
        var touched: [Int] = []
        var timer = TimerState()
        var nextToken: UInt64 = 0
    }

    /// The one task sleeping until the core's next deadline.
    private struct TimerState: Sendable {
        var task: Task<Void, Never>?
        /// What the task sleeps until; nil when no task runs.
        var deadline: LinkTime?
        /// Tells a superseded task (woken before it saw its cancellation) to stop.
        var generation: UInt64 = 0
    }

    private func apply(_ input: LinkInput) {
        let wakeups = state.withLock { state -> [Wakeup] in
            let now = clock.now()
            state.core.handle(input, now: now, into: &state.outputs)
            return settle(&state, now: now)
        }
        Self.resume(wakeups)
    }

    private static func resume(_ wakeups: [Wakeup]) {
        for wakeup in wakeups { wakeup.continuation.resume(returning: wakeup.delivery) }
    }

    /// Hands the core's outputs to the ports, gives waiting readers what they asked for (telling
    /// the core, whose completions may produce more outputs), and makes sure the timer sleeps
    /// until the core's next deadline. Returns the readers to resume.
    private func settle(_ state: inout DriverState, now: LinkTime) -> [Wakeup] {
        var wakeups: [Wakeup] = []
        while !state.outputs.isEmpty {
            swap(&state.outputs, &state.spare)
            for output in state.spare {
                let id: Int
                // In place: `ports[id]?.…` would allocate a coroutine frame for the port per access.
                let waiting: Bool?
                switch output {
                case let .packet(controller, packet):
                    id = controller
                    waiting = state.ports.inPlace(id) { port in
                        port.append(packet)
                        return port.waiter != nil
                    }
                case let .finished(controller):
                    id = controller
                    waiting = state.ports.inPlace(id) { port in
                        port.finished = true
                        return port.waiter != nil
                    }
                }
                if waiting == true, !state.touched.contains(id) { state.touched.append(id) }
            }
            state.spare.removeAll(keepingCapacity: true)
            // Each waiting reader gets everything that arrived for it in this turn at once.
            for id in state.touched {
                let handed = state.ports.inPlace(id) { port -> (HostPort.Waiter, HostPort.Taken)? in
                    guard let waiter = port.waiter, let taken = port.take(batch: waiter.wantsBatch) else { return nil }
                    port.waiter = nil
                    return (waiter, taken)
                }
                guard let (waiter, taken) = handed ?? nil else { continue }
                if case .end = taken.delivery { state.ports[id] = nil }
                wakeups.append(Wakeup(continuation: waiter.continuation, delivery: taken.delivery))
                if taken.count > 0 { state.core.handle(.hostTook(controller: id, count: taken.count), now: now, into: &state.outputs) }
            }
            state.touched.removeAll(keepingCapacity: true)
        }
        armTimer(&state)
        return wakeups
    }

    /// Takes what a reader asks for, waiting when nothing is queued.
    private func next(for id: Int, batch: Bool) async -> HostPort.Delivery {
        // Most reads find packets queued: no suspension, no continuation.
        let first = state.withLock { state -> ReadOutcome in
            if let ready = takeIfReady(&state, id, batch: batch) { return .ready(ready) }
            state.nextToken &+= 1
            return .wait(token: state.nextToken)
        }
        let token: UInt64
        switch first {
        case let .ready(ready):
            Self.resume(ready.wakeups)
            return ready.delivery
        case let .wait(waitToken):
            token = waitToken
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<HostPort.Delivery, Never>) in
                let ready = state.withLock { state -> Ready? in
                    if state.ports.inPlace(id, { $0.cancelledToken == token }) == true { return Ready(delivery: .end, wakeups: []) }
                    if let ready = takeIfReady(&state, id, batch: batch) { return ready }
                    state.ports.inPlace(id) { $0.waiter = HostPort.Waiter(token: token, wantsBatch: batch, continuation: continuation) }
                    return nil
                }
                guard let ready else { return }
                Self.resume(ready.wakeups)
                continuation.resume(returning: ready.delivery)
            }
        } onCancel: {
            let waiter = state.withLock { state -> HostPort.Waiter? in
                if let waiter = state.ports[id]?.waiter, waiter.token == token {
                    state.ports[id]?.waiter = nil
                    return waiter
                }
                state.ports[id]?.cancelledToken = token
                return nil
            }
            waiter?.continuation.resume(returning: .end)
        }
    }

    /// What a reader gets at once, and the readers its taking wakes.
    private struct Ready {
        let delivery: HostPort.Delivery
        let wakeups: [Wakeup]
    }

    /// A read either gets something at once or waits, identified by a token.
    private enum ReadOutcome {
        case ready(Ready)
        case wait(token: UInt64)
    }

    /// Takes what a reader asks for if anything is there (``HostPort/Delivery/end`` once the
    /// controller left); nil when the reader must wait.
    private func takeIfReady(_ state: inout DriverState, _ id: Int, batch: Bool) -> Ready? {
        guard let taken = state.ports.inPlace(id, { $0.take(batch: batch) }) else { return Ready(delivery: .end, wakeups: []) }
        guard let taken else { return nil }
        return Ready(delivery: taken.delivery, wakeups: took(&state, id, taken))
    }

    /// A reader took `taken` from port `id`: the core learns it (completions for the senders).
    private func took(_ state: inout DriverState, _ id: Int, _ taken: HostPort.Taken) -> [Wakeup] {
        if case .end = taken.delivery {
            state.ports[id] = nil
            return []
        }
        let now = clock.now()
        state.core.handle(.hostTook(controller: id, count: taken.count), now: now, into: &state.outputs)
        return settle(&state, now: now)
    }

    // MARK: Timer

    /// Makes sure a timer task sleeps until the core's earliest deadline. A running task whose
    /// deadline is not later keeps going (it re-reads the deadline when it wakes), so a steady
    /// stream of deadlines (latency, advertising) costs no new task.
    private func armTimer(_ state: inout DriverState) {
        guard let deadline = state.core.nextDeadline else { return }
        if let current = state.timer.deadline, current <= deadline { return }
        state.timer.task?.cancel()
        state.timer.generation &+= 1
        state.timer.deadline = deadline
        let generation = state.timer.generation
        let sleep = clock.sleep
        state.timer.task = Task { [weak self] in
            var next = deadline
            while true {
                do { try await sleep(next) } catch { return }
                guard let following = self?.timerFired(generation) else { return }
                next = following
            }
        }
    }

    /// The timer woke: runs what is due; returns when to wake next (nil: this task stops).
    private func timerFired(_ generation: UInt64) -> LinkTime? {
        let fired = state.withLock { state -> Fired in
            guard generation == state.timer.generation else { return Fired(next: nil, wakeups: []) }
            let now = clock.now()
            state.core.handle(.timer, now: now, into: &state.outputs)
            // The task keeps running: settle must not start another.
            state.timer.deadline = .zero
            let wakeups = settle(&state, now: now)
            let next = state.core.nextDeadline
            state.timer.deadline = next
            if next == nil { state.timer.task = nil }
            return Fired(next: next, wakeups: wakeups)
        }
        Self.resume(fired.wakeups)
        return fired.next
    }

    /// What a turn of the timer did: when to wake next, and the readers to resume.
    private struct Fired {
        let next: LinkTime?
        let wakeups: [Wakeup]
    }
}

/// Process-wide links by name, for the `virtual:NAME` transport.
actor VirtualLinkRegistry {
    static let shared = VirtualLinkRegistry()
    private var links: [String: VirtualLink] = [:]

    func link(named name: String, make: (() -> VirtualLink)? = nil) -> VirtualLink {
        if let link = links[name] { return link }
        let link = make?() ?? VirtualLink(name: name)
        links[name] = link
        return link
    }
}
