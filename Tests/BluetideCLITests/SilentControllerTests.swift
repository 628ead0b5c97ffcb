import BluetideTestSupport
import Foundation
import Synchronization
import Testing

/// Ctrl-C is honoured within seconds (1.8 s at most by the command's own bound) whatever the controller does: one that stops answering after
/// start-up, and one that stops in the middle of a packet (`emulate` ignored SIGINT for a minute
/// and more; only a second signal ended it).
@Suite(.timeLimit(.minutes(3))) struct SilentControllerTests {
    @Test(arguments: [StallingProxy.Stall.silent, .midPacket])
    func emulateEndsWithinTwoSecondsOfSIGINT(stall: StallingProxy.Stall) async throws {
        let controllers = try BluetideExecutable.launch(["controllers", "tcp-server:127.0.0.1:0"])
        var device: BumbleProcess?
        var proxy: StallingProxy?
        do {
            let ready = try #require(try await controllers.nextLine(timeout: BluetideExecutable.runTimeout))
            let port = try #require(ready.split(separator: " ").dropFirst().first.flatMap { Int($0) }, "\(ready)")
            let stalling = try StallingProxy.start(controllerPort: port)
            proxy = stalling
            let emulate = try BluetideExecutable.launch(["emulate", "heart-rate", "--transport", "tcp-client:127.0.0.1:\(stalling.port)"])
            device = emulate
            let started = try await emulate.nextLine(timeout: BluetideExecutable.runTimeout)
            #expect(started?.contains("advertising as") == true, "\(String(describing: started))")
            stalling.stall(stall)
            let sent = ContinuousClock.now
            kill(emulate.pid, SIGINT)
            let status = await emulate.waitForExit(timeout: .seconds(30))
            let took = ContinuousClock.now - sent
            #expect(status != nil, "still running 30 s after SIGINT")
            // The command's own bound is 1.8 s (StopSignal's last resort); the check allows for
            // a machine busy with the rest of the suite (2.5 s seen at load 5 on 2 cores) while
            // still catching the fault, which ran 60 s and more.
            #expect(took < Duration.seconds(10), "ended \(took) after SIGINT (stall: \(stall))")
            let output = await emulate.output(.either)
            #expect(status == 130, "\(output)")
        } catch {
            await device?.stop()
            proxy?.close()
            await controllers.stop()
            throw error
        }
        await device?.stop()
        proxy?.close()
        await controllers.stop()
    }
}

/// A TCP proxy between a host and a controller that forwards H4 bytes both ways until told to
/// stall: then it forwards nothing more (``Stall/silent``), or only the first two bytes of the
/// controller's next packet (``Stall/midPacket``), while keeping both sockets open. Blocking
/// I/O on threads of its own.
final class StallingProxy: Sendable {
    enum Stall: Sendable, CustomStringConvertible {
        /// The controller answers nothing more.
        case silent
        /// The controller sends two bytes of its next packet, then nothing.
        case midPacket

        var description: String { self == .silent ? "silent" : "mid-packet" }
    }

    private enum Mode {
        case forwarding
        case stalled(Stall, partSent: Bool)
    }

    let port: Int
    private let listener: Int32
    private let mode = Mutex(Mode.forwarding)
    private let sockets = Mutex<[Int32]>([])

    private init(port: Int, listener: Int32) {
        self.port = port
        self.listener = listener
    }

    /// Listens on a free port of 127.0.0.1 and, for the first host that connects, connects to the
    /// controller at `controllerPort`.
    static func start(controllerPort: Int) throws -> StallingProxy {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        guard bound, listen(listener, 1) == 0 else {
            Foundation.close(listener)
            throw PipedChild.Failure(description: "proxy: cannot listen: errno \(errno)")
        }
        let proxy = StallingProxy(port: Int(UInt16(bigEndian: address.sin_port)), listener: listener)
        Thread.detachNewThread {
            let host = accept(listener, nil, nil)
            guard host >= 0 else { return }
            let controller = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var target = Self.loopback(port: controllerPort)
            let connected = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(controller, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            proxy.sockets.withLock { $0 += [host, controller] }
            guard connected == 0 else { return }
            Thread.detachNewThread { proxy.pump(from: host, to: controller, fromController: false) }
            proxy.pump(from: controller, to: host, fromController: true)
        }
        return proxy
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// Stalls from now on.
    func stall(_ stall: Stall) {
        mode.withLock { $0 = .stalled(stall, partSent: false) }
    }

    private func pump(from source: Int32, to destination: Int32, fromController: Bool) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress!, $0.count) }
            if count <= 0 { return }
            // How many of these bytes go on.
            let forward: Int = mode.withLock { mode in
                switch mode {
                case .forwarding: return count
                case .stalled(.silent, _): return 0
                case let .stalled(.midPacket, partSent):
                    // The host's commands still reach the controller; its answer is cut short.
                    guard fromController else { return count }
                    guard !partSent else { return 0 }
                    mode = .stalled(.midPacket, partSent: true)
                    return min(2, count)
                }
            }
            guard forward > 0 else { continue }
            let written = buffer.withUnsafeBytes { write(destination, $0.baseAddress!, forward) }
            if written <= 0 { return }
        }
    }

    /// Closes every socket (the pump threads then end).
    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Foundation.close(listener)
        for socket in sockets.withLock({ $0 }) {
            shutdown(socket, Int32(SHUT_RDWR))
            Foundation.close(socket)
        }
    }
}
