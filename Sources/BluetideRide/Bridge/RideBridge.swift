import Bluetide

/// Something that happened on the bridge, for the user to see: an app connecting, a request
/// and the answer it got, the trainer's confirmation or refusal.
public struct RideBridgeEvent: Sendable, Hashable, CustomStringConvertible {
    /// What kind of event.
    public enum Kind: String, Sendable, Hashable {
        /// An app connected.
        case connected
        /// An app disconnected.
        case disconnected
        /// An app wrote to the control point and got `result`.
        case request
        /// Advertising (re)started, or could not.
        case advertising
    }

    /// What kind of event.
    public var kind: Kind
    /// One line saying what happened, e.g. `app C6:…: set target power 180 W → trainer confirmed → success`.
    public var text: String
    /// The FTMS result code answered, for requests.
    public var result: FTMSResultCode?

    /// An event with these parts.
    public init(kind: Kind, text: String, result: FTMSResultCode? = nil) {
        self.kind = kind
        self.text = text
        self.result = result
    }

    /// The text.
    public var description: String { text }
}

/// Re-serves a ride as a standard smart trainer: whatever the session reads (an FE-C trainer,
/// CSC and power sensors, an FTMS trainer, a heart-rate strap) is served as the Fitness Machine
/// service (Indoor Bike Data, Feature, supported ranges, Control Point, Status), Cycling Power
/// and Heart Rate on a ``Peripheral``, so an app that only speaks FTMS can ride it.
///
/// Control point writes follow the FTMS rules (``FTMSBridgeCore``): Request Control first,
/// then target power, simulation parameters, inclination, resistance and reset are carried out
/// on the session's real trainer (FE-C pages 49, 51, 48; or the trainer's own FTMS control
/// point), and the app's indication carries success once the trainer confirmed, operation failed
/// (`04`) when it refused or did not answer. A ride without a controllable trainer (sensors
/// only) still serves its data; commands are then answered operation failed.
///
/// ```swift
/// let bridge = RideBridge(session: ride, peripheral: bluetooth.peripheral)
/// try await bridge.start()
/// for await sample in samples { await bridge.publish(sample) }
/// ```
public actor RideBridge {
    /// What the bridge serves and how it advertises.
    public struct Configuration: Sendable {
        /// The advertised name apps show.
        public var name: String
        /// Also serve Cycling Power (0x1818).
        public var servesCyclingPower: Bool
        /// Also serve Heart Rate (0x180D).
        public var servesHeartRate: Bool

        /// A configuration.
        public init(name: String = "Bluetide Bridge", servesCyclingPower: Bool = true, servesHeartRate: Bool = true) {
            self.name = name
            self.servesCyclingPower = servesCyclingPower
            self.servesHeartRate = servesHeartRate
        }
    }

    /// The ride whose trainer the apps control.
    public nonisolated let session: RideSession
    /// Where the services are served.
    public nonisolated let peripheral: Peripheral
    /// The configuration.
    public nonisolated let configuration: Configuration
    /// What happens on the bridge, as it happens.
    public nonisolated let events: AsyncStream<RideBridgeEvent>
    private let eventContinuation: AsyncStream<RideBridgeEvent>.Continuation
    private let fitness = FitnessMachineBridgeService()
    private let power = CyclingPowerBridgeService()
    private let heart = HeartRateBridgeService()
    private var core = FTMSBridgeCore()
    private var measurements = BridgeMeasurements()
    private var tasks: [Task<Void, Never>] = []
    /// One watcher per connected app, until it disconnects.
    private var watchers: [UInt16: Task<Void, Never>] = [:]
    private var started = false
    /// The Device Information the bridge serves, once started.
    public private(set) var servedInformation: RideDeviceInformation?

    /// What the bridge says of itself where the trainer says nothing.
    public static let ownInformation = RideDeviceInformation(
        manufacturerName: "Bluetide", modelNumber: "Bluetide FTMS Bridge", hardwareRevision: nil,
        firmwareRevision: BluetideVersion.current, softwareRevision: BluetideVersion.current)

    /// The Device Information to serve: each of the trainer's own values (so an app shows the
    /// real trainer's maker and model), else the bridge's own. The serial number and hardware
    /// revision are served only when the trainer gives them.
    public static func servedInformation(trainer: RideDeviceInformation?) -> RideDeviceInformation {
        var served = ownInformation
        for characteristic in RideDeviceInformation.characteristics {
            if let value = trainer?[characteristic] { served[characteristic] = value }
        }
        return served
    }

    /// The Device Information service (0x180A): every value read-only.
    static func deviceInformationService(_ information: RideDeviceInformation) -> GATTServiceDefinition {
        GATTServiceDefinition(uuid: .deviceInformation, characteristics: RideDeviceInformation.characteristics.compactMap { uuid in
            information[uuid].map { GATTCharacteristicDefinition(uuid: uuid, properties: [.read], value: DeviceInformationString($0).bytes) }
        })
    }

    /// A bridge for `session` on `peripheral` (one bridge per peripheral). Call ``start()``.
    public init(session: RideSession, peripheral: Peripheral, configuration: Configuration = Configuration()) {
        self.session = session
        self.peripheral = peripheral
        self.configuration = configuration
        (events, eventContinuation) = AsyncStream<RideBridgeEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
    }

    /// Adds the services and starts advertising the Fitness Machine service (with its service
    /// data: machine available, indoor bike) under ``Configuration/name``. Device Information
    /// (0x180A) passes the trainer's own manufacturer, model, serial and revisions through
    /// (read when the session started; start the session first), else names the bridge.
    public func start() async throws {
        guard !started else { return }
        started = true
        var services: [any GATTService] = [fitness]
        if configuration.servesCyclingPower { services.append(power) }
        if configuration.servesHeartRate { services.append(heart) }
        try await peripheral.add(services: services)
        let information = Self.servedInformation(trainer: await session.source.trainerInformation)
        await peripheral.add(definitions: [Self.deviceInformationService(information)])
        servedInformation = information
        let writes = fitness.controlPoint.writes
        let connections = peripheral.connections
        tasks.append(Task { [weak self] in
            for await write in writes {
                guard let self else { return }
                await self.handle(write.bytes, from: write.connectionHandle, central: write.central)
            }
        })
        tasks.append(Task { [weak self] in
            for await central in connections {
                guard let self else { return }
                await self.connected(central)
            }
        })
        try await peripheral.startAdvertising(
            name: configuration.name, serviceUUIDs: [.fitnessMachine],
            serviceData: [.fitnessMachine: FitnessMachineServiceData(machineAvailable: true, machineTypes: .indoorBike).bytes])
        eventContinuation.yield(RideBridgeEvent(kind: .advertising, text: "advertising as \"\(configuration.name)\" (Fitness Machine, indoor bike)"))
    }

    /// Serves `sample`: once a second (tick samples) Indoor Bike Data, Cycling Power and Heart
    /// Rate measurements are notified to subscribed apps; update samples are passed over, as a
    /// trainer sends its data at 1 Hz.
    public func publish(_ sample: RideSample) {
        guard sample.trigger == .tick else { return }
        let values = measurements.values(for: sample)
        fitness.indoorBikeData.value = values.indoorBikeData
        if configuration.servesCyclingPower, let measurement = values.cyclingPower { power.measurement.value = measurement }
        if configuration.servesHeartRate, let measurement = values.heartRate { heart.measurement.value = measurement }
    }

    /// Stops advertising and the bridge's tasks, and ends ``events``. Connected apps stay
    /// connected until the stack closes.
    public func stop() async {
        for task in tasks + Array(watchers.values) { task.cancel() }
        tasks = []
        watchers = [:]
        try? await peripheral.stopAdvertising()
        eventContinuation.finish()
    }

    private func connected(_ central: ConnectedCentral) {
        eventContinuation.yield(RideBridgeEvent(kind: .connected, text: "app \(central.address) connected"))
        let handle = central.handle
        watchers[handle] = Task { [weak self] in
            let reason = await central.waitForDisconnection()
            await self?.disconnected(handle, central: central, reason: "\(reason)")
        }
    }

    private func disconnected(_ handle: UInt16, central: ConnectedCentral, reason: String) {
        let hadControl = core.controller == handle
        watchers[handle] = nil
        core.disconnected(handle)
        eventContinuation.yield(RideBridgeEvent(
            kind: .disconnected, text: "app \(central.address) disconnected (\(reason))\(hadControl ? "; control released" : "")"))
    }

    private func handle(_ bytes: [UInt8], from handle: UInt16, central: ConnectedCentral?) async {
        let who = central.map { "app \($0.address)" } ?? "app 0x\(String(handle, radix: 16))"
        let request = (try? FitnessMachineControlPointRequest(bytes: bytes)).map(Self.describe) ?? "control point write \(bytes.hexString)"
        var decision = core.receive(bytes, from: handle)
        var via = ""
        if case let .forward(command, forwarded) = decision {
            let failure = await command.carryOut(on: session)
            via = FTMSBridgeCore.TrainerCommand.outcome(failure)
            decision = core.completed(forwarded, failure: failure)
        }
        guard case let .answer(response, statuses) = decision else { return }
        fitness.controlPoint.value = response.bytes
        for status in statuses { fitness.status.value = status.bytes }
        if fitness.trainingStatus.value != core.trainingStatus { fitness.trainingStatus.value = core.trainingStatus }
        eventContinuation.yield(RideBridgeEvent(
            kind: .request, text: "\(who): \(request)\(via) → \(response.result)", result: response.result))
    }

    /// `set target power 180 W`: a control point request in words.
    static func describe(_ request: FitnessMachineControlPointRequest) -> String {
        switch request {
        case .requestControl: "request control"
        case .reset: "reset"
        case let .setTargetPower(watts): "set target power \(watts) W"
        case let .setIndoorBikeSimulation(p):
            "set simulation: grade \(RideFormat.fixed(p.gradePercent, 2)) %, wind \(RideFormat.fixed(p.windSpeedMetersPerSecond, 1)) m/s"
        case let .setTargetInclination(tenths): "set inclination \(RideFormat.fixed(Double(tenths) / 10, 1)) %"
        case let .setTargetResistanceLevel(tenths): "set resistance level \(RideFormat.fixed(Double(tenths) / 10, 1))"
        case let .setTargetResistanceLevelWide(tenths): "set resistance level \(RideFormat.fixed(Double(tenths) / 10, 1))"
        default: "\(request)"
        }
    }
}

extension FTMSBridgeCore.TrainerCommand {
    /// Sends this command to `session`'s trainer, as both bridges (BLE and DIRCON) do with a
    /// control point request they forward; nil when the trainer confirmed, else why not.
    func carryOut(on session: RideSession) async -> String? {
        do {
            switch self {
            case let .targetPower(watts): try await session.setTarget(.power(watts: watts))
            case let .simulation(parameters): try await session.setSimulation(parameters)
            case let .resistance(percent): try await session.setTarget(.resistance(percent: percent))
            case .reset: try await session.resetTrainer()
            }
            return nil
        } catch let error as TrainerControlError {
            return error.reason
        } catch {
            return "\(error)"
        }
    }

    /// What a bridge's event adds after a forwarded request: ` → trainer confirmed`, or
    /// ` → trainer refused: WHY` for the failure ``carryOut(on:)`` returned.
    static func outcome(_ failure: String?) -> String {
        failure.map { " → trainer refused: \($0)" } ?? " → trainer confirmed"
    }
}
