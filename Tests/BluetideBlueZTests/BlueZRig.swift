import BluetideTestSupport
import Foundation

/// The rig the BlueZ tests share, set up once per test process: the guest image (built when
/// missing), `bluetide controllers` with one port for the guest, one for the host's central, one
/// for a peripheral in the test process and one per emulated device, and one boot of the guest on the first port. Each test starts its
/// own Bluetide processes on the other ports.
///
/// Everything ends with the test process: the controllers and the guest runner exit when their
/// stdin closes (the runner kills qemu).
final class BlueZRig: Sendable {
    /// The device models `bluetide emulate` offers, one per controller port.
    static let emulatedProfiles = [
        "heart-rate", "battery", "csc", "cycling-power", "ftms-bike", "tacx-fec", "colmi-r02", "hm10", "punch",
    ]

    let controllers: BumbleProcess
    /// The controller the guest's kernel drives (through qemu's serial port).
    let guestPort: Int
    /// The controller for central code that runs in the test process.
    let hostPort: Int
    /// The controller for a peripheral that runs in the test process (the pairing tests).
    let peripheralPort: Int
    /// One controller per emulated device.
    let emulatorPorts: [Int]
    let guest: BlueZGuest
    /// The host's `bluetide` executable (also in the guest as `/share/bin/bluetide`).
    let bluetide: URL
    /// How the image step ended (built, with its time, or already up to date).
    let imageStatus: String

    private init(controllers: BumbleProcess, ports: [Int], guest: BlueZGuest, bluetide: URL, imageStatus: String) {
        self.controllers = controllers
        self.guestPort = ports[0]
        self.hostPort = ports[1]
        self.peripheralPort = ports[2]
        self.emulatorPorts = Array(ports.dropFirst(3))
        self.guest = guest
        self.bluetide = bluetide
        self.imageStatus = imageStatus
    }

    /// The rig, set up on first use; a failed set-up fails every test with the same message.
    static func shared() async throws -> BlueZRig { try await Setup.shared.value() }

    private actor Setup {
        static let shared = Setup()
        private var task: Task<BlueZRig, any Error>?
        func value() async throws -> BlueZRig {
            if let task { return try await task.value }
            let task = Task { try await BlueZRig.make() }
            self.task = task
            return try await task.value
        }
    }

    /// A rig of its own (its own controllers, ports, guest and shared folder `…-TAG`), for a
    /// suite that runs beside the shared one.
    static func make(tag: String = "") async throws -> BlueZRig {
        let started = ContinuousClock.now
        let imageStatus = try await BlueZGuestEnvironment.buildImage()
        guard let bluetide = BuiltExecutables.bluetide else {
            throw BumbleHarnessError(description: "the bluetide executable is not built next to the tests")
        }
        let share = try makeShareDirectory(with: bluetide, tag: tag)

        let specs = Array(repeating: "tcp-server:127.0.0.1:0", count: 3 + emulatedProfiles.count)
        let controllers = try BumbleProcess.launch(
            name: "controllers", executable: bluetide, arguments: ["controllers"] + specs + ["--exit-on-stdin-eof"])
        do {
            let ready = try await controllers.firstLine(timeout: .seconds(30), describing: "controllers READY") { $0.hasPrefix("READY ") }
            let ports = ready.split(separator: " ").dropFirst().compactMap { Int($0) }
            guard ports.count == specs.count else { throw BumbleHarnessError(description: "controllers said \(ready)") }
            let guest = try await BlueZGuest.boot(
                hci: "127.0.0.1:\(ports[0])", share: share, swiftRuntime: BlueZGuestEnvironment.swiftRuntimeDirectory,
                console: share.appendingPathComponent("console.log"))
            let rig = BlueZRig(controllers: controllers, ports: ports, guest: guest, bluetide: bluetide, imageStatus: imageStatus)
            print("bluez rig: image: \(imageStatus); guest booted in \(guest.bootSeconds) s (\(guest.accelerator)); set-up \(Self.seconds(since: started)) s")
            return rig
        } catch {
            await controllers.stop()
            throw error
        }
    }

    /// A fresh shared folder for this process (`bin/bluetide` hard-linked when it can be, else
    /// copied), after removing those of earlier test processes that are gone.
    private static func makeShareDirectory(with bluetide: URL, tag: String) throws -> URL {
        let files = FileManager.default
        let temporary = files.temporaryDirectory
        let prefix = "bluez-rig-"
        for name in (try? files.contentsOfDirectory(atPath: temporary.path)) ?? [] where name.hasPrefix(prefix) {
            if let pid = Int32(name.dropFirst(prefix.count).prefix { $0 != "-" }), pid != getpid(), kill(pid, 0) != 0 {
                try? files.removeItem(at: temporary.appendingPathComponent(name))
            }
        }
        let share = temporary.appendingPathComponent("\(prefix)\(getpid())" + (tag.isEmpty ? "" : "-\(tag)"), isDirectory: true)
        try? files.removeItem(at: share)
        try files.createDirectory(at: share.appendingPathComponent("bin"), withIntermediateDirectories: true)
        let binary = share.appendingPathComponent("bin/bluetide")
        do {
            try files.linkItem(at: bluetide, to: binary)
        } catch {
            try files.copyItem(at: bluetide, to: binary)
        }
        return share
    }

    /// Starts `bluetide emulate PROFILE` on emulator port `index` at `address` (random static),
    /// with model settings `options` (`key=value`, as `--option` takes them); returns once it
    /// printed its start line.
    func emulate(_ profile: String, on index: Int, address: String, name: String? = nil, options: [String] = []) async throws -> BumbleProcess {
        var arguments = [
            "emulate", profile, "--transport", "tcp-client:127.0.0.1:\(emulatorPorts[index])", "--address", address,
            "--json", "--duration", "900",
        ]
        if let name { arguments += ["--name", name] }
        for option in options { arguments += ["--option", option] }
        let process = try BumbleProcess.launch(name: profile, executable: bluetide, arguments: arguments)
        do {
            _ = try await process.firstLine(timeout: .seconds(60), describing: "\(profile) started") { $0.contains("\"started\"") }
        } catch {
            await process.stop()
            throw error
        }
        return process
    }

    /// Whole seconds since `start`, with one decimal, for the timing lines.
    static func seconds(since start: ContinuousClock.Instant) -> String {
        let elapsed = ContinuousClock.now - start
        return String(format: "%.1f", Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}
