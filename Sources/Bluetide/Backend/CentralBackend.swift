import BluetideBase
import BluetideHCI
import BluetideHost
import BluetideTransport

// The seam under the public central: `Central` and `Connection` run over a `CentralBackend`
// and its `CentralLink`s. Bluetide's own host is one implementation (`HostCentralBackend`,
// below); another stack — BlueZ over D-Bus (`BluetideBlueZ`), another operating system's, a
// test double — is added by registering a `BackendScheme` with `TransportRegistry`, and is then
// opened by spec like any transport (`Bluetooth.open(transport: "bluez:hci0")`, `--transport`),
// without editing a switch.

/// A kind of Bluetooth stack other than Bluetide's own host, opened by spec (`NAME` or
/// `NAME:ARGUMENT`). Register it once with ``TransportRegistry/register(_:)``; then
/// ``Bluetooth/open(transport:configuration:)`` runs ``Bluetooth/central`` over it. Its
/// ``TransportScheme/open(argument:)`` (an HCI transport) is refused: a backend has no HCI.
public protocol BackendScheme: TransportScheme {
    /// Opens the backend's central role (connects to the stack, checks the adapter).
    func openCentral(argument: String?, configuration: Bluetooth.Configuration) async throws -> any CentralBackend
}

extension BackendScheme {
    /// A backend is not an HCI transport: refused with what to do instead.
    public func open(argument: String?) async throws -> any HCITransport {
        throw TransportError.openFailed("\(name) is a backend, not an HCI transport: open it with Bluetooth.open(transport:)")
    }
}

/// The central role of a backend: scanning and making links.
public protocol CentralBackend: Sendable {
    /// Our adapter's address as peers see it, when the stack says.
    var address: BluetoothAddress? { get async }
    /// The advertisements that pass `filter` (the backend may filter in the stack as well),
    /// merged with scan responses, every report (``Central`` drops repeats when the filter
    /// asks). Ends when the caller stops iterating or the backend closes.
    func scan(filter: ScanFilter) async throws -> AsyncStream<Advertisement>
    /// Makes a link to `address` within `timeout`.
    func connect(to address: BluetoothAddress, timeout: Duration) async throws -> any CentralLink
    /// Why the peripheral role cannot run here, in one line saying what to use instead; nil
    /// when it can.
    var peripheralUnavailable: String? { get }
    /// Waits until the backend stops: nil after ``close()``, else why.
    func waitUntilClosed() async -> String?
    /// Disconnects everything and lets the stack go.
    func close() async
    /// The questions the stack's pairing agent asks (``Bluetooth/pairingPrompts`` hands them
    /// to the application), one sequence for the backend's life; nil when the backend asks none.
    var pairingPrompts: AsyncStream<PairingPrompt>? { get }
    /// The bonds the stack keeps itself (``Bluetooth/bonds()`` returns them); nil when it keeps
    /// none (then the own host's, from the bond file, are listed).
    func bonds() async -> [BondRecord]?
    /// Forgets the stack's bond with `address`; nil when the stack keeps no bonds of its own.
    func removeBond(_ address: BluetoothAddress) async -> Bool?
}

extension CentralBackend {
    /// No pairing agent: nothing is asked.
    public var pairingPrompts: AsyncStream<PairingPrompt>? { nil }
    /// No bonds of its own.
    public func bonds() async -> [BondRecord]? { nil }
    /// No bonds of its own.
    public func removeBond(_ address: BluetoothAddress) async -> Bool? { nil }
}

/// One link of a ``CentralBackend``: what ``Connection`` needs of it. Identity is the link's
/// (a new link after a reconnect is a new object).
public protocol CentralLink: AnyObject, Sendable {
    /// Asks for an ATT MTU of `mtu`; returns the effective one.
    func exchangeMTU(_ mtu: Int) async throws -> Int
    /// The services, characteristics and descriptors.
    func discoverDatabase() async throws -> [GATTRemoteService]
    /// Reads a value (long values completely).
    func read(_ characteristic: GATTCharacteristic) async throws -> [UInt8]
    /// Reads a descriptor.
    func read(_ descriptor: GATTDescriptor, of characteristic: GATTCharacteristic) async throws -> [UInt8]
    /// Writes a value, with response (long values too) or without.
    func write(_ value: [UInt8], to characteristic: GATTCharacteristic, withResponse: Bool) async throws
    /// Subscribes; the stream ends when the link does.
    func subscribe(to characteristic: GATTCharacteristic) async throws -> AsyncStream<[UInt8]>
    func unsubscribe(from characteristic: GATTCharacteristic) async throws
    /// The effective ATT MTU, octets.
    func mtu() async -> Int
    /// The link's RSSI, dBm.
    func rssi() async throws -> Int
    /// Closes the link; returns the reason reported.
    func disconnect() async throws -> DisconnectReason
    /// Waits for the link to end, by either side.
    func waitForDisconnection() async -> DisconnectReason
    func isOpen() async -> Bool
    /// Encrypts or pairs (with `force`, pairs again).
    func pair(force: Bool) async throws -> SecurityLevel
    func securityLevel() async -> SecurityLevel
    /// The connection parameters, nil when the backend does not say.
    func parameters() async -> ConnectionParameters?
    /// Asks for new connection parameters, in the controller's units: interval 1.25 ms, latency
    /// in connection events, supervision timeout 10 ms.
    func requestParameters(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, supervisionTimeout: UInt16) async throws
    /// Whether an ATT refusal for want of security should make the central pair and retry
    /// (Bluetide's own host; a stack that pairs by itself says false).
    var pairsOnSecurityErrors: Bool { get }
}

