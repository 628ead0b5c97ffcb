import BluetideBase
import BluetideHCI
import BluetideSupport

/// Something that happens to a virtual link, fed to ``LinkCore/handle(_:now:into:)``.
enum LinkInput: Sendable {
    /// A host handed its controller a packet (command or ACL data).
    case fromHost(controller: Int, HCIPacket)
    /// A controller's host took `count` more of the packets emitted to it, in order.
    case hostTook(controller: Int, count: Int)
    /// The driver woke at (or after) ``LinkCore/nextDeadline``: run what is due.
    case timer
    /// The host went away: connections end for the peers (0x08), the controller leaves.
    case detach(controller: Int)
    /// The controller forgets everything as if power cycled, without telling its host.
    case reset(controller: Int)
    /// The radio between `a` and `b` (every peer of `a` when nil) breaks: both sides get 0x08.
    case linkLoss(Int, Int?)
}

/// What the core asks its driver to do.
enum LinkOutput: Sendable, Equatable {
    /// Hand `packet` to the host of `controller` (in this order, after earlier ones).
    case packet(controller: Int, HCIPacket)
    /// The host of `controller` gets nothing more: its packets end after those already given.
    case finished(controller: Int)
}

/// All of a virtual link's protocol state and logic, without I/O, tasks or clocks: every
/// controller (its HCI state, advertising sets, scanning, connections), the connections between
/// them, the timeline of what happens later, the radio conditions and the seeded generator.
///
/// Inputs come in with the time they happen (``LinkTime``, since the link started) and leave
/// outputs: packets for hosts, in order. ``nextDeadline`` says when the driver must feed
/// ``LinkInput/timer``. Given the same inputs at the same times, it produces the same outputs.
struct LinkCore: Sendable {
    var controllers: [Int: ControllerState] = [:]
    var connections: [Int: LinkConnection] = [:]
    /// What each controller's host was given and took (kept across HCI Reset).
    var deliveries: [Int: DeliveryLedger] = [:]
    private var nextControllerID = 1
    private var nextConnectionID = 1

    /// RSSI reported between two controllers unless set for the pair, dBm.
    var defaultRSSI: Int8 = -50
    var pairRSSI: [PairKey: Int8] = [:]
    /// Probability (0...1) that an over-the-air delivery (advertising report, ACL packet) is lost.
    var packetLossRate: Double = 0
    /// Delay added to over-the-air deliveries.
    var latency: Duration = .zero
    /// The link's one source of randomness: packet loss and LE Rand.
    var random: SplitMix64

    /// Everything the link does later, in the order it falls due.
    var timeline = LinkSchedule()
    /// The time of the input being handled.
    private(set) var now: LinkTime = .zero
    /// Outputs of the input being handled.
    private var pending: [LinkOutput] = []
    /// Scratch list of completed packets (reused, so taking packets allocates nothing).
    private var completedScratch: [SentPacket] = []

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    /// When ``LinkInput/timer`` must be fed next (nil: nothing scheduled).
    var nextDeadline: LinkTime? { timeline.nextDeadline }

    /// Handles one input at time `now` (never earlier than a previous input's: an earlier time
    /// is taken as the latest seen) and appends what it causes to `outputs`.
    mutating func handle(_ input: LinkInput, now: LinkTime, into outputs: inout [LinkOutput]) {
        self.now = max(self.now, now)
        switch input {
        case let .fromHost(id, packet):
            handleFromHost(id, packet)
        case let .hostTook(id, count):
            hostTook(id, count: count)
        case .timer:
            for action in timeline.takeDue(now: self.now) { run(action) }
        case let .detach(id):
            detach(id)
        case let .reset(id):
            clearState(of: id)
        case let .linkLoss(a, b):
            linkLoss(a, b)
        }
        if outputs.isEmpty {
            swap(&outputs, &pending)
        } else {
            outputs.append(contentsOf: pending)
            pending.removeAll(keepingCapacity: true)
        }
    }

    // MARK: Attaching and leaving

