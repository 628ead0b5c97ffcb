import BluetideBase
import BluetideHost
import Foundation

/// One side's packet path of a bench run over GATT: packets to the peer go out with ``send(_:)``;
/// packets from the peer land in ``inbox``.
protocol BumbleBenchLink: Sendable {
    /// Packets from the peer, with arrival times; ends when the link does.
    var inbox: BumbleBenchInbox { get }
    /// The ATT MTU in use; a packet carries at most MTU − 3 octets.
    func mtu() async -> Int
    /// Sends one packet, waiting while the controller's buffers are full.
    func send(_ packet: [UInt8]) async throws
    /// Ends the link (after giving queued packets a moment to leave).
    func close() async
}

/// The central's side: a GATT client of the peer's bench service that writes packets to TX with
/// Write Command and gets the peer's packets as RX notifications (what Bumble's `gatt-client`
/// mode does).
struct BumbleBenchClientLink: BumbleBenchLink {
    let connection: HostConnection
    let txHandle: UInt16
    let inbox: BumbleBenchInbox

    func mtu() async -> Int { await connection.mtu() }

    func send(_ packet: [UInt8]) async throws {
        try await connection.gatt.writeWithoutResponse(handle: txHandle, value: packet)
    }

    func close() async {
        _ = try? await connection.disconnect(timeout: 2)
        inbox.end("closed by this side")
    }

    /// Scans for `peer` (an address, any type, or an advertised name) for at most `timeout`
    /// seconds, connects, exchanges the MTU, discovers the bench service and subscribes to RX.
    static func connect(
        stack: HostStack, peer: String, attMTU: Int, timeout: Double, log: @escaping @Sendable (String) -> Void
    ) async throws -> BumbleBenchClientLink {
        let deadline = BumbleBenchInbox.now() + timeout
        let found = try await find(peer, on: stack, timeout: timeout)
        log("found \(found.address)\(found.name.map { " \"\($0)\"" } ?? ""); connecting")
        let connection: HostConnection
        do {
            connection = try await stack.connect(to: found.address, timeout: max(1, deadline - BumbleBenchInbox.now()))
        } catch {
            throw BenchFailure("cannot connect to \(found.address): \(error)")
        }
        do {
            let mtu = try await connection.gatt.exchangeMTU(clientMTU: attMTU)
            guard let service = try await connection.gatt.discoverPrimaryServices(uuid: BumbleBenchService.service).first else {
                throw BenchFailure("\(found.address) has no bench service \(BumbleBenchService.service): is it running `bumble-bench peripheral` (gatt-server mode) or `bluetide bench peripheral`?")
            }
            let characteristics = try await connection.gatt.discoverCharacteristics(in: service)
            guard let tx = characteristics.first(where: { $0.uuid == BumbleBenchService.tx }),
                  let rx = characteristics.first(where: { $0.uuid == BumbleBenchService.rx })
            else {
                throw BenchFailure("\(found.address): the bench service lacks its TX (\(BumbleBenchService.tx)) or RX (\(BumbleBenchService.rx)) characteristic")
            }
            let inbox = BumbleBenchInbox()
            let notifications = try await connection.gatt.subscribe(to: rx)
            Task {
                for await value in notifications { inbox.push(value) }
                inbox.end("the link ended")
            }
            Task {
                let reason = await connection.waitForDisconnection()
                inbox.end("disconnected: \(reason)")
            }
            log("connected to \(found.address), MTU \(mtu), subscribed to RX")
            return BumbleBenchClientLink(connection: connection, txHandle: tx.valueHandle, inbox: inbox)
        } catch let failure as BenchFailure {
            _ = try? await connection.disconnect(timeout: 2)
            throw failure
        } catch {
            _ = try? await connection.disconnect(timeout: 2)
            throw BenchFailure("GATT setup with \(found.address) failed: \(error)")
        }
    }

    /// The first advertiser whose address (any type, case-insensitive) or local name is `peer`.
    private static func find(
        _ peer: String, on stack: HostStack, timeout: Double
    ) async throws -> (address: BluetoothAddress, name: String?) {
        let wanted = peer.trimmingCharacters(in: .whitespaces)
        let reports: AsyncStream<AdvertisementReport>
        do { reports = try await stack.scan() } catch { throw BenchFailure("cannot scan: \(error)") }
        let match: (BluetoothAddress, String?)? = await firstWithin(timeout) {
            var names: [BluetoothAddress: String] = [:]
            for await report in reports {
                if let name = report.data.localName { names[report.address] = name }
                let name = names[report.address]
                if report.address.string.caseInsensitiveCompare(wanted) == .orderedSame || name == wanted {
                    guard report.isConnectable || report.isScanResponse else { continue }
                    return (report.address, name)
                }
            }
            return nil
        }
        guard let match else {
            throw BenchFailure("no advertiser with address or name \"\(wanted)\" within \(formatBenchSeconds(timeout)) s: is the peer's bench peripheral running on the same controllers? (--peripheral ADDRESS|NAME, --timeout SECONDS)")
        }
        return match
    }
}

