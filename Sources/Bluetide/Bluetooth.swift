import BluetideBase
import BluetideHost
import BluetideSupport
import BluetideTransport
import BluetideVirtual

/// One Bluetooth LE host over one transport, with its ``central`` and ``peripheral`` roles.
///
/// ```swift
/// let bluetooth = try await Bluetooth.open(transport: "hci-socket:0")
/// let device = try await bluetooth.central.discover(filter: .init(name: .prefix("HRM"))).first
/// ```
///
/// A `Sendable` handle. ``close()`` stops everything ``open(transport:configuration:)`` started.
public struct Bluetooth: Sendable {
    /// How ``Bluetooth/open(transport:configuration:)`` sets the host up.
    public struct Configuration: Sendable {
        /// Our random static address; nil generates a fresh one at each open (recommended over
        /// the controller's public address, which virtual controllers share).
        public var address: BluetoothAddress?
        /// GAP device name served to peers (0x2A00).
        public var deviceName: String
        /// GAP appearance served to peers (0x2A01).
        public var appearance: UInt16
        /// Time limit of each HCI command.
        public var commandTimeout: Duration
        /// Time limit of an ATT transaction (30 s in the specification).
        public var attTransactionTimeout: Duration
        /// Default time limit of a connect attempt.
        public var connectTimeout: Duration
        /// Most connections the central keeps at a time.
        public var maximumConnections: Int
        /// Our ATT MTU, 23…517 octets.
        public var localMTU: Int
        /// Use the controller's own public address instead of a random static one (a device
        /// whose identity must stay the same across runs on one adapter); ``address`` is then
        /// ignored.
        public var usesControllerAddress: Bool
        /// How this host pairs (IO capability, bonding, pairing by itself when a device asks).
        public var pairing: PairingPolicy
        /// The bond file (JSON, mode 0600): loaded at open, rewritten after each new bond, so a
        /// later connection to a bonded device encrypts without pairing again. Nil keeps bonds
        /// in memory only. Bonds name devices by address: give ``address`` a fixed value for
        /// peers to recognise this host across runs.
        public var bondFile: String?
        /// Where the host's random numbers come from (pairing's nonces, passkeys and keys, the
        /// generated ``address``, and the reconnect back-off's jitter when a policy sets no
        /// seed): `.system` (the secure default), or `.seeded(N)` so a run — a pairing and a
        /// reconnect included — repeats byte for byte (tests and replays only: the keys are
        /// predictable from the seed).
        public var randomness: HostRandomness
        /// The clock every wait of this host runs on: HCI command and ATT time limits, connect
        /// time limits and retry delays, reconnect back-off, set-up and operation time limits,
        /// scan lengths. `.continuous` (the default) is the monotonic clock; a test passes
        /// `BluetideClock(ManualClock())` — the same clock as its ``VirtualLink`` — so a whole
        /// scenario runs in virtual time (``ManualClock/advancing(step:yields:_:)``).
        public var clock: BluetideClock

        /// A configuration; see each property.
        public init(
            address: BluetoothAddress? = nil, deviceName: String = "Bluetide", appearance: UInt16 = 0,
            commandTimeout: Duration = .seconds(10), attTransactionTimeout: Duration = .seconds(30),
            connectTimeout: Duration = .seconds(10), maximumConnections: Int = 8, localMTU: Int = 517,
            usesControllerAddress: Bool = false, pairing: PairingPolicy = .justWorks, bondFile: String? = nil,
            randomness: HostRandomness = .system, clock: BluetideClock = .continuous
        ) {
            self.randomness = randomness
            self.clock = clock
            self.usesControllerAddress = usesControllerAddress
            self.pairing = pairing
            self.bondFile = bondFile
            self.address = address
            self.deviceName = deviceName
            self.appearance = appearance
            self.commandTimeout = commandTimeout
            self.attTransactionTimeout = attTransactionTimeout
            self.connectTimeout = connectTimeout
            self.maximumConnections = maximumConnections
            self.localMTU = localMTU
        }

        /// Whether ``address`` may be a private random address (resolvable or not), used as
        /// given and never renewed: a clone of a captured device keeps the address it was seen
        /// at (the package's own layers only; without the device's IRK no new one can be made).
        package var keepsPrivateAddress = false

        /// The central's random source (reconnect jitter): the system's for a `.system` host; for
        /// a seeded one, a generator seeded from a copy of `stackSource`, so the numbers the
        /// stack draws (pairing) are the same as without it.
        func centralRandomness(after stackSource: HostRandomness) -> HostRandomness {
            guard stackSource.isDeterministic else { return .system }
            var copy = stackSource
            return .seeded(copy.next() ^ 0x6A09_E667_F3BC_C909)
        }