// MARK: The own host

/// Bluetide's own host as a central backend (the stack of ``Bluetooth/open(transport:configuration:)``).
struct HostCentralBackend: CentralBackend {
    let stack: HostStack

    var address: BluetoothAddress? { get async { await stack.controller?.address } }

    func scan(filter: ScanFilter) async throws -> AsyncStream<Advertisement> {
        let reports = try await stack.scan(active: true)
        let (stream, continuation) = AsyncStream<Advertisement>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let pump = Task {
            var merger = AdvertisementMerger()
            for await report in reports {
                continuation.yield(merger.receive(report, at: .init()))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in pump.cancel() }
        return stream
    }

    func connect(to address: BluetoothAddress, timeout: Duration) async throws -> any CentralLink {
        HostLink(try await stack.connect(to: address, timeout: timeout.seconds), stack: stack)
    }

    var peripheralUnavailable: String? { nil }

    func waitUntilClosed() async -> String? {
        let reason = await stack.waitUntilStopped()
        if case .notRunning = reason { return nil }
        return reason.description
    }

    func close() async { await stack.close() }
}

/// A link of the own host.
final class HostLink: CentralLink {
    let connection: HostConnection
    let stack: HostStack

    init(_ connection: HostConnection, stack: HostStack) {
        self.connection = connection
        self.stack = stack
    }

    func exchangeMTU(_ mtu: Int) async throws -> Int {
        _ = try await connection.gatt.exchangeMTU(clientMTU: mtu)
        return await connection.mtu()
    }

    func discoverDatabase() async throws -> [GATTRemoteService] { try await connection.gatt.discoverDatabase() }
    func read(_ characteristic: GATTCharacteristic) async throws -> [UInt8] { try await connection.gatt.read(handle: characteristic.valueHandle) }
    func read(_ descriptor: GATTDescriptor, of characteristic: GATTCharacteristic) async throws -> [UInt8] {
        try await connection.gatt.read(handle: descriptor.handle)
    }

    func write(_ value: [UInt8], to characteristic: GATTCharacteristic, withResponse: Bool) async throws {
        if withResponse {
            try await connection.gatt.write(handle: characteristic.valueHandle, value: value)
        } else {
            try await connection.gatt.writeWithoutResponse(handle: characteristic.valueHandle, value: value)
        }
    }

    func subscribe(to characteristic: GATTCharacteristic) async throws -> AsyncStream<[UInt8]> {
        try await connection.gatt.subscribe(to: characteristic)
    }

    func unsubscribe(from characteristic: GATTCharacteristic) async throws { try await connection.gatt.unsubscribe(from: characteristic) }
    func mtu() async -> Int { await connection.mtu() }
    func rssi() async throws -> Int { Int(try await connection.rssi()) }
    func disconnect() async throws -> DisconnectReason { DisconnectReason(try await connection.disconnect()) }
    func waitForDisconnection() async -> DisconnectReason { DisconnectReason(await connection.waitForDisconnection()) }
    func isOpen() async -> Bool { await connection.isOpen() }
    func pair(force: Bool) async throws -> SecurityLevel { try await stack.pair(connection.handle, force: force) }
    func securityLevel() async -> SecurityLevel { await stack.securityLevel(of: connection.handle) }
    func parameters() async -> ConnectionParameters? { await connection.parameters() }
    func requestParameters(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, supervisionTimeout: UInt16) async throws {
        let parameters = LEConnectionParameters(
            intervalMin: intervalMin, intervalMax: intervalMax, maxLatency: latency, supervisionTimeout: supervisionTimeout)
        try await stack.execute(LEConnectionUpdate(handle: connection.handle, connection: parameters))
    }

    var pairsOnSecurityErrors: Bool { true }
}

/// The transport under the host of a ``Bluetooth`` that runs on a backend: the host is never
/// started, so nothing is sent; anything that tries says which role is unavailable and why.
struct BackendOnlyTransport: HCITransport {
    let reason: String
    var packets: AsyncThrowingStream<HCIPacket, any Error> { AsyncThrowingStream { $0.finish() } }
    func send(_ packet: HCIPacket) async throws { throw TransportError.unavailable(reason) }
    func close() async {}
}
