import Bluetide
import Foundation
import BluetideSupport

/// Live devices as a ride's data source: finds each requested device (by name, address or
/// service), connects with the resilient policy, subscribes to its data and reports its values
/// and link changes. A device that drops out reconnects on its own (and, should reconnecting give
/// up, is connected afresh every few seconds) without ending the ride.
public actor LiveRideSource: RideDataSource {
    /// How devices are found and kept.
    public struct Configuration: Sendable {
        /// How long to scan for the devices, seconds.
        public var scanSeconds: Double
        /// The connection policy (resilient: reconnects after a drop-out).
        public var policy: ConnectionPolicy
        /// Pause before connecting afresh after reconnecting gave up.
        public var retryDelay: Duration
        /// How long a trainer command waits for its confirmation.
        public var controlTimeout: Duration

        /// A configuration.
        public init(
            scanSeconds: Double = 5, policy: ConnectionPolicy = .resilient, retryDelay: Duration = .seconds(2),
            controlTimeout: Duration = .seconds(5)
        ) {
            self.scanSeconds = scanSeconds
            self.policy = policy
            self.retryDelay = retryDelay
            self.controlTimeout = controlTimeout
        }
    }

    private struct Found: Sendable {
        var request: RideDeviceRequest
        var address: BluetoothAddress
        var name: String?
    }

    /// The central that reaches the devices.
    public nonisolated let central: Central
    /// The devices asked for.
    public nonisolated let requests: [RideDeviceRequest]
    /// The configuration.
    public nonisolated let configuration: Configuration
    private var connected: [(device: RideDevice, connection: Connection)] = []
    private var control: (any TrainerControl)?
    private var information: RideDeviceInformation?
    private var tasks: [Task<Void, Never>] = []
    private var continuation: AsyncStream<RideEvent>.Continuation?
    private var stopped = false

    /// A source reaching `requests` through `central`.
    public init(central: Central, requests: [RideDeviceRequest], configuration: Configuration = Configuration()) {
        self.central = central
        self.requests = requests
        self.configuration = configuration
    }

    public var devices: [RideDevice] { connected.map(\.device) }
    public var trainer: (any TrainerControl)? { control }
    /// The trainer's Device Information, read once after connecting (nil without a trainer or
    /// when it serves no 0x180A).
    public var trainerInformation: RideDeviceInformation? { information }

    /// Finds and connects every requested device (throwing, with what was seen, when one is not
    /// found or does not connect), then streams their values.
    public func start() async throws -> AsyncStream<RideEvent> {
        let found = try await find()
        for item in found {
            let label = item.name.map { "\($0) (\(item.address))" } ?? "\(item.address)"
            let connection: Connection
            do {
                connection = try await central.connect(to: item.address, policy: configuration.policy)
            } catch {
                await closeAll()
                throw RideError("cannot connect to \(item.request.kind.rawValue) \(label): \(error)")
            }
            let services = (try? await connection.services().map(\.service.uuid)) ?? []
            guard let role = Self.role(of: item.request.kind, services: services) else {
                await connection.disconnect()
                await closeAll()
                throw RideError(
                    "\(label) serves none of the \(item.request.kind.rawValue) services (\(item.request.kind.services.map { "\($0)" }.joined(separator: ", ")))")
            }
            let device = RideDevice(role: role, address: item.address.string, name: item.name)
            connected.append((device, connection))
            if role.isTrainer, services.contains(.deviceInformation) {
                information = await Self.readInformation(connection)
            }
            if role == .ftmsTrainer {
                let ftms = FTMSTrainerControl(connection: connection, device: device, timeout: configuration.controlTimeout)
                do { try await ftms.start() } catch {
                    await closeAll()
                    throw RideError("cannot subscribe to \(label)'s control point: \(error)")
                }
                control = ftms
            } else if role == .fecTrainer {
                control = FECTrainerControl(connection: connection, device: device, timeout: configuration.controlTimeout)
            }
        }
        let (stream, continuation) = AsyncStream<RideEvent>.makeStream(bufferingPolicy: .unbounded)
        self.continuation = continuation
        // Ticks and reading times count on the central's clock (a test's virtual clock drives them).
        let clock = central.clock
        let start = clock.now
        for (device, connection) in connected {
            tasks.append(Task { [weak self] in await self?.follow(device, connection, start: start, into: continuation) })
        }
        tasks.append(Task {
            var second = 1
            while !Task.isCancelled {
                do { try await clock.sleep(until: start.advanced(by: .seconds(second)), tolerance: nil) } catch { break }
                continuation.yield(.tick(time: Double(second)))
                second += 1
            }
        })
        continuation.onTermination = { [weak self] _ in Task { await self?.stop() } }
        return stream
    }

    /// The address (with its type) `device` is connected at, when it is one of this source's.
    public func address(of device: RideDevice) -> BluetoothAddress? {
        connected.first { $0.device == device }?.connection.address
    }

    /// Reads what `connection`'s device serves of Device Information; nil when it gives nothing.
    static func readInformation(_ connection: Connection) async -> RideDeviceInformation? {
        var information = RideDeviceInformation()
        for characteristic in RideDeviceInformation.characteristics {
            information[characteristic] = try? await connection.read(characteristic, as: DeviceInformationString.self).text
        }
        return information.isEmpty ? nil : information
    }

    /// The role a connected device plays, from the services it serves.
    static func role(of kind: RideDeviceRequest.Kind, services: [BluetoothUUID]) -> RideDeviceRole? {
        switch kind {
        case .trainer:
            if services.contains(.fitnessMachine) { return .ftmsTrainer }
            if services.contains(.tacxFECService) { return .fecTrainer }
            return nil
        case .power: return services.contains(.cyclingPower) ? .power : nil
        case .speedCadence: return services.contains(.cyclingSpeedAndCadence) ? .speedCadence : nil
        case .heartRate: return services.contains(.heartRate) ? .heartRate : nil
        }
    }

    /// Streams one device's values for as long as the source runs.
    private func follow(
        _ device: RideDevice, _ first: Connection, start: BluetideClock.Instant, into continuation: AsyncStream<RideEvent>.Continuation
    ) async {
        var connection: Connection? = first
        let clock = central.clock
        let now: @Sendable () -> Double = { clock.now.seconds(since: start) }
        while !Task.isCancelled {
            if let link = connection {
                let watcher = Task {
                    for await event in link.events {
                        switch event {
                        case .disconnected: continuation.yield(.link(device: device, connected: false, time: now()))
                        case .reconnected: continuation.yield(.link(device: device, connected: true, time: now()))
                        default: break
                        }
                    }
                }
                do {
                    for try await bytes in try await link.notifications(of: device.role.dataCharacteristic) {
                        continuation.yield(.reading(RideReading(
                            time: now(), device: device, characteristic: device.role.dataCharacteristic, bytes: bytes)))
                    }
                } catch {}
                watcher.cancel()
                if Task.isCancelled || stopped { return }
                continuation.yield(.link(device: device, connected: false, time: now()))
                await link.disconnect()
            }
            // Reconnecting gave up (or the first subscription failed): connect afresh.
            connection = nil
            do { try await clock.sleep(for: configuration.retryDelay) } catch { return }
            guard let known = connected.first(where: { $0.device == device })?.connection.address else { return }
            if let fresh = try? await central.connect(to: known, policy: configuration.policy) {
                connection = fresh
                replace(device, with: fresh)
                continuation.yield(.link(device: device, connected: true, time: now()))
            }
        }
    }

    private func replace(_ device: RideDevice, with connection: Connection) {
        if let index = connected.firstIndex(where: { $0.device == device }) { connected[index].connection = connection }
    }

    /// Scans until every request without an explicit address has a device (or the time is up).
    private func find() async throws -> [Found] {
        var found: [Int: Found] = [:]
        // Addresses given with their type are connected to without a scan.
        for (index, request) in requests.enumerated() {
            if let address = Self.query(request).typedAddress { found[index] = Found(request: request, address: address, name: nil) }
        }
        if found.count < requests.count {
            let open = requests.indices.filter { found[$0] == nil }
            let search: (found: [Advertisement?], seen: [Advertisement])
            do {
                search = try await central.find(
                    each: open.map { Self.query(requests[$0]) }, excluding: found.values.map(\.address),
                    within: .seconds(configuration.scanSeconds))
            } catch {
                throw RideError("cannot scan for the ride's devices: \(error)")
            }
            for (index, advertisement) in zip(open, search.found) {
                if let advertisement { found[index] = Found(request: requests[index], address: advertisement.address, name: advertisement.name) }
            }
            let seen = search.seen.map { $0.name ?? $0.address.description }
            let missing = requests.indices.filter { found[$0] == nil && !requests[$0].isOptional }.map { requests[$0].description }
            if !missing.isEmpty || found.isEmpty {
                let list = seen.isEmpty ? "no device at all" : Array(Set(seen)).sorted().joined(separator: ", ")
                let what = missing.isEmpty ? "no trainer or sensor" : missing.joined(separator: ", ")
                throw RideError(
                    "not found within \(RideFormat.fixed(configuration.scanSeconds, 0)) s: \(what) (seen: \(list)); check the name with `bluetide scan`")
            }
        }
        return requests.indices.compactMap { found[$0] }
    }

    /// The device `request` asks for: by name or address when it names one, else any device
    /// advertising a service of its kind.
    static func query(_ request: RideDeviceRequest) -> DeviceQuery {
        if let wanted = request.device { return DeviceQuery(parsing: wanted) }
        return DeviceQuery(services: request.kind.services)
    }

    private func closeAll() async {
        for (_, connection) in connected { await connection.disconnect() }
        connected = []
    }

    public func stop() async {
        guard !stopped else { return }
        stopped = true
        for task in tasks { task.cancel() }
        tasks = []
        if let ftms = control as? FTMSTrainerControl { await ftms.stop() }
        if let fec = control as? FECTrainerControl { await fec.stop() }
        await closeAll()
        continuation?.finish()
    }
}

/// A ride that cannot go on, in one line saying what was wrong and what to try.
public struct RideError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The message.
    public var message: String
    /// An error with `message`.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
