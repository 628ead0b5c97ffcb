import Bluetide
import BluetideCapture
import BluetideBase
import BluetideDeviceModels
import BluetideRecording
import BluetideSupport
import BluetideTransport
import Foundation

/// Hosts and emulated devices side by side on one in-process virtual link: the set-up behind
/// `bluetide demo`, `--emulate` and the tests, written once.
///
/// Every member gets its own virtual controller on the link. A host opened with a capture file
/// records only its own HCI traffic (its controller's packets, in the order it saw them, so the
/// timestamps never run backwards); emulated and replayed devices are captured only when asked
/// for, each to its own file. Devices are served through the public ``Peripheral`` API of their
/// own ``Bluetooth`` host.
///
/// ```swift
/// let world = VirtualWorld()                                   // a private link
/// let strap = try await world.emulate([HeartRateModel(seed: 1)], rssi: -55)
/// let bluetooth = try await world.openHost(snoop: "central.btsnoop")
/// let found = try await bluetooth.central.discover()
/// await world.close()
/// ```
public actor VirtualWorld {
    /// The link's name (`virtual:NAME` reaches it from this process).
    public nonisolated let linkName: String

    /// One member's controller, for placing it relative to the others.
    private struct Member {
        let bluetooth: Bluetooth
        let controller: VirtualTransport
        /// Signal strength the hosts see a device with, dBm; nil for hosts (and the link default).
        let rssi: Int8?
        let close: @Sendable () async -> Void
    }

    private var hosts: [Member] = []
    private var devices: [Member] = []
    private var closed = false
    /// The clock the link and every member run on.
    public nonisolated let clock: BluetideClock
    private var linkPrepared = false

    /// A world on the link `linkName`; nil makes a private link no other part of the process
    /// uses (so concurrent worlds never see each other's devices).
    ///
    /// The radio (advertising intervals, latency, link-layer procedures) and every host and
    /// device the world opens run on `clock` — it replaces the clock of the configurations
    /// given to ``openHost(configuration:snoop:)``, unless it is the default `.continuous`. A
    /// `BluetideClock(ManualClock())` makes the whole world run in virtual time: drive it with
    /// ``ManualClock/advancing(step:yields:_:)``, and a reconnect after a link loss takes
    /// milliseconds of wall time, the same way every time. A link already in use by the process
    /// keeps the clock it was created with.
    public init(linkName: String? = nil, clock: BluetideClock = .continuous) {
        self.linkName = linkName ?? "world-\(UUID().uuidString.prefix(8))"
        self.clock = clock
    }

    /// `configuration` on the world's clock (unless the world runs on the default one).
    private func onWorldClock(_ configuration: Bluetooth.Configuration) -> Bluetooth.Configuration {
        guard !clock.isContinuous else { return configuration }
        var configuration = configuration
        configuration.clock = clock
        return configuration
    }

    /// The transport spec of the link, without capture: `virtual:NAME`.
    public nonisolated var transportSpec: String { "virtual:\(linkName)" }

    // MARK: Hosts

    /// Opens a host (a ``Bluetooth`` with both roles) on its own controller of the link. With
    /// `snoop`, its HCI traffic — and only its own — is written to that btsnoop file.
    /// Close it with ``Bluetooth/close()`` or let ``close()`` do it.
    public func openHost(configuration: Bluetooth.Configuration = .init(), snoop: String? = nil) async throws -> Bluetooth {
        let (transport, controller) = try await attach(snoop: snoop)
        let bluetooth = try await Bluetooth.start(on: transport, spec: spec(snoop: snoop), configuration: onWorldClock(configuration))
        let host = Member(bluetooth: bluetooth, controller: controller, rssi: nil, close: { await bluetooth.close() })
        for device in devices { await place(device, from: host) }
        hosts.append(host)
        return bluetooth
    }

    // MARK: Devices

    /// Starts `models` as one emulated device on its own controller, advertising `name` (nil:
    /// the first model's) from `address` (nil: a fresh random static address). Hosts see it at
    /// `rssi` dBm (nil: the link's default). With `snoop`, the device's own HCI traffic is
    /// written to that file.
    public func emulate(
        _ models: [any DeviceModel], name: String? = nil, address: BluetoothAddress? = nil, rssi: Int8? = nil,
        snoop: String? = nil, commandTimeout: Duration = .seconds(10)
    ) async throws -> EmulatedPeripheral {
        let bluetooth = try await openDevice(
            configuration: EmulatedPeripheral.hostConfiguration(
                models, name: name, address: address, commandTimeout: commandTimeout),
            rssi: rssi, snoop: snoop)
        return try await EmulatedPeripheral.serve(models, name: name, on: bluetooth)
    }

    /// Serves a value log as a device that plays it back (see ``ReplayPeripheral``), placed like
    /// ``emulate(_:name:address:rssi:snoop:commandTimeout:)``.
    public func replay(
        _ log: ValueLog, pace: ReplayPace = .original, device: String? = nil, name: String? = nil,
        address: BluetoothAddress? = nil, start: ReplayPeripheral.Start = .onFirstSubscription, rssi: Int8? = nil,
        snoop: String? = nil
    ) async throws -> ReplayPeripheral {
        let bluetooth = try await openDevice(
            configuration: .init(address: address, deviceName: name ?? "Bluetide Replay"), rssi: rssi, snoop: snoop)
        let replay = ReplayPeripheral(bluetooth: bluetooth, log: log, pace: pace, device: device, name: name, start: start)
        do { try await replay.start() } catch {
            await bluetooth.close()
            throw error
        }
        return replay
    }

    /// Serves a device rebuilt from a capture (see ``ClonePeripheral``), placed like
    /// ``emulate(_:name:address:rssi:snoop:commandTimeout:)``: from the captured address — a
    /// public one becomes its controller's public address, a random one (static or private) its
    /// random address — unless `address` (random static) is given.
    public func serveClone(
        _ device: ClonedDevice, pace: ReplayPace = .original, address: BluetoothAddress? = nil, rssi: Int8? = nil,
        snoop: String? = nil
    ) async throws -> ClonePeripheral {
        let captured = address == nil ? ClonePeripheral.capturedAddress(device) : nil
        let publicAddress = captured?.type == .public ? captured : nil
        let bluetooth = try await openDevice(
            configuration: ClonePeripheral.hostConfiguration(for: device, address: address, publicAddressAvailable: publicAddress != nil),
            rssi: rssi, snoop: snoop, publicAddress: publicAddress)
        let clone = ClonePeripheral(bluetooth: bluetooth, device: device, pace: pace)
        do { try await clone.start() } catch {
            await bluetooth.close()
            throw error
        }
        return clone
    }

    /// Places one device relative to one host only: `host` hears `device` (and `device` hears
    /// `host`) at `dBm`, whatever the other hosts hear. So one emulated device can be heard at
    /// −50 dBm by one gateway and −80 dBm by another. Throws when either is not of this world.
    public func setRSSI(_ dBm: Int8, between host: Bluetooth, and device: Bluetooth) async throws {
        guard let hostMember = hosts.first(where: { $0.bluetooth.central === host.central }),
              let deviceMember = devices.first(where: { $0.bluetooth.central === device.central }) else {
            throw BluetideError.invalidArgument("setRSSI: the host and the device must both be members of the virtual world \(linkName)")
        }
        await hostMember.controller.controller.link.setRSSI(dBm, between: hostMember.controller.controller, and: deviceMember.controller.controller)
    }

    /// Cuts every link `member` (a host or a device of this world) has, as if it went out of
    /// range: both ends of each connection see it end with reason 0x08 (connection timeout), as
    /// after a real supervision timeout, and nothing is sent over the air. The member stays on
    /// the link: a device advertises again and can be reconnected. So a test or a device model
    /// can drop a link from the device's side at a precise moment (a reconnect policy then
    /// meets a real outage). Throws when `member` is not of this world.
    public func loseLink(of member: Bluetooth) async throws {
        guard let found = (devices + hosts).first(where: { $0.bluetooth.central === member.central }) else {
            throw BluetideError.invalidArgument("loseLink: \(member.address.string) is not a member of the virtual world \(linkName)")
        }
        let controller = found.controller.controller
        await controller.link.linkLoss(controller)
    }

    /// Cuts every link of the emulated device `device` (see the overload taking its ``Bluetooth``).
    public func loseLink(of device: EmulatedPeripheral) async throws {
        try await loseLink(of: device.bluetooth)
    }

    /// Closes every host and device the world opened (devices first, so hosts see their links
    /// end). Idempotent.
    public func close() async {
        closed = true
        let members = devices + hosts
        devices = []
        hosts = []
        for member in members { await member.close() }
    }

    // MARK: Plumbing

    private func openDevice(
        configuration: Bluetooth.Configuration, rssi: Int8?, snoop: String?, publicAddress: BluetoothAddress? = nil
    ) async throws -> Bluetooth {
        let (transport, controller) = try await attach(snoop: snoop, publicAddress: publicAddress)
        let bluetooth = try await Bluetooth.start(on: transport, spec: spec(snoop: snoop), configuration: onWorldClock(configuration))
        let device = Member(bluetooth: bluetooth, controller: controller, rssi: rssi, close: { await bluetooth.close() })
        for host in hosts { await place(device, from: host) }
        devices.append(device)
        return bluetooth
    }

    /// A controller of its own on the link (with `publicAddress` as its public address when
    /// given), wrapped in a capture of its traffic when asked.
    private func attach(snoop: String?, publicAddress: BluetoothAddress? = nil) async throws -> (any HCITransport, VirtualTransport) {
        guard !closed else { throw BluetideError.invalidArgument("the virtual world \(linkName) is closed") }
        // The capture first, so a bad path fails before a controller joins the link.
        let writer: BTSnoopFileWriter?
        do { writer = try snoop.map { try BTSnoopFileWriter(path: $0) } } catch {
            throw BluetideError.transportUnavailable(spec: spec(snoop: snoop), reason: "cannot create the capture: \(error)")
        }
        if !linkPrepared {
            linkPrepared = true
            if !clock.isContinuous { await Bluetooth.prepareVirtualLink(named: linkName, clock: clock) }
        }
        let controller = await VirtualTransport.attach(toLinkNamed: linkName, publicAddress: publicAddress)
        guard let writer else { return (controller, controller) }
        return (SnoopingTransport(wrapping: controller, writer: writer), controller)
    }

    private func place(_ device: Member, from host: Member) async {
        guard let rssi = device.rssi else { return }
        await host.controller.controller.link.setRSSI(rssi, between: host.controller.controller, and: device.controller.controller)
    }

    private nonisolated func spec(snoop: String?) -> String {
        transportSpec + (snoop.map { "+snoop:\($0)" } ?? "")
    }
}