        /// Throws ``BluetideError/invalidArgument(_:)`` when ``address`` is not random static.
        func validate() throws {
            guard !usesControllerAddress, let address, address.type != .random || address.randomKind != .static else { return }
            if keepsPrivateAddress, address.randomKind == .resolvablePrivate || address.randomKind == .nonResolvablePrivate { return }
            throw BluetideError.invalidArgument(
                "own address \(address) is not a random static address (type /R, two top bits set, e.g. C0:00:00:00:00:01/R)")
        }
    }

    /// The host stack under both roles: the package's own layers (emulation, the command line)
    /// reach it; users of the public API do not.
    package let stack: HostStack
    /// Scanning and connecting to devices.
    public let central: Central
    /// Serving GATT services and advertising.
    public let peripheral: Peripheral
    /// Our own address as peers see it.
    public let address: BluetoothAddress
    /// The transport spec this was opened with.
    public let transportSpec: String
    let promptFeed: PairingPromptFeed

    /// Questions pairing puts to the user (confirm a number, enter or show a passkey), in
    /// order, for links of both roles; answer each once. One sequence for the host's life: read
    /// it from one task.
    public var pairingPrompts: AsyncStream<PairingPrompt> { central.external?.pairingPrompts ?? promptFeed.prompts }

    /// The bonded devices (those of ``Configuration/bondFile`` and new ones).
    public func bonds() async -> [BondRecord] {
        if let kept = await central.external?.bonds() { return kept }
        return await stack.bonds.map(BondRecord.init)
    }

    /// Forgets the bond with `address` (and rewrites the bond file); false when there was none.
    /// The device must pair again.
    @discardableResult
    public func removeBond(_ address: BluetoothAddress) async -> Bool {
        if let removed = await central.external?.removeBond(address) { return removed }
        return await stack.removeBond(address)
    }

    /// Opens `transport` (`virtual`, `virtual:NAME`, `tcp-client:HOST:PORT`, `tcp-server:HOST:PORT`,
    /// `serial:/dev/ttyACM0[,BAUD]`, `hci-socket:N`, any of them `+snoop:FILE`), starts the host
    /// stack with `configuration` and returns the handle. Throws
    /// ``BluetideError/transportUnavailable(spec:reason:)`` when the transport cannot be opened
    /// or the controller does not answer, ``BluetideError/invalidArgument(_:)`` when the
    /// configured address is not random static.
    public static func open(transport: String = "virtual", configuration: Configuration = Configuration()) async throws -> Bluetooth {
        // Checked before the transport opens (a tcp-server transport waits for its controller).
        try configuration.validate()
        if let backend = try await openBackend(transport, configuration: configuration) { return backend }
        let opened: any HCITransport
        do {
            opened = try await Transport.open(transport)
        } catch {
            throw BluetideError.transportUnavailable(spec: transport, reason: "\(error)")
        }
        return try await start(on: opened, spec: transport, configuration: configuration)
    }

    /// Starts a host on a transport the caller opened itself (closed again when the controller
    /// does not start): any ``HCITransport`` — a driver of your own, a test double, a transport
    /// wrapped to inject faults. `spec` names it in messages and ``transportSpec``. A kind of
    /// transport that should also open by spec (`--transport NAME:…`) is registered instead as
    /// a ``TransportScheme`` (``TransportRegistry``) and opened with
    /// ``open(transport:configuration:)``.
    public static func start(
        on opened: any HCITransport, spec transport: String = "custom", configuration: Configuration = Configuration()
    ) async throws -> Bluetooth {
        do { try configuration.validate() } catch {
            await opened.close()
            throw error
        }
        var randomness = configuration.randomness
        let random = configuration.usesControllerAddress
            ? nil : configuration.address ?? .randomStatic(UInt64.random(in: 0...0x3FFF_FFFF_FFFF, using: &randomness))
        // The central's own source (reconnect jitter), split off without changing what the
        // stack draws, so seeded pairings stay as they were.
        let centralRandomness = configuration.centralRandomness(after: randomness)
        let hostConfiguration = HostStack.Configuration(
            randomAddress: random, deviceName: configuration.deviceName, appearance: configuration.appearance,
            commandTimeout: configuration.commandTimeout.seconds,
            attTransactionTimeout: configuration.attTransactionTimeout.seconds, localMTU: configuration.localMTU,
            security: configuration.pairing.hostPolicy, bondFile: configuration.bondFile, randomness: randomness)
        // The monotonic clock keeps the stack's own starvation guard (HostStack's default).
        let stack = configuration.clock.isContinuous
            ? HostStack(transport: opened, configuration: hostConfiguration)
            : HostStack(transport: opened, configuration: hostConfiguration, clock: configuration.clock)
        do {
            try await stack.start()
        } catch {
            await stack.close()
            throw BluetideError.transportUnavailable(spec: transport, reason: "the controller did not start: \(error)")
        }
        guard let address = await stack.controller?.address else {
            await stack.close()
            throw BluetideError.transportUnavailable(spec: transport, reason: "the controller stopped while starting")
        }
        return Bluetooth(
            stack: stack,
            central: Central(
                stack: stack, maximumConnections: configuration.maximumConnections,
                defaultConnectTimeout: configuration.connectTimeout,
                pairsWhenRequired: configuration.pairing.pairsWhenRequired,
                canAuthenticate: configuration.pairing.ioCapability != .noInputNoOutput, clock: configuration.clock,
                randomness: centralRandomness),
            peripheral: Peripheral(stack: stack), address: address, transportSpec: transport,
            promptFeed: PairingPromptFeed(stack: stack))
    }

