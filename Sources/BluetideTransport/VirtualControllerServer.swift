import BluetideBase
import BluetideHCI
import BluetideVirtual
import NIOCore
import NIOPosix
import Synchronization

/// Virtual LE controllers served over TCP (H4 framing), one port per controller, all on one
/// shared in-process ``VirtualLink``: separate processes (our own `HostStack` over
/// `tcp-client:…`, Bumble hosts, any H4 host) share one virtual radio. What
/// `bluetide controllers tcp-server:_:9000 tcp-server:_:9001` runs.
///
/// Each port takes **one host at a time**; a second connection is closed (after a short grace
/// period, so a host that reconnects at once is not refused because its old close was late). Every host
/// gets a fresh ``VirtualController`` and its own H4 framer: when the host's connection ends
/// (closed, or bytes that cannot be framed), its controller leaves the link, so its peers get
/// Disconnection Complete with reason 0x08 (as after a supervision timeout) and its advertising,
/// scanning and pending connection stop. The next host on that port starts from a clean
/// controller with the same public address. (Bumble's controllers keep such stale state.)
public final class VirtualControllerServer: Sendable {
    /// Where one controller listens: what a `tcp-server:HOST:PORT` spec asks for.
    public struct Listener: Sendable, Equatable, CustomStringConvertible {
        /// Interface to listen on; nil = this computer only, 127.0.0.1 (`_` in a spec; name 0.0.0.0 for every interface).
        public var host: String?
        /// TCP port; 0 = any free port.
        public var port: Int

        /// Listens on `host` (nil = 127.0.0.1, this computer only) and `port` (0 = any free port).
        public init(host: String? = nil, port: Int) {
            self.host = host
            self.port = port
        }

        /// Parses `tcp-server:HOST:PORT` (`_` = this computer only, port 0 = any free port); any other
        /// transport kind is refused with a message saying what is expected.
        public init(spec text: String) throws(TransportSpecError) {
            let spec = try TransportSpec(parsing: text)
            guard case let .tcpServer(host, port) = spec.kind, spec.snoopPath == nil else {
                throw TransportSpecError(
                    spec: text, problem: "a virtual controller listens for its host: expected tcp-server:HOST:PORT",
                    example: "tcp-server:_:9000")
            }
            self.init(host: host, port: port)
        }

        /// The spec form, `tcp-server:HOST:PORT`.
        public var description: String { TransportSpec(.tcpServer(host: host, port: port)).description }
    }

    /// One listening controller.
    public struct Endpoint: Sendable, Equatable {
        /// Controller number, from 1, in the order the listeners were given.
        public let number: Int
        /// The interface listened on (`127.0.0.1` unless a host was named; `0.0.0.0` for every one).
        public let host: String
        /// The TCP port actually listened on (the chosen one when 0 was asked for).
        public let port: Int
        /// Public address of every controller served on this port (Read BD_ADDR returns it).
        public let publicAddress: BluetoothAddress
    }

    /// Something that happened on a port, for logs.
    public enum Event: Sendable, Equatable, CustomStringConvertible {
        /// A host connected to controller `controller` and got a fresh controller.
        case hostConnected(controller: Int, peer: String)
        /// The host left (`reason` says how); its controller has left the link.
        case hostDisconnected(controller: Int, peer: String, reason: String)
        /// A second host tried to connect while one was served; its connection was closed.
        case hostRefused(controller: Int, peer: String)

        public var description: String {
            switch self {
            case let .hostConnected(controller, peer): "controller \(controller): host \(peer) connected"
            case let .hostDisconnected(controller, peer, reason):
                "controller \(controller): host \(peer) disconnected (\(reason)); controller reset for the next host"
            case let .hostRefused(controller, peer):
                "controller \(controller): refused host \(peer) (another host is connected)"
            }
        }
    }

    /// Per-port state on the port's event loop.
    private struct PortSlot {
        /// The connected host, if any.
        var client: (any Channel)?
        /// The latest host session; the next one waits for it, so its controller has left the
        /// link before the new one attaches.
        var session: Task<Void, Never>?
        /// Set by ``close()``: no more hosts.
        var closed = false
    }

    private struct Port: Sendable {
        let channel: any Channel
        let loop: any EventLoop
        let slot: NIOLoopBoundBox<PortSlot>
    }

    /// The radio every controller is attached to.
    public let link: VirtualLink
    /// The listening controllers, in the order given.
    public let endpoints: [Endpoint]
    /// Host connects, refusals and departures, in order. Ends after ``close()``.
    public let events: AsyncStream<Event>
    private let eventSink: AsyncStream<Event>.Continuation
    private let ports: [Port]