    /// Adds a controller with this public address (`00:00:00:00:00:NN` by default, NN = its
    /// number on the link) and LE features; returns its number and address.
    mutating func attach(publicAddress: BluetoothAddress?, leFeatures: LEFeatures) -> (id: Int, address: BluetoothAddress) {
        let id = nextControllerID
        nextControllerID += 1
        let address = publicAddress.map { BluetoothAddress(value: $0.value, type: .public) }
            ?? BluetoothAddress(value: UInt64(id), type: .public)
        controllers[id] = ControllerState(id: id, publicAddress: address, leFeatures: leFeatures)
        deliveries[id] = DeliveryLedger()
        return (id, address)
    }

    private mutating func detach(_ id: Int) {
        guard controllers[id] != nil else { return }
        clearState(of: id)
        controllers[id] = nil
        deliveries[id] = nil
        timeline.removeAll { action in
            switch action {
            case let .deliver(controller, _, _), let .advertise(controller, _, _), let .completed(controller, _):
                controller == id
            case .procedure:
                false
            }
        }
        pending.append(.finished(controller: id))
    }

    /// Ends the controller's connections (peers get 0x08 connection timeout), stops advertising,
    /// scanning and initiating, and forgets every setting, as a power cycle would.
    mutating func clearState(of id: Int) {
        guard let state = controllers[id] else { return }
        for connectionID in Set(state.connections.values).sorted() {
            endConnection(connectionID, reasonForInitiator: nil, reasonForPeer: .connectionTimeout, initiator: id)
        }
        var fresh = ControllerState(id: id, publicAddress: state.publicAddress, leFeatures: state.leFeatures)
        fresh.generationCounter = state.generationCounter + 1
        controllers[id] = fresh
    }

    mutating func takeConnectionNumber() -> Int {
        defer { nextConnectionID += 1 }
        return nextConnectionID
    }

    // MARK: Radio conditions

    private mutating func linkLoss(_ a: Int, _ b: Int?) {
        let lost = connections.filter { _, connection in
            guard let ends = connection.ends(from: a) else { return false }
            return b.map { ends.remote.controller == $0 } ?? true
        }
        for id in lost.keys.sorted() {
            endConnection(id, reasonForInitiator: .connectionTimeout, reasonForPeer: .connectionTimeout, initiator: a)
        }
    }

    /// Whether controller `id` is on the link (without copying its state).
    func isAttached(_ id: Int) -> Bool { controllers.index(forKey: id) != nil }

    func rssi(_ a: Int, _ b: Int) -> Int8 { pairRSSI[PairKey(a, b)] ?? defaultRSSI }

    /// Draws whether the next over-the-air delivery is lost.
    mutating func airLoses() -> Bool {
        guard packetLossRate > 0 else { return false }
        return random.chance(packetLossRate)
    }

    // MARK: Output

    /// Sends a packet to the controller's host now, honouring the host's event masks. Returns
    /// the packet's sequence number for the host (nil when masked or the controller is gone).
    @discardableResult
    mutating func emit(_ id: Int, _ packet: HCIPacket) -> UInt64? {
        if case let .event(code, parameters) = packet {
            guard controllers.inPlace(id, { $0.allows(eventCode: code, parameters: parameters) }) == true else { return nil }
        }
        guard let sequence = deliveries.inPlace(id, { $0.emit() }) else { return nil }
        pending.append(.packet(controller: id, packet))
        return sequence
    }

    mutating func emit(_ id: Int, _ event: HCIEvent) { emit(id, event.packet) }

    mutating func emit(_ id: Int, _ event: LEMetaEvent) { emit(id, HCIEvent.leMeta(event).packet) }

