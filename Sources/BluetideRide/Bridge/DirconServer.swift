import BluetideSerial
import Foundation
import Synchronization

/// The sockets of a ``DirconBridge`` (`ride bridge --dircon`). Listens on TCP, hands each
/// accepted connection's bytes to the bridge (several apps at once; the control point lets one
/// of them hold control), and advertises the service over mDNS as `_wahoo-fitness-tnp._tcp`
/// with Avahi's `avahi-publish-service` when it is installed (Debian: avahi-utils, with
/// avahi-daemon running); nothing of Avahi is needed to build or to serve.
public actor DirconServer {
    /// The mDNS service type apps browse for.
    public static let serviceType = "_wahoo-fitness-tnp._tcp"

    /// The protocol side: what the accepted connections' bytes are handed to.
    public nonisolated let bridge: DirconBridge
    private nonisolated let listener: TCPListener
    /// The TCP port listened on (the one picked when 0 was asked for).
    public nonisolated var port: UInt16 { listener.port }
    private var accepting: Task<Void, Never>?
    private var connections: [Int: (port: FileDescriptorPort, task: Task<Void, Never>)] = [:]
    private var nextConnection = 1
    private var advertiser: Process?
    /// Set once ``stop()`` ends the advertiser on purpose.
    private let stopping = Flag()

    /// A flag shared with the advertiser's termination handler.
    final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    /// Listens on `host:port` (IPv4; 0: a free port) for `bridge`.
    /// - Throws: ``DirconServerError``: a port out of range, or the socket refused (in use, not an address).
    public init(bridge: DirconBridge, host: String, port: Int) throws(DirconServerError) {
        self.bridge = bridge
        guard (0...65_535).contains(port) else { throw .portOutOfRange(port) }
        do { listener = try TCPListener(host: host, port: UInt16(port)) } catch {
            throw .cannotListen(host: host, port: port, reason: "\(error)")
        }
    }

    /// Starts accepting connections: several apps at once, each a connection of the bridge.
    public func start() {
        accepting = Task { [weak self, listener] in
            while let client = await listener.accept() {
                guard let self else { client.close(); return }
                await self.serve(client)
            }
        }
    }

    private func serve(_ client: FileDescriptorPort) async {
        let number = nextConnection
        nextConnection += 1
        let bridge = bridge
        let id = await bridge.open(name: "DIRCON #\(number)") { bytes in try? await client.write(bytes) }
        let task = Task { [weak self] in
            while let bytes = await client.read() { await bridge.receive(bytes, from: id) }
            await bridge.close(id)
            await self?.forget(id)
        }
        connections[id] = (client, task)
    }

    private func forget(_ id: Int) {
        connections.removeValue(forKey: id)?.port.close()
    }

    /// Advertises the bridge as `name` over mDNS with `avahi-publish-service`; nil when it runs,
    /// else why it could not (the bridge serves anyway: apps can be given the address by hand).
    /// `ended` is told if the advertiser ends by itself (no avahi-daemon running, a name clash).
    public func advertise(name: String, serviceUUIDs: [String], identity: String, ended: @escaping @Sendable (String) -> Void) -> String? {
        guard let tool = Self.executable("avahi-publish-service") else {
            return "avahi-publish-service is not installed (Debian: apt-get install avahi-utils avahi-daemon)"
        }
        // A stable, locally administered MAC-like id and serial number from the name: apps key pairings on them.
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in identity.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        let mac = (["02"] + (0..<5).map { String(format: "%02X", UInt8(truncatingIfNeeded: hash >> (8 * UInt64($0)))) }).joined(separator: ":")
        let process = Process()
        process.executableURL = tool
        process.arguments = [
            name, Self.serviceType, "\(listener.port)", "ble-service-uuids=\(serviceUUIDs.joined(separator: ","))",
            "mac-address=\(mac)", "serial-number=\(hash % 1_000_000_000)",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let stopping = stopping
        process.terminationHandler = { process in
            guard !stopping.isSet else { return }
            ended("the mDNS advertisement ended: avahi-publish-service exited with status \(process.terminationStatus) "
                + "(is avahi-daemon running? apps can still be given the address by hand)")
        }
        do { try process.run() } catch { return "avahi-publish-service did not start: \(error.localizedDescription)" }
        advertiser = process
        return nil
    }

    /// Stops advertising and accepting, closes every connection and finishes the bridge.
    public func stop() async {
        stopping.set()
        if let advertiser, advertiser.isRunning {
            advertiser.terminate()
            advertiser.waitUntilExit()
        }
        advertiser = nil
        listener.stop()
        accepting?.cancel()
        await accepting?.value
        for (_, connection) in connections {
            connection.port.stop()
            await connection.task.value
        }
        connections = [:]
        listener.close()
        await bridge.finish()
    }

    /// The program `name` on `PATH`, when there is one.
    static func executable(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}

/// Why a ``DirconServer`` could not listen.
public enum DirconServerError: Error, Equatable, CustomStringConvertible {
    /// The port is not 0…65535.
    case portOutOfRange(Int)
    /// The socket was refused: the port is in use, or the host is not an IPv4 address.
    case cannotListen(host: String, port: Int, reason: String)

    public var description: String {
        switch self {
        case let .portOutOfRange(port): "port \(port): expected 0…65535"
        case let .cannotListen(host, port, reason): "cannot listen on \(host):\(port): \(reason)"
        }
    }
}
