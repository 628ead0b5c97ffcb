import Bluetide
import BluetideGPIO
import BluetideProfiles
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import BluetideSupport

/// Settings of a ``ReflexDevice``.
public struct ReflexDeviceOptions: Sendable {
    /// GPIO backend, chip, line map, debounce, device name and simulated athlete.
    public var configuration: GPIOConfiguration
    /// Advertised name; nil = the configuration's `device-name`, else `Reflex-XXXX` from the address.
    public var name: String?
    /// Pause with every LED off between two steps, milliseconds (device time).
    public var gapMilliseconds: Double
    /// Consumer label of the GPIO lines (shown by the kernel).
    public var consumer: String

    public init(configuration: GPIOConfiguration, name: String? = nil, gapMilliseconds: Double = 200, consumer: String = "reflex") {
        self.configuration = configuration
        self.name = name
        self.gapMilliseconds = gapMilliseconds
        self.consumer = consumer
    }
}

/// The reflex trainer device: the ``PunchService`` on a ``Peripheral``, the six targets on GPIO
/// (Linux or simulated, from the ``GPIOConfiguration``) and a ``SequenceRunner`` between them.
///
/// - Advertises `Reflex-XXXX` (last two address bytes) or the configured name, with the Punch
///   service UUID, and keeps advertising: coaches come and go, the device keeps running.
/// - A command written on punchControl runs with the sequences stored at that moment.
/// - **A coach leaving during a run**: when the last connected coach disconnects, the run stops
///   (every LED off, status `13` stopped, which nobody hears); the sequences stay, so a coach
///   who reconnects can start again at once. While another coach is still connected the run
///   goes on.
/// - ``stop()`` turns every LED off, releases the lines, stops the simulated athlete and
///   advertising.
public actor ReflexDevice<C: Clock> where C.Duration == Duration {
    /// The served service.
    public nonisolated let service: PunchService
    /// The peripheral serving it.
    public nonisolated let peripheral: Peripheral
    /// The advertised name.
    public nonisolated let name: String
    /// The device's address.
    public nonisolated let address: BluetoothAddress
    /// The simulated chip (`sim` backend only), for tests and demos.
    public nonisolated let simulatedChip: SimulatedGPIOChip?
    /// Everything the device does, in order (one consumer).
    public nonisolated let events: AsyncStream<ReflexDeviceEvent>

    private let runner: SequenceRunner<C>
    private let lines: any GPIOLineRequest
    private let athlete: SimulatedAthlete<C>?
    private let eventSink: AsyncStream<ReflexDeviceEvent>.Continuation
    private var tasks: [Task<Void, Never>] = []
    private var coaches: [UInt16: BluetoothAddress] = [:]
    private var stopped = false

    private init(
        service: PunchService, peripheral: Peripheral, name: String, address: BluetoothAddress,
        simulatedChip: SimulatedGPIOChip?, runner: SequenceRunner<C>, lines: any GPIOLineRequest,
        athlete: SimulatedAthlete<C>?
    ) {
        self.service = service
        self.peripheral = peripheral
        self.name = name
        self.address = address
        self.simulatedChip = simulatedChip
        self.runner = runner
        self.lines = lines
        self.athlete = athlete
        (events, eventSink) = AsyncStream.makeStream(of: ReflexDeviceEvent.self)
    }

    /// Opens the GPIO backend, serves the Punch service with `bluetooth`'s peripheral role and
    /// advertises. Time (step times, reaction times, the simulated athlete) runs on `clock`.
    /// - Throws: ``GPIOError`` when the lines cannot be had; host and advertising errors.
    public static func start(bluetooth: Bluetooth, options: ReflexDeviceOptions, clock: C) async throws -> ReflexDevice {
        // The host's address names the device.
        let address = bluetooth.address
        let configuration = options.configuration
        let origin = clock.now
        // Read together with `origin`: Linux stamps edges with CLOCK_MONOTONIC.
        let monotonicAtOrigin = monotonicNanoseconds()
        let chip: any GPIOChip
        var simulated: SimulatedGPIOChip?
        var athlete: SimulatedAthlete<C>?
        var edgeZero: UInt64 = 0
        switch configuration.backend {
        case .sim:
            let highest = configuration.targets.flatMap { [$0.ledLine, $0.sensorLine] }.max() ?? 0
            // Stamped on the device's own time scale, so edge times and the runner agree exactly.
            let sim = SimulatedGPIOChip(
                lineCount: max(54, highest + 1), name: "sim:\(configuration.chipPath)",
                timestampNanoseconds: { origin.duration(to: clock.now).wholeNanoseconds })
            let model = SimulatedAthlete(chip: sim, configuration: configuration, clock: clock)
            await model.start()
            // Nobody reads the athlete's decisions here: drain them so they do not pile up
            // over a long run (the stream ends when the athlete stops).
            Task { for await _ in model.decisions {} }
            chip = sim
            simulated = sim
            athlete = model
        case .linux:
            chip = try await configuration.openGPIO(clock: clock).chip
            edgeZero = monotonicAtOrigin
        }
        let lines: any GPIOLineRequest
        do {
            lines = try await chip.request(configuration.lineRequest(consumer: options.consumer))
        } catch {
            await athlete?.stop()
            throw error
        }
        let runner = SequenceRunner(
            lines: lines, targets: configuration.targets, clock: clock, origin: origin,
            edgeNanosecondsAtOrigin: edgeZero, gapMilliseconds: options.gapMilliseconds)
        await runner.start()

        let name = options.name ?? configuration.deviceName ?? defaultName(for: address)
        let service = PunchService()
        let peripheral = bluetooth.peripheral
        let device = ReflexDevice(
            service: service, peripheral: peripheral, name: name, address: address, simulatedChip: simulated,
            runner: runner, lines: lines, athlete: athlete)
        do {
            try await peripheral.add(service)
            await device.listen()
            // Announced first: no coach can connect before advertising starts.
            device.eventSink.yield(.started(name: name, address: address))
            try await peripheral.startAdvertising(name: name, serviceUUIDs: [PunchUUID.service])
        } catch {
            await device.stop()
            throw error
        }
        return device
    }

    /// `Reflex-XXXX` with the last two bytes of `address` as written (`…:1A:2B` → `Reflex-1A2B`).
    public static func defaultName(for address: BluetoothAddress) -> String {
        let bytes = address.littleEndianBytes  // least significant first
        let last = bytes.count >= 2 ? [bytes[1], bytes[0]] : bytes
        return "\(PunchUUID.namePrefix)-\(last.hexString.uppercased())"
    }

    /// Coaches connected now.
    public var connectedCoaches: [BluetoothAddress] { coaches.keys.sorted().compactMap { coaches[$0] } }

    /// True while a run is in progress.
    public var isRunning: Bool { get async { await runner.isRunning } }

    /// Stops the device: run stopped, every LED off, lines released, athlete stopped, no more
    /// advertising, ``events`` ended. Idempotent.
    public func stop() async {
        guard !stopped else { return }
        stopped = true
        await runner.shutdown()
        await lines.release()
        await athlete?.stop()
        try? await peripheral.stopAdvertising()
        for task in tasks { task.cancel() }
        tasks = []
        eventSink.finish()
    }

    // MARK: - Wiring

    private func listen() {
        let service = service
        let runner = runner
        let sink = eventSink
        // The runner's outputs become notifications and events.
        tasks.append(Task {
            for await action in runner.actions {
                switch action {
                case let .status(status):
                    service.control.value = .status(status)
                    sink.yield(.status(status))
                case let .response(response):
                    service.response.value = response
                    sink.yield(.response(response))
                case .ledOn, .ledOff:
                    break
                }
            }
        })
        // Commands run with the sequences stored when they arrive.
        tasks.append(Task {
            for await write in service.control.writes {
                guard case let .command(command) = write.value else { continue }
                sink.yield(.command(command))
                await runner.handle(command, sequence: service.sequence.value.value, timeSequence: service.timeSequence.value.value)
            }
        })
        tasks.append(Task {
            for await write in service.sequence.writes {
                if let sequence = write.value.value { sink.yield(.sequenceReceived(sequence)) }
            }
        })
        tasks.append(Task {
            for await write in service.timeSequence.writes {
                if let times = write.value.value { sink.yield(.timeSequenceReceived(times)) }
            }
        })
        let connections = peripheral.connections
        tasks.append(Task { [weak self] in
            for await central in connections {
                guard let self else { return }
                await self.coachConnected(central)
            }
        })
    }

    private func coachConnected(_ central: ConnectedCentral) {
        guard !stopped else { return }
        coaches[central.handle] = central.address
        eventSink.yield(.coachConnected(central.address))
        tasks.append(Task { [weak self] in
            _ = await central.waitForDisconnection()
            await self?.coachDisconnected(central)
        })
    }

    private func coachDisconnected(_ central: ConnectedCentral) async {
        guard !stopped, coaches.removeValue(forKey: central.handle) != nil else { return }
        var stoppedRun = false
        if coaches.isEmpty, await runner.isRunning {
            await runner.stopIfRunning()
            stoppedRun = true
        }
        eventSink.yield(.coachDisconnected(central.address, stoppedRun: stoppedRun))
    }
}

/// CLOCK_MONOTONIC now, nanoseconds: the clock the kernel stamps GPIO edge events with.
private func monotonicNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(max(spec.tv_sec, 0)) &* 1_000_000_000 &+ UInt64(max(spec.tv_nsec, 0))
}

extension ReflexDevice where C == BluetideClock {
    /// ``start(bluetooth:options:clock:)`` on the clock of `bluetooth` (``Bluetooth/Configuration/clock``):
    /// the monotonic clock by default, the world's clock in a virtual world on a ``ManualClock``
    /// — step times and the simulated athlete then run in the host's virtual time.
    public static func start(bluetooth: Bluetooth, options: ReflexDeviceOptions) async throws -> ReflexDevice {
        try await start(bluetooth: bluetooth, options: options, clock: bluetooth.central.clock)
    }
}