    /// Delivers a packet that crossed the air: after the link's latency, and only if the
    /// connection it belongs to (for ACL) still exists then. Deliveries to one controller keep
    /// their order even when the latency changes meanwhile. `completes` is the sender's packet
    /// this delivery finishes.
    mutating func deliverOverAir(_ id: Int, _ packet: HCIPacket, completes: SentPacket? = nil) {
        guard isAttached(id) else { return }
        let queued = lastDeliveryDue(to: id)
        guard latency > .zero || queued != nil else {
            arrive(id, packet, completes: completes)
            return
        }
        let due = max(now + latency, queued ?? now)
        timeline.add(.deliver(controller: id, packet: packet, completes: completes), at: due)
    }

    /// A packet reaches the controller's host now; a sender's packet it finishes is completed
    /// once that host has taken it.
    mutating func arrive(_ id: Int, _ packet: HCIPacket, completes: SentPacket?) {
        guard let sequence = emit(id, packet), let completes else { return }
        deliveries.inPlace(id) { $0.expect(completes, at: sequence) }
    }

    /// When the last delivery queued for controller `id` falls due (nil: nothing queued).
    func lastDeliveryDue(to id: Int) -> LinkTime? {
        guard timeline.count > 0 else { return nil }
        return timeline.lastDue { action in
            if case let .deliver(controller, _, _) = action { return controller == id }
            return false
        }
    }

    /// Schedules `action` after `delay` (zero: at the driver's next turn, never inline).
    mutating func schedule(_ action: LinkAction, after delay: Duration) {
        timeline.add(action, at: now + max(delay, .zero))
    }

    // MARK: Completions

    /// The host of `id` took `count` more packets: every sender packet they finished is reported
    /// to its sender, one Number Of Completed Packets per sender.
    private mutating func hostTook(_ id: Int, count: Int) {
        guard count > 0 else { return }
        completedScratch.removeAll(keepingCapacity: true)
        var completed = completedScratch
        completedScratch = []
        deliveries.inPlace(id) { $0.take(count, into: &completed) }
        completedScratch = completed
        guard !completedScratch.isEmpty else { return }
        // One event per sender, one entry per handle, senders in the order they first completed.
        var bySender: [SenderCompletions] = []
        for packet in completedScratch {
            let at: Int
            if let known = bySender.firstIndex(where: { $0.sender == packet.sender }) {
                at = known
            } else {
                bySender.append(SenderCompletions(sender: packet.sender))
                at = bySender.count - 1
            }
            if let entry = bySender[at].entries.firstIndex(where: { $0.handle == packet.handle }) {
                bySender[at].entries[entry].completedPackets += 1
            } else {
                bySender[at].entries.append(.init(handle: packet.handle, completedPackets: 1))
            }
        }
        for group in bySender { completePackets(group.sender, group.entries) }
    }

    /// Returns ACL buffers of `controller` to its host with one Number Of Completed Packets
    /// (entries of handles with nothing in flight, e.g. after a disconnection, are left out).
    mutating func completePackets(_ controller: Int, _ entries: [HCINumberOfCompletedPackets.Entry]) {
        var reported: [HCINumberOfCompletedPackets.Entry] = []
        reported.reserveCapacity(entries.count)
        for entry in entries {
            let count = controllers.inPlace(controller) { state -> Int in
                guard let inFlight = state.aclInFlight[entry.handle], inFlight > 0 else { return 0 }
                let count = min(inFlight, Int(entry.completedPackets))
                state.aclInFlight[entry.handle] = inFlight > count ? inFlight - count : nil
                state.aclInFlightTotal -= count
                return count
            } ?? 0
            guard count > 0 else { continue }
            reported.append(.init(handle: entry.handle, completedPackets: UInt16(count)))
        }
        guard !reported.isEmpty else { return }
        emit(controller, HCIEvent.numberOfCompletedPackets(.init(entries: reported)))
    }
}

/// The packets of one sender completed by one take, by handle.
struct SenderCompletions {
    let sender: Int
    var entries: [HCINumberOfCompletedPackets.Entry] = []
}

/// An unordered pair of controller identifiers.
struct PairKey: Hashable, Sendable {
    let low: Int
    let high: Int
    init(_ a: Int, _ b: Int) {
        low = min(a, b)
        high = max(a, b)
    }
}