    private init(
        link: VirtualLink, endpoints: [Endpoint], ports: [Port], events: AsyncStream<Event>,
        eventSink: AsyncStream<Event>.Continuation
    ) {
        self.link = link
        self.endpoints = endpoints
        self.ports = ports
        self.events = events
        self.eventSink = eventSink
    }

    /// The public address of controller `number` (1-based): `00:00:00:00:00:NN`-style, the
    /// number in the low bytes, as Bumble's launcher does.
    public static func publicAddress(forController number: Int) -> BluetoothAddress {
        BluetoothAddress(value: UInt64(truncatingIfNeeded: number) & 0xFFFF_FFFF_FFFF, type: .public)
    }

    /// Starts listening on every listener. `link` defaults to a fresh link of its own (pass one to
    /// share the radio with in-process controllers; their public addresses must then differ from
    /// ``publicAddress(forController:)``). Throws ``TransportError/openFailed(_:)`` naming the
    /// port when one cannot be listened on (the others are closed again).
    /// `rssi` gives pairs of controllers (by number) their own RSSI, applied whenever both have a host.
    public static func start(_ listeners: [Listener], link: VirtualLink? = nil, rssi: [ControllerPairRSSI] = []) async throws -> VirtualControllerServer {
        let link = link ?? VirtualLink(name: "controllers")
        let plan = RSSIPlan(rules: rssi)
        let (events, eventSink) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        var ports: [Port] = []
        var endpoints: [Endpoint] = []
        for (offset, listener) in listeners.enumerated() {
            let number = offset + 1
            let address = publicAddress(forController: number)
            do {
                let port = try await listen(listener, number: number, address: address, link: link, plan: plan, events: eventSink)
                ports.append(port)
                endpoints.append(Endpoint(
                    number: number, host: listener.host ?? "127.0.0.1", port: port.channel.localAddress?.port ?? listener.port,
                    publicAddress: address))
            } catch {
                for port in ports { try? await port.channel.close().get() }
                eventSink.finish()
                throw TransportError.openFailed(
                    "\(listener): cannot listen (\(error)). Is the port already in use? Pick another one, or 0 for any free port.")
            }
        }
        return VirtualControllerServer(link: link, endpoints: endpoints, ports: ports, events: events, eventSink: eventSink)
    }