/// The peripheral's side: a GATT server with the bench service. Packets written to TX (Write
/// Command or Request) land in the inbox; packets go out as RX notifications.
struct BumbleBenchServerLink: BumbleBenchLink {
    let stack: HostStack
    let connection: HostConnection
    let rxHandle: UInt16
    let inbox: BumbleBenchInbox

    func mtu() async -> Int { await connection.mtu() }

    func send(_ packet: [UInt8]) async throws {
        try await stack.waitForBuffers(on: connection.handle)
        guard await stack.updateValue(packet, at: rxHandle) > 0 else {
            throw BenchFailure("the central is no longer subscribed to RX (or the link ended)")
        }
    }

    func close() async {
        // The central normally ends the link; give it a moment before doing so ourselves.
        let ended = await firstWithin(2) { () -> Bool? in
            _ = await connection.waitForDisconnection()
            return true
        } ?? false
        if !ended { _ = try? await connection.disconnect(timeout: 2) }
        inbox.end("closed by this side")
    }

    /// The bench service for a stack's configuration; writes to TX go to `inbox`.
    static func service(feeding inbox: BumbleBenchInbox) -> GATTServiceDefinition {
        GATTServiceDefinition(uuid: BumbleBenchService.service, characteristics: [
            // Bumble declares TX with Write only, yet its client writes with Write Command; our
            // server ignores Write Commands to characteristics without that property (Core Vol 3
            // Part G §3.3.1.1), so TX declares both.
            GATTCharacteristicDefinition(
                uuid: BumbleBenchService.tx, properties: [.write, .writeWithoutResponse],
                validateWrite: { context in
                    inbox.push(context.value)
                    return nil
                }),
            GATTCharacteristicDefinition(uuid: BumbleBenchService.rx, properties: .notify),
        ])
    }

    /// Advertises `name` and waits at most `timeout` seconds for a central to connect and
    /// subscribe to RX (the moment Bumble's server calls itself ready).
    static func accept(
        stack: HostStack, name: String, inbox: BumbleBenchInbox, timeout: Double, log: @escaping @Sendable (String) -> Void
    ) async throws -> BumbleBenchServerLink {
        guard let rxHandle = await stack.valueHandle(of: BumbleBenchService.rx, in: BumbleBenchService.service) else {
            throw BenchFailure("bench: the bench service is missing from this stack's GATT server")
        }
        let subscribed = AsyncStream<UInt16>.makeStream()
        let events = Task {
            for await event in stack.serverEvents {
                if case let .subscriptionChanged(connection, valueHandle, configuration) = event.event,
                   valueHandle == rxHandle, configuration.contains(.notification) {
                    subscribed.continuation.yield(connection)
                }
            }
        }
        defer { events.cancel() }
        do {
            try await stack.startAdvertising(
                AdvertisingData([.flags([.leGeneralDiscoverable, .brEdrNotSupported]), .completeLocalName(name)]),
                scanResponse: AdvertisingData([.serviceUUIDs([BumbleBenchService.service], size: .bits128, complete: true)]),
                intervalMilliseconds: 100)
        } catch {
            throw BenchFailure("cannot advertise: \(error)")
        }
        log("advertising as \"\(name)\"; waiting for a central")
        let outcome: (connection: HostConnection, handle: UInt16)? = await firstWithin(timeout) {
            for await connection in stack.incomingConnections {
                log("a central connected (\(connection)); waiting for its RX subscription")
                for await handle in subscribed.stream where handle == connection.handle {
                    return (connection, handle)
                }
            }
            return nil
        }
        _ = try? await stack.stopAdvertising()
        guard let outcome else {
            throw BenchFailure("no central connected and subscribed to RX within \(formatBenchSeconds(timeout)) s (--timeout SECONDS)")
        }
        let connection = outcome.connection
        Task {
            let reason = await connection.waitForDisconnection()
            inbox.end("disconnected: \(reason)")
        }
        log("central subscribed to RX, MTU \(await connection.mtu())")
        return BumbleBenchServerLink(stack: stack, connection: connection, rxHandle: rxHandle, inbox: inbox)
    }
}

/// The value `body` returns, or nil when it has not returned within `seconds` (it is then
/// cancelled).
func firstWithin<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async -> T?) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// Seconds as short text (`30`, `2.5`).
func formatBenchSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
}