    /// Waits until the host stops and says why: nil after ``close()``, an error when the
    /// controller went away first (its process ended, its TCP peer closed, a framing error).
    /// Cancelling the wait returns nil.
    public func waitUntilClosed() async -> BluetideError? {
        if let backend = central.external { return await backend.waitUntilClosed().map(BluetideError.host) }
        let reason = await stack.waitUntilStopped()
        if case .notRunning = reason { return nil }
        return .host(reason.description)
    }

    /// Disconnects every central connection (no reconnection), stops scans and advertising, and
    /// closes the stack and its transport. Idempotent.
    public func close() async {
        await central.disconnectAll()
        if let backend = central.external {
            await peripheral.backend.close()
            await backend.close()
            return
        }
        _ = try? await stack.stopAdvertising()
        await stack.close()
    }
}

extension Bluetooth {
    /// Makes sure the in-process virtual link `name` runs on `clock` (created on it when the
    /// link is not in use yet; one in use keeps its clock): for worlds whose radio and hosts
    /// share one clock.
    package static func prepareVirtualLink(named name: String, clock: BluetideClock) async {
        _ = await VirtualLink.named(name, clock: clock)
    }

    /// Opens `transport` on a registered ``BackendScheme`` when its scheme names one (the
    /// central runs over it; the own host under ``stack`` is never started); nil otherwise.
    static func openBackend(_ transport: String, configuration: Configuration) async throws -> Bluetooth? {
        let (head, snoop) = transport.firstRange(of: "+snoop:").map { (String(transport[..<$0.lowerBound]), true) } ?? (transport, false)
        let name = head.split(separator: ":", maxSplits: 1).first.map(String.init) ?? head
        guard let scheme = TransportRegistry.scheme(named: name) as? any BackendScheme else { return nil }
        if snoop {
            throw BluetideError.transportUnavailable(
                spec: transport, reason: "\(name) has no HCI traffic to capture: run btmon (as root) beside it instead of +snoop")
        }
        let argument = head.count > name.count ? String(head.dropFirst(name.count + 1)) : nil
        do { try scheme.validate(argument: argument) } catch {
            throw BluetideError.transportUnavailable(spec: transport, reason: "\(error)")
        }
        let backend: any CentralBackend
        do {
            backend = try await scheme.openCentral(argument: argument, configuration: configuration)
        } catch let error as BluetideError {
            throw error
        } catch {
            throw BluetideError.transportUnavailable(spec: transport, reason: "\(error)")
        }
        let unavailable = backend.peripheralUnavailable ?? "the peripheral role is not available on \(name)"
        let idle = HostStack(transport: BackendOnlyTransport(reason: unavailable))
        let address = await backend.address ?? .randomStatic(0)
        // A backend that serves too gives the peripheral role; else the peripheral refuses.
        let peripheral: Peripheral
        if let provider = backend as? any PeripheralBackendProvider {
            do {
                peripheral = Peripheral(backend: try await provider.makePeripheral())
            } catch {
                await backend.close()
                throw BluetideError.transportUnavailable(spec: transport, reason: "\(error)")
            }
        } else {
            peripheral = Peripheral(stack: idle, unavailable: backend.peripheralUnavailable)
        }
        return Bluetooth(
            stack: idle,
            central: Central(
                stack: idle, maximumConnections: configuration.maximumConnections,
                defaultConnectTimeout: configuration.connectTimeout, pairsWhenRequired: configuration.pairing.pairsWhenRequired,
                canAuthenticate: configuration.pairing.ioCapability != .noInputNoOutput, backend: backend,
                clock: configuration.clock, randomness: configuration.centralRandomness(after: configuration.randomness)),
            peripheral: peripheral, address: address, transportSpec: transport,
            promptFeed: PairingPromptFeed(stack: idle))
    }
}