    private static func listen(
        _ listener: Listener, number: Int, address: BluetoothAddress, link: VirtualLink, plan: RSSIPlan,
        events: AsyncStream<Event>.Continuation
    ) async throws -> Port {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let slot = try await loop.submit { NIOLoopBoundBox(PortSlot(), eventLoop: loop) }.get()
        let bootstrap = ServerBootstrap(group: loop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { child in
                admit(child, slot: slot, attempt: 0, number: number, address: address, link: link, plan: plan, events: events)
            }
        let channel = try await bootstrap.bind(host: listener.host ?? "127.0.0.1", port: listener.port).get()
        return Port(channel: channel, loop: loop, slot: slot)
    }

    /// How long a new host waits for the port's previous host to be gone before it is refused:
    /// a host that closes and reconnects at once is accepted, even if its close is seen after
    /// the new connection.
    static let admissionRetries = 10
    static let admissionRetryInterval = TimeAmount.milliseconds(50)

    /// Accepts `child` as the port's host (fresh framer, fresh session) once the port is free,
    /// or fails (which closes `child`) when another host keeps it. Runs on the port's loop; the
    /// child is only registered, so only read, once accepted.
    private static func admit(
        _ child: any Channel, slot: NIOLoopBoundBox<PortSlot>, attempt: Int, number: Int, address: BluetoothAddress,
        link: VirtualLink, plan: RSSIPlan, events: AsyncStream<Event>.Continuation
    ) -> EventLoopFuture<Void> {
        let loop = child.eventLoop
        let peer = child.remoteAddress.map { address in
            address.ipAddress.map { "\($0):\(address.port ?? 0)" } ?? "\(address)"
        } ?? "?"
        if slot.value.closed { return loop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
        if slot.value.client != nil {
            guard attempt < admissionRetries else {
                events.yield(.hostRefused(controller: number, peer: peer))
                return loop.makeFailedFuture(ChannelError.ioOnClosedChannel)
            }
            return loop.scheduleTask(in: admissionRetryInterval) {}.futureResult.flatMap {
                admit(child, slot: slot, attempt: attempt + 1, number: number, address: address, link: link, plan: plan, events: events)
            }
        }
        return loop.makeCompletedFuture {
            // A fresh framer per host: a half-written packet from a host that died cannot
            // garble the next one.
            let inbound = InboundPackets(name: "controller \(number) host \(peer)")
            try child.pipeline.syncOperations.addHandler(
                H4ChannelHandler(name: "controller \(number) host \(peer)", inbox: inbound))
            slot.value.client = child
            let previous = slot.value.session
            slot.value.session = Task {
                await serve(
                    child, inbound: inbound, after: previous, number: number, peer: peer, address: address,
                    link: link, plan: plan, events: events)
            }
            child.closeFuture.whenComplete { _ in
                if let current = slot.value.client, current === child { slot.value.client = nil }
            }
        }
    }

    /// One host's session: a new controller on the link, packets both ways until the connection
    /// ends, then the controller leaves the link (peers see reason 0x08). What the host sends
    /// arrives one batch per read; what the controller sends is coalesced into one flush per
    /// event-loop turn.
    private static func serve(
        _ channel: any Channel, inbound: InboundPackets, after previous: Task<Void, Never>?,
        number: Int, peer: String, address: BluetoothAddress, link: VirtualLink, plan: RSSIPlan,
        events: AsyncStream<Event>.Continuation
    ) async {
        await previous?.value
        let controller = await link.attachController(publicAddress: address)
        await plan.attach(controller, number: number, link: link)
        events.yield(.hostConnected(controller: number, peer: peer))
        let output = ChannelBatchWriter(channel: channel, name: "controller \(number) host \(peer)")
        let writer = Task {
            // One task enqueues, so the packets keep their order; once the host is gone they are dropped.
            for await packet in controller.packets { try? output.enqueue(packet) }
        }
        var reason = "host closed the connection"
        do {
            for try await batch in inbound.packetBatches {
                for packet in batch { await controller.send(packet) }
            }
        } catch let error as H4FramingError {
            reason = "bad H4 data from the host: \(error)"
        } catch let error as TransportError {
            if case .closedByPeer = error {} else { reason = "\(error)" }
        } catch {
            reason = "\(error)"
        }
        plan.detach(controller, number: number)
        await controller.detachHost()
        await writer.value
        try? await channel.close().get()
        events.yield(.hostDisconnected(controller: number, peer: peer, reason: reason))
    }

    /// Stops listening, closes every host connection and detaches their controllers. Safe to call
    /// more than once.
    public func close() async {
        for port in ports {
            let slot = port.slot
            let (client, session) = (try? await port.loop.submit { () -> ((any Channel)?, Task<Void, Never>?) in
                slot.value.closed = true
                return (slot.value.client, slot.value.session)
            }.get()) ?? (nil, nil)
            try? await port.channel.close().get()
            if let client { try? await client.close().get() }
            await session?.value
        }
        eventSink.finish()
    }
}

/// The RSSI two controllers of a ``VirtualControllerServer`` report for each other, by number
/// (`bluetide controllers --rssi 1-2=-50`): so one emulated device is heard at -50 dBm by one
/// host and at -80 dBm by another.
public struct ControllerPairRSSI: Sendable, Equatable {
    public var first: Int
    public var second: Int
    public var dBm: Int8

    public init(first: Int, second: Int, dBm: Int8) {
        self.first = first
        self.second = second
        self.dBm = dBm
    }

    /// `A-B=DBM`, e.g. `1-2=-50`; nil when the text is not of that form.
    public init?(parsing text: String) {
        let sides = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard sides.count == 2 else { return nil }
        let numbers = sides[0].split(separator: "-").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard numbers.count == 2, let a = numbers[0], let b = numbers[1], a >= 1, b >= 1, a != b,
              let dBm = Int8(sides[1].trimmingCharacters(in: .whitespaces)), (-127...20).contains(dBm) else { return nil }
        self.init(first: a, second: b, dBm: dBm)
    }
}

/// The controllers with a host now, by number, and the RSSI rules to apply between them.
final class RSSIPlan: Sendable {
    let rules: [ControllerPairRSSI]
    private let attached = Mutex<[Int: VirtualController]>([:])

    init(rules: [ControllerPairRSSI]) { self.rules = rules }

    func attach(_ controller: VirtualController, number: Int, link: VirtualLink) async {
        guard !rules.isEmpty else { return }
        let others = attached.withLock { attached in
            attached[number] = controller
            return attached
        }
        for rule in rules where rule.first == number || rule.second == number {
            let other = rule.first == number ? rule.second : rule.first
            if let peer = others[other] { await link.setRSSI(rule.dBm, between: controller, and: peer) }
        }
    }

    func detach(_ controller: VirtualController, number: Int) {
        attached.withLock { attached in
            if attached[number] === controller { attached[number] = nil }
        }
    }
}
