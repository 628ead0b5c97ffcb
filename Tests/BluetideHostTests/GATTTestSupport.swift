import BluetideBase
@testable import BluetideHost
import BluetideSupport

// Shared helpers for the L2CAP/ATT/GATT/Advertising suites (names prefixed to stay clear of
// other suites in this test target).

/// Deterministic pseudo-random numbers (SplitMix64) so robustness tests are reproducible.
typealias GATTSeededRandom = SplitMix64

extension SplitMix64 {
    /// Up to `maxCount` random bytes (the count random too).
    mutating func bytes(upTo maxCount: Int) -> [UInt8] {
        let n = Int.random(in: 0...maxCount, using: &self)
        return (0..<n).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}

/// Hex text to bytes for test vectors (traps only on a typo in the test itself).
func gattHex(_ text: String) -> [UInt8] {
    do { return try Hex.parse(text) } catch { fatalError("bad test vector \(text)") }
}

/// A GATT client and a GATT server joined in memory through two ``ATTBearer``s, pumping PDUs
/// synchronously. Time is a manual clock. Records every PDU on the wire for assertions.
actor InMemoryGATTLink: ATTRequestChannel {
    let connection: UInt16 = 0x0040
    var clientBearer: ATTBearer
    var serverBearer: ATTBearer
    var server: GATTServer
    var now: Double = 0
    /// Every PDU sent, in order: (fromClient, bytes).
    private(set) var wire: [(fromClient: Bool, bytes: [UInt8])] = []
    private(set) var recordedServerEvents: [GATTServerEvent] = []
    private(set) var confirmationsReceivedByServer = 0
    private(set) var clientIgnored: [ATTIgnoreReason] = []
    private var waiters: [ATTTransactionID: CheckedContinuation<ATTPDU, any Error>] = [:]
    private var earlyResults: [ATTTransactionID: Result<ATTPDU, any Error>] = [:]
    private var deliveries: [(indication: Bool, handle: UInt16, value: [UInt8])] = []
    private var client: GATTClient?

    init(server: GATTServer, clientMTU: Int = 517, serverMTU: Int = 517) {
        self.server = server
        self.server.localMTU = serverMTU
        self.server.connect(0x0040)
        clientBearer = ATTBearer(localMTU: clientMTU)
        serverBearer = ATTBearer(localMTU: serverMTU)
    }

    func attach(_ client: GATTClient) { self.client = client }

    nonisolated func request(_ pdu: ATTPDU) async throws -> ATTPDU {
        try await requestIsolated(pdu)
    }

    private func requestIsolated(_ pdu: ATTPDU) async throws -> ATTPDU {
        let (id, events) = clientBearer.enqueue(request: pdu, now: now)
        await run(clientEvents: events)
        if let early = earlyResults.removeValue(forKey: id) { return try early.get() }
        return try await withCheckedThrowingContinuation { waiters[id] = $0 }
    }

    nonisolated func send(command: ATTPDU) async throws {
        try await sendIsolated(command)
    }

    private func sendIsolated(_ command: ATTPDU) async throws {
        let events = try clientBearer.send(command: command)
        await run(clientEvents: events)
    }

    nonisolated func currentMTU() async -> Int { await clientMTU() }
    func clientMTU() -> Int { clientBearer.mtu }

    /// The server pushes a value to subscribers (notify or indicate).
    func serverPush(valueHandle: UInt16, value: [UInt8], indicate: Bool) async {
        let pushes = indicate ? server.indicate(valueHandle: valueHandle, value: value) : server.notify(valueHandle: valueHandle, value: value)
        var events: [ATTBearerEvent] = []
        for p in pushes { events += serverBearer.send(p, now: now) }
        await run(serverEvents: events)
    }

    /// Lets the server push without the client confirming: a deliberately broken client.
    var clientConfirmsIndications = true
    func setClientConfirms(_ on: Bool) { clientConfirmsIndications = on }

    func advance(to time: Double) async {
        now = time
        let c = clientBearer.tick(now: now)
        let s = serverBearer.tick(now: now)
        await run(clientEvents: c, serverEvents: s)
    }

    /// Processes bearer events until both sides are quiet, then delivers values to the client.
    private func run(clientEvents: [ATTBearerEvent] = [], serverEvents: [ATTBearerEvent] = []) async {
        var work: [(client: Bool, event: ATTBearerEvent)] = clientEvents.map { (true, $0) } + serverEvents.map { (false, $0) }
        while !work.isEmpty {
            let (isClient, event) = work.removeFirst()
            if isClient {
                switch event {
                case let .send(bytes):
                    if !clientConfirmsIndications, bytes == [0x1E] { continue }
                    wire.append((true, bytes))
                    let served = serverBearer.receive(bytes, now: now, server: &server, connection: connection)
                    recordedServerEvents += served.server
                    work += served.bearer.map { (false, $0) }
                case let .response(id, pdu): resolve(id, .success(pdu))
                case let .failed(id, error): resolve(id, .failure(error))
                case let .notification(h, v): deliveries.append((false, h, v))
                case let .indication(h, v): deliveries.append((true, h, v))
                case let .ignored(_, reason): clientIgnored.append(reason)
                default: break
                }
            } else {
                switch event {
                case let .send(bytes):
                    wire.append((false, bytes))
                    work += clientBearer.receive(bytes, now: now).map { (true, $0) }
                case .indicationConfirmed:
                    confirmationsReceivedByServer += 1
                default: break
                }
            }
        }
        let pending = deliveries
        deliveries = []
        for d in pending {
            if d.indication { await client?.receiveIndication(handle: d.handle, value: d.value) }
            else { await client?.receiveNotification(handle: d.handle, value: d.value) }
        }
    }

    private func resolve(_ id: ATTTransactionID, _ result: Result<ATTPDU, any Error>) {
        if let w = waiters.removeValue(forKey: id) { w.resume(with: result) } else { earlyResults[id] = result }
    }

    func wireLog() -> [(fromClient: Bool, bytes: [UInt8])] { wire }
    func events() -> [GATTServerEvent] { recordedServerEvents }
    func confirmations() -> Int { confirmationsReceivedByServer }
    func serverState() -> GATTServer { server }
    func bearers() -> (client: ATTBearer, server: ATTBearer) { (clientBearer, serverBearer) }
}

extension InMemoryGATTLink {
    func setServerValue(_ value: [UInt8], at handle: UInt16) { server.setValue(value, at: handle) }
}
