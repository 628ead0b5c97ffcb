import Bluetide
import BluetideSupport
import BluetideBase
import BluetideMQTT
import BluetideProfiles
import BluetideRide
import BluetideRing
import Foundation

/// How a gateway runs: its name, which devices it connects to, and its topics.
public struct GatewayConfiguration: Sendable {
    /// The gateway's name in topics (`bluetide/gateway/<id>/…`): letters, digits, `-` and `_`.
    public var id: String
    /// Devices to connect to; the others are only reported as presence.
    public var watch: [GatewayWatch]
    public var topics: GatewayTopics
    /// Shortest time between two presence messages of one device.
    public var presenceInterval: Duration
    /// Time between battery reads of a connected device.
    public var batteryInterval: Duration
    /// Wait before connecting again to a device that was lost or refused.
    public var retryDelay: Duration
    /// Wheel circumference, metres (speed and distance from CSC and Cycling Power).
    public var wheelCircumference: Double
    /// How long after starting a gateway only listens before it connects, so it learns from the
    /// other gateways' presence which of them hears each device best.
    public var settleTime: Duration

    public init(id: String, watch: [GatewayWatch], prefix: String = "bluetide", discoveryPrefix: String = "homeassistant") throws(GatewayError) {
        guard !id.isEmpty, id.count <= 64, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw GatewayError(field: "--id", "\"\(id)\": expected 1…64 letters, digits, - or _ (it is part of MQTT topics)")
        }
        self.id = id
        self.watch = watch
        self.topics = GatewayTopics(prefix: prefix, discoveryPrefix: discoveryPrefix, gateway: id)
        self.presenceInterval = .seconds(10)
        self.batteryInterval = .seconds(300)
        self.retryDelay = .seconds(3)
        self.wheelCircumference = 2.105
        self.settleTime = .seconds(2)
        self.ringInterval = .seconds(60)
        self.maximumConnections = 64
        self.stateInterval = .milliseconds(250)
        self.trainerConfirmTimeout = .seconds(5)
    }

    /// Shortest time between two retained state objects of one device. Values coming faster are
    /// folded into the next state object (latest wins), published when the interval is over; the
    /// last state of a device is always published (docs/gateway.md).
    public var stateInterval: Duration

    /// The most devices this gateway keeps connected at once (the central's limit is raised to it).
    public var maximumConnections: Int

    /// Time between two polls of a COLMI ring (battery, today's steps; its real-time heart rate
    /// and SpO2 measurements are renewed at each poll).
    public var ringInterval: Duration

    /// How long a trainer has to confirm a `set/…` command (FTMS control point indication, FE-C
    /// page 71) before the command's result says it failed.
    public var trainerConfirmTimeout: Duration


    /// The last will to give the MQTT client: the gateway's availability turns `offline`
    /// (retained) when it vanishes without saying so.
    public var will: MQTTMessage {
        MQTTMessage(topic: topics.availability, text: "offline", qos: .atLeastOnce, retain: true)
    }
}

/// What a gateway reports to its log (standard error in the CLI).
public enum GatewayLogEvent: Sendable, CustomStringConvertible {
    case connected(device: String, name: String?)
    case disconnected(device: String, reason: String)
    case connectFailed(device: String, reason: String)
    case command(device: String, command: String, outcome: String)
    case brokerLink(String)

    public var description: String {
        switch self {
        case let .connected(device, name): "connected to \(device)\(name.map { " (\($0))" } ?? "")"
        case let .disconnected(device, reason): "\(device) disconnected: \(reason)"
        case let .connectFailed(device, reason): "could not connect to \(device): \(reason)"
        case let .command(device, command, outcome): "command \(command) for \(device): \(outcome)"
        case let .brokerLink(text): "broker: \(text)"
        }
    }
}

/// `bluetide gateway`: puts the devices one central hears on an MQTT broker. It publishes
/// presence for every advertisement (throttled, with RSSI), connects to the watched devices,
/// publishes each notification decoded in the one JSON schema plus a retained state object per
/// device, announces the sensors to Home Assistant, and carries commands back to the devices
/// with one reply each (docs/gateway.md).
///
/// All gateway state (devices, their values, the presence throttle) belongs to this actor;
/// connections, readers and commands run in tasks that report into it.
public actor Gateway {
    public let configuration: GatewayConfiguration
    private let central: Central
    private let mqtt: any GatewayMQTT
    private let log: @Sendable (GatewayLogEvent) -> Void
    /// Every interval, delay and window of the gateway, and its `monotonic` stamps, count on it.
    private let clock: ElapsedClock<BluetideClock>
    private var topics: GatewayTopics { configuration.topics }

    private struct Device {
        var address: BluetoothAddress
        var name: String?
        var connection: Connection?
        var task: Task<Void, Never>?
        var values: [String: GatewayJSON] = [:]
        /// The `device` member of its records (address, address type, name), built once.
        var json: GatewayJSON
        var announced: Set<String> = []
        /// When its state object may be published again, and whether one is waiting.
        var stateThrottle: StateThrottle
        var stateFlush: Task<Void, Never>?
        var model: String = "BLE device"
        var trainer: (any TrainerControl)?
        var ring: Ring?
        /// The ring's current real-time measurement gave a value.
        var ringMeasured = false
    }

    private var devices: [String: Device] = [:]
    /// Who hears each device, and how well: device → gateway → (RSSI dBm, when). Our own reports included.
    private var heardBy: [String: [String: (rssi: Int, at: Duration)]] = [:]
    /// The gateway that claims each device (retained `claim` topics).
    private var claims: [String: String] = [:]
    /// Gateways whose availability is `offline` (their claims are void).
    private var offlineGateways: Set<String> = []
    /// When `run` started and when the tables were last pruned (times on ``clock``).
    private var startedAt = Duration.zero
    private var lastPrune = Duration.zero
    /// Set at shutdown: devices are then marked offline once, by the shutdown.
    private var stopping = false
    private var lastPresence: [String: Duration] = [:]
    private var retryAfter: [String: Duration] = [:]
    /// Messages published, for the benchmark and the log.
    public private(set) var published = 0

    /// A gateway on `central` publishing through `mqtt` (an ``MQTTClient`` made with
    /// ``GatewayConfiguration/will`` as its will and connected or started), running on the
    /// central's clock (``Central/clock``: virtual time in a world on a `ManualClock`).
    public init(configuration: GatewayConfiguration, central: Central, mqtt: any GatewayMQTT,
                log: @escaping @Sendable (GatewayLogEvent) -> Void = { _ in }) {
        self.init(configuration: configuration, central: central, mqtt: mqtt, clock: central.clock, log: log)
    }

    /// A gateway running on `clock`: its presence, battery, ring and state intervals, retry
    /// delays, settle time, freshness and pruning windows, and the `monotonic` seconds of its
    /// records (counted from now) all follow it. The broker's I/O time limits stay on the wall
    /// clock (the broker is another process).
    public init<C: Clock>(configuration: GatewayConfiguration, central: Central, mqtt: any GatewayMQTT, clock: C,
                          log: @escaping @Sendable (GatewayLogEvent) -> Void = { _ in }) where C.Duration == Duration {
        self.configuration = configuration
        self.central = central
        self.mqtt = mqtt
        self.clock = ElapsedClock(clock: BluetideClock(clock))
        self.log = log
    }

    /// Runs until cancelled: announces the gateway `online`, listens for commands, scans and
    /// serves devices. On cancellation it disconnects the devices, marks them and itself
    /// `offline` and waits (bounded) for the broker to have it all; then close the MQTT client.
    public func run() async throws {
        startedAt = clock.elapsed
        if await central.maximumConnections < configuration.maximumConnections {
            await central.setMaximumConnections(configuration.maximumConnections)
        }
        publish(MQTTMessage(topic: topics.availability, text: "online", qos: .atLeastOnce, retain: true))
        publish(MQTTMessage(topic: topics.gatewayDiscovery, text: topics.gatewayDiscoveryPayload.text, qos: .atLeastOnce, retain: true))
        // Wall-clock limits: the broker is another process, outside the gateway's clock.
        try await mqtt.subscribe(topics.commands, qos: .atLeastOnce, timeout: .seconds(10))
        try await mqtt.subscribe(topics.allAvailability, qos: .atLeastOnce, timeout: .seconds(10))
        try await mqtt.subscribe(topics.allClaims, qos: .atLeastOnce, timeout: .seconds(10))
        try await mqtt.subscribe(topics.allPresence, qos: .atMostOnce, timeout: .seconds(10))
        let advertisements = try await central.scan(filter: ScanFilter(allowDuplicates: true))
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                for await advertisement in advertisements { await self.heard(advertisement) }
            }
            group.addTask { [self] in
                for await message in mqtt.messages { await self.received(message) }
            }
            group.addTask { [self] in
                for await event in mqtt.events {
                    switch event {
                    case .connected:
                        self.log(.brokerLink("connected"))
                        // A broker restarted without persistence forgot the retained messages.
                        await self.republishRetained()
                    case let .disconnected(reason): self.log(.brokerLink("lost (\(reason)); reconnecting"))
                    case let .refused(reason): self.log(.brokerLink("refused: \(reason)"))
                    case let .outboxFileFailed(problem): self.log(.brokerLink(problem))
                    case let .queued(count): self.log(.brokerLink("\(count) message\(count == 1 ? "" : "s") queued until it is back"))
                    }
                }
            }
            // Serves until cancelled: a stream nobody feeds ends when its task is cancelled.
            let (idle, idleEnd) = AsyncStream<Never>.makeStream()
            for await _ in idle {}
            idleEnd.finish()
            group.cancelAll()
        }
        await shutDown()
    }

    /// The devices connected now, by topic id.
    public var connectedDevices: [String] { devices.filter { $0.value.connection != nil }.keys.sorted() }

    // MARK: advertisements

    private func heard(_ advertisement: Advertisement) {
        let id = GatewayTopics.deviceID(advertisement.address)
        let now = clock.elapsed
        if lastPresence[id].map({ now - $0 >= configuration.presenceInterval }) ?? true {
            lastPresence[id] = now
            var device = deviceJSON(advertisement.address, name: advertisement.name)
            if case var .object(members) = device {
                members["rssiDbm"] = .integer(Int64(advertisement.rssi))
                device = .object(members)
            }
            let record: GatewayJSON = [
                "type": "presence", "device": device, "gateway": .string(configuration.id),
                "rssiDbm": .integer(Int64(advertisement.rssi)), "time": time(),
            ]
            _ = try? mqtt.publish(MQTTMessage(topic: topics.presence(id), text: record.text, qos: .atMostOnce))
            published += 1
        }
        heardBy[id, default: [:]][configuration.id] = (advertisement.rssi, now)
        if heardBy.count > 512 || lastPresence.count > 512, now - lastPrune > .seconds(60) {
            lastPrune = now
            prune(now: now)
        }
        guard devices[id] == nil, configuration.watch.contains(where: { $0.matches(advertisement) }) else { return }
        if let until = retryAfter[id], now < until { return }
        guard now - startedAt >= configuration.settleTime, isBestGateway(for: id, now: now) else { return }
        var device = Device(address: advertisement.address, name: advertisement.name, json: deviceJSON(advertisement.address, name: advertisement.name),
                            stateThrottle: StateThrottle(interval: configuration.stateInterval))
        device.model = Self.model(advertisement.serviceUUIDs)
        devices[id] = device
        devices[id]?.task = Task { [self] in await self.serve(id, advertisement: advertisement) }
    }

    /// Another gateway claims a device this one is connected to (both connected in the same
    /// instant): the one that hears it worse lets go; the other claims it again.
    private func contest(_ id: String, claimedBy other: String) {
        guard other != configuration.id, !offlineGateways.contains(other), let device = devices[id], let connection = device.connection else { return }
        let mine = heardBy[id]?[configuration.id]?.rssi ?? Int.min
        let theirs = heardBy[id]?[other]?.rssi ?? Int.min
        if theirs > mine || (theirs == mine && other < configuration.id) {
            log(.disconnected(device: id, reason: "gateway \(other) hears it better (\(theirs) dBm against \(mine) dBm); letting go"))
            devices[id]?.connection = nil  // no offline, no claim release: the other gateway has it
            device.task?.cancel()
            Task { await connection.disconnect() }
        } else {
            claims[id] = configuration.id
            let claim: GatewayJSON = [
                "type": "claim", "gateway": .string(configuration.id), "device": deviceJSON(device.address, name: device.name),
                "rssiDbm": .integer(Int64(mine == Int.min ? -127 : mine)), "time": time(),
            ]
            publish(MQTTMessage(topic: topics.claim(id), text: claim.text, qos: .atLeastOnce, retain: true))
        }
    }

    /// Forgets presence reports and throttle entries of devices not heard for a long time (random
    /// addresses change every few minutes, so a busy place would otherwise grow these tables forever).
    private func prune(now: Duration) {
        let horizon = max(configuration.presenceInterval * 30, .seconds(300))
        for (id, reports) in heardBy {
            let kept = reports.filter { now - $0.value.at <= horizon }
            heardBy[id] = kept.isEmpty ? nil : kept
        }
        lastPresence = lastPresence.filter { now - $0.value <= horizon }
        retryAfter = retryAfter.filter { now < $0.value }
    }

    /// Whether this gateway should connect to `id`: no other live gateway claims it, and among the
    /// live gateways that heard it lately, this one hears it best (ties: the smaller id).
    private func isBestGateway(for id: String, now: Duration) -> Bool {
        if let claimant = claims[id], claimant != configuration.id, !offlineGateways.contains(claimant) { return false }
        let freshness = max(configuration.presenceInterval * 3, .seconds(5))
        let candidates = (heardBy[id] ?? [:]).filter { gateway, report in
            !offlineGateways.contains(gateway) && now - report.at <= freshness
        }
        let best = candidates.max { a, b in
            a.value.rssi != b.value.rssi ? a.value.rssi < b.value.rssi : a.key > b.key
        }
        return best?.key == configuration.id
    }

    private static func model(_ services: [BluetoothUUID]) -> String {
        services.first.map { $0.name ?? $0.shortString } ?? "BLE device"
    }

    // MARK: one device

    private func serve(_ id: String, advertisement: Advertisement) async {
        let connection: Connection
        do {
            connection = try await central.connect(to: advertisement, timeout: .seconds(10))
        } catch {
            log(.connectFailed(device: id, reason: "\(error)"))
            ended(id)
            return
        }
        var readers: [Task<Void, Never>] = []
        do {
            devices[id]?.connection = connection
            log(.connected(device: id, name: advertisement.name))
            publish(MQTTMessage(topic: topics.deviceAvailability(id), text: "online", qos: .atLeastOnce, retain: true))
            claims[id] = configuration.id
            let claim: GatewayJSON = [
                "type": "claim", "gateway": .string(configuration.id), "device": deviceJSON(advertisement.address, name: advertisement.name),
                "rssiDbm": .integer(Int64(advertisement.rssi)), "time": time(),
            ]
            publish(MQTTMessage(topic: topics.claim(id), text: claim.text, qos: .atLeastOnce, retain: true))
            let services = try await connection.services()
            let options = ProfileOptions(wheelCircumference: configuration.wheelCircumference)
            for service in services {
                for item in service.characteristics {
                    let characteristic = item.characteristic
                    guard !characteristic.properties.isDisjoint(with: [.notify, .indicate]),
                          let profile = ProfileCatalog.forCharacteristic(characteristic.uuid) else { continue }
                    let values = try await connection.notifications(of: characteristic.uuid)
                    let uuid = characteristic.uuid
                    readers.append(Task { [self] in
                        var decoder = profile.makeDecoder(options)
                        do {
                            for try await bytes in values {
                                let time = self.seconds()
                                let packet = Result { () throws(DecodingError) -> DecodedPacket in try decoder.decode(bytes, at: time) }
                                self.value(id, uuid: uuid, profile: profile.name, bytes: bytes, packet: packet)
                            }
                        } catch {}
                    })
                }
            }
            let serviceIDs = Set(services.map(\.service.uuid))
            let uartOut: BluetoothUUID? = serviceIDs.contains(SerialUUID.nordicUARTService) ? SerialUUID.nordicUARTTX
                : serviceIDs.contains(SerialUUID.hm10Service) ? SerialUUID.hm10Data : nil
            if let uartOut, let received = try? await connection.notifications(of: uartOut) {
                readers.append(Task { [self] in
                    do { for try await bytes in received { self.uartReceived(id, uuid: uartOut, bytes: bytes) } } catch {}
                })
            }
            if services.contains(where: { $0.service.uuid == COLMIUUID.service }) {
                readers.append(Task { [self] in await self.pollRing(id, connection: connection) })
            }
            let hasBattery = services.contains { $0.characteristics.contains { $0.characteristic.uuid == .batteryLevel } }
            if hasBattery {
                let interval = configuration.batteryInterval
                readers.append(Task { [self] in
                    while !Task.isCancelled {
                        if let bytes = try? await connection.read(.batteryLevel) {
                            self.value(id, uuid: .batteryLevel, profile: "battery", bytes: bytes, packet: Self.decodeOnce(bytes, uuid: .batteryLevel, at: self.seconds()))
                        }
                        try? await self.clock.sleep(for: interval)
                    }
                })
            }
            var reason = "link closed"
            for await event in connection.events {
                if case let .disconnected(why) = event { reason = "\(why)"; break }
                if case let .failed(error) = event { reason = "\(error)"; break }
            }
            log(.disconnected(device: id, reason: reason))
        } catch {
            log(.disconnected(device: id, reason: "\(error)"))
        }
        for reader in readers { reader.cancel() }
        await connection.disconnect()
        ended(id)
    }

    /// A COLMI ring answers requests rather than notifying: battery and today's steps each
    /// ``GatewayConfiguration/ringInterval``, heart rate and SpO2 from real-time measurements.
    private func pollRing(_ id: String, connection: Connection) async {
        var options = Ring.Options()
        options.setsTimeOnOpen = true
        guard let ring = try? await Ring.open(connection, options: options) else { return }
        devices[id]?.ring = ring
        let readings = Task { [self] in
            for await reading in ring.readings where reading.errorCode == 0 && reading.value > 0 {
                if reading.type == .heartRate { self.ringValue(id, sensor: GatewaySensor.heartRate, Double(reading.value)) }
                if reading.type == .spo2 { self.ringValue(id, sensor: GatewaySensor.spo2, Double(reading.value)) }
                self.devices[id]?.ringMeasured = true
            }
        }
        // One real-time measurement at a time: heart rate, then SpO2 once it gave a value (or
        // after 30 s without one), and so on; kept going meanwhile.
        var current = COLMIRealTimeType.heartRate
        var startedAt = clock.elapsed
        devices[id]?.ringMeasured = false
        try? await ring.startMeasurement(current)
        while !Task.isCancelled {
            if let battery = try? await ring.battery() { ringValue(id, sensor: GatewaySensor.battery, Double(battery.levelPercent)) }
            // No step record today (just after midnight, or a ring left on the desk) is 0 steps;
            // a failed request is no value.
            do {
                let detail = try await ring.steps(daysAgo: 0)
                ringValue(id, sensor: GatewaySensor.steps, Double(detail?.records.reduce(0) { $0 + Int($1.steps) } ?? 0))
            } catch {}
            if devices[id]?.ringMeasured == true || clock.elapsed - startedAt > .seconds(30) {
                try? await ring.stopMeasurement(current)
                current = current == .heartRate ? .spo2 : .heartRate
                devices[id]?.ringMeasured = false
                startedAt = clock.elapsed
                try? await ring.startMeasurement(current)
            } else {
                try? await ring.continueMeasurement(current)
            }
            try? await clock.sleep(for: configuration.ringInterval)
        }
        readings.cancel()
    }

    /// Bytes a serial device (Nordic UART, HM-10) sent: published as they came, with their text.
    private func uartReceived(_ id: String, uuid: BluetoothUUID, bytes: [UInt8]) {
        guard let device = devices[id] else { return }
        let record: GatewayJSON = [
            "type": "uart-received", "device": deviceJSON(device.address, name: device.name), "gateway": .string(configuration.id),
            "characteristic": characteristicJSON(uuid), "time": time(),
            "value": ["hex": .string(Self.hex(bytes)), "summary": .string(String(decoding: bytes, as: UTF8.self))],
        ]
        publish(MQTTMessage(topic: topics.value(id, metric: "uart"), text: record.text, qos: .atLeastOnce))
    }

    /// One value of a ring (no characteristic of its own): the state object and discovery.
    private func ringValue(_ id: String, sensor: GatewaySensor, _ reading: Double) {
        guard let device = devices[id] else { return }
        devices[id]?.values[sensor.key] = .number(reading)
        if !device.announced.contains(sensor.key) {
            devices[id]?.announced.insert(sensor.key)
            let config = sensor.discoveryPayload(device: id, address: device.address, name: device.name, model: "COLMI ring", topics: topics)
            publish(MQTTMessage(topic: topics.discovery(id, sensor: sensor.key), text: config.text, qos: .atLeastOnce, retain: true))
        }
        let record: GatewayJSON = [
            "type": "ring-value", "device": device.json, "gateway": .string(configuration.id),
            "time": time(), "values": [sensor.key: .number(reading)],
        ]
        publish(MQTTMessage(topic: topics.value(id, metric: "ring"), text: record.text, qos: .atLeastOnce))
        stateChanged(id)
    }

    private func ended(_ id: String) {
        flushState(id)
        if devices[id]?.connection != nil, !stopping {
            publish(MQTTMessage(topic: topics.deviceAvailability(id), text: "offline", qos: .atLeastOnce, retain: true))
            releaseClaim(id)
        }
        devices[id] = nil
        retryAfter[id] = clock.elapsed + configuration.retryDelay
    }

    /// One value from a device: the value record, sensors announced once, the state object.
    private func value(_ id: String, uuid: BluetoothUUID, profile: String, bytes: [UInt8], packet: Result<DecodedPacket, DecodingError>) {
        guard let device = devices[id] else { return }
        var value: [String: GatewayJSON] = ["hex": .string(Self.hex(bytes)), "profile": .string(profile)]
        var decoded: GatewayJSON?
        var derived: GatewayJSON?
        switch packet {
        case let .success(packet):
            decoded = GatewayJSON.encoding(packet.value)
            derived = packet.derived.flatMap { GatewayJSON.encoding($0) }
            value["summary"] = .string(packet.summary)
            if let decoded { value["decoded"] = decoded }
            if let derived { value["derived"] = derived }
        case let .failure(error):
            value["decodeError"] = .string("\(error)")
        }
        let record: GatewayJSON = [
            "type": "notification", "device": device.json, "gateway": .string(configuration.id),
            "characteristic": characteristicJSON(uuid), "time": time(), "value": .object(value),
        ]
        publish(MQTTMessage(topic: topics.value(id, metric: profile), text: record.text, qos: .atLeastOnce))
        var changed = false
        for sensor in GatewaySensor.sensors(forProfile: profile) {
            guard let reading = sensor.read(decoded, derived), reading.isFinite else { continue }
            devices[id]?.values[sensor.key] = .number(reading)
            changed = true
            if !(devices[id]?.announced.contains(sensor.key) ?? true) {
                devices[id]?.announced.insert(sensor.key)
                let config = sensor.discoveryPayload(device: id, address: device.address, name: device.name, model: device.model, topics: topics)
                publish(MQTTMessage(topic: topics.discovery(id, sensor: sensor.key), text: config.text, qos: .atLeastOnce, retain: true))
            }
        }
        if changed { stateChanged(id) }
    }

    /// Clears our retained claim of `id` (an empty retained message deletes it).
    private func releaseClaim(_ id: String) {
        guard claims[id] == configuration.id else { return }
        claims[id] = nil
        publish(MQTTMessage(topic: topics.claim(id), payload: [], qos: .atLeastOnce, retain: true))
    }

    /// A value of `id` changed: its state object now, or at the end of the throttle's interval
    /// (one waiting publication carries every change made meanwhile).
    private func stateChanged(_ id: String) {
        guard let throttle = devices[id]?.stateThrottle else { return }
        var updated = throttle
        switch updated.changed(at: clock.elapsed) {
        case .publishNow:
            devices[id]?.stateThrottle = updated
            publishState(id)
        case let .publishAt(when):
            devices[id]?.stateThrottle = updated
            devices[id]?.stateFlush = Task { [self] in
                try? await self.clock.sleep(untilElapsed: when)
                self.flushState(id)
            }
        case .waiting:
            break
        }
    }

    /// Publishes the state object of `id` if one is waiting (the throttle's interval is over, or
    /// the device is leaving: its last state is never lost).
    private func flushState(_ id: String) {
        guard var throttle = devices[id]?.stateThrottle, throttle.isWaiting else { return }
        throttle.published(at: clock.elapsed)
        devices[id]?.stateThrottle = throttle
        devices[id]?.stateFlush?.cancel()
        devices[id]?.stateFlush = nil
        publishState(id)
    }

    private func publishState(_ id: String) {
        guard let device = devices[id] else { return }
        let state: GatewayJSON = [
            "type": "state", "device": device.json, "gateway": .string(configuration.id),
            "time": time(), "values": .object(device.values),
        ]
        publish(MQTTMessage(topic: topics.state(id), text: state.text, qos: .atLeastOnce, retain: true))
    }

    private func republishRetained() {
        publish(MQTTMessage(topic: topics.availability, text: "online", qos: .atLeastOnce, retain: true))
        let dropped = mqtt.droppedCount
        if dropped > 0 {
            let record: GatewayJSON = ["type": "dropped", "gateway": .string(configuration.id), "count": .integer(Int64(dropped)), "time": time()]
            publish(MQTTMessage(topic: topics.dropped, text: record.text, qos: .atLeastOnce, retain: true))
        }
        for (id, device) in devices where device.connection != nil {
            publish(MQTTMessage(topic: topics.deviceAvailability(id), text: "online", qos: .atLeastOnce, retain: true))
            devices[id]?.announced = []
            if claims[id] == configuration.id {
                let claim: GatewayJSON = [
                    "type": "claim", "gateway": .string(configuration.id), "device": deviceJSON(device.address, name: device.name),
                    "time": time(),
                ]
                publish(MQTTMessage(topic: topics.claim(id), text: claim.text, qos: .atLeastOnce, retain: true))
            }
        }
    }

    // MARK: commands

    private func received(_ message: MQTTMessage) {
        if let (gateway, device) = topics.presenceSource(in: message.topic) {
            if gateway != configuration.id, case let .integer(rssi)? = GatewayJSON.parse(message.text)?["rssiDbm"] {
                heardBy[device, default: [:]][gateway] = (Int(rssi), clock.elapsed)
            }
            return
        }
        if let gateway = topics.availabilitySource(in: message.topic) {
            if message.text == "offline" { offlineGateways.insert(gateway) } else { offlineGateways.remove(gateway) }
            return
        }
        if let device = topics.claimSource(in: message.topic) {
            guard case let .string(gateway)? = GatewayJSON.parse(message.text)?["gateway"] else {
                claims[device] = nil
                return
            }
            claims[device] = gateway
            contest(device, claimedBy: gateway)
            return
        }
        guard let (id, what) = topics.command(in: message.topic) else { return }
        let command: GatewayCommand
        do {
            command = try GatewayCommand.parse(what, payload: message.text)
        } catch {
            reply(id, command: what, error: error.description)
            return
        }
        guard let device = devices[id], let connection = device.connection else {
            reply(id, command: what, error: "no device \(id) is connected to gateway \(configuration.id)")
            return
        }
        Task { [self] in
            do {
                let outcome = try await self.execute(command, on: connection, device: id, address: device.address, name: device.name)
                self.reply(id, command: command.name, done: outcome)
            } catch {
                self.reply(id, command: command.name, error: "\(error)")
            }
        }
    }

    private func execute(_ command: GatewayCommand, on connection: Connection, device id: String, address: BluetoothAddress, name: String?) async throws -> String {
        switch command {
        case let .write(uuid, bytes):
            try await connection.write(bytes, to: uuid)
            return "wrote \(bytes.count) bytes to \(uuid.shortString)"
        case let .read(uuid):
            let bytes = try await connection.read(uuid)
            let packet = Self.decodeOnce(bytes, uuid: uuid, at: seconds())
            value(id, uuid: uuid, profile: ProfileCatalog.forCharacteristic(uuid)?.name ?? uuid.shortString.lowercased(), bytes: bytes, packet: packet)
            return "read \(bytes.count) bytes from \(uuid.shortString)"
        case let .targetPower(watts):
            try await trainer(id, connection: connection, address: address, name: name).setTargetPower(watts: watts)
            return "target power \(watts) W"
        case let .grade(percent):
            try await trainer(id, connection: connection, address: address, name: name).setSimulation(SimulationParameters(gradePercent: percent))
            return "grade \(percent) %"
        case .find:
            guard let ring = devices[id]?.ring else { throw GatewayError("\(id) is not a COLMI ring (or its session is not open yet)") }
            try await ring.findDevice()
            return "the ring vibrates"
        case let .uart(text):
            let services = try await connection.services().map(\.service.uuid)
            let target: BluetoothUUID
            if services.contains(SerialUUID.nordicUARTService) { target = SerialUUID.nordicUARTRX }
            else if services.contains(SerialUUID.hm10Service) { target = SerialUUID.hm10Data }
            else { throw GatewayError("\(id) has no Nordic UART or HM-10 service") }
            try await connection.send(Array((text.hasSuffix("\n") ? text : text + "\n").utf8), to: target)
            return "sent \(text.utf8.count) bytes"
        }
    }

    private func trainer(_ id: String, connection: Connection, address: BluetoothAddress, name: String?) async throws -> any TrainerControl {
        if let trainer = devices[id]?.trainer { return trainer }
        let services = try await connection.services().map(\.service.uuid)
        let control: any TrainerControl
        if services.contains(.fitnessMachine) {
            let ftms = FTMSTrainerControl(
                connection: connection, device: RideDevice(role: .ftmsTrainer, address: address.description, name: name),
                timeout: configuration.trainerConfirmTimeout)
            try await ftms.start()
            control = ftms
        } else if services.contains(.tacxFECService) {
            control = FECTrainerControl(
                connection: connection, device: RideDevice(role: .fecTrainer, address: address.description, name: name),
                timeout: configuration.trainerConfirmTimeout)
        } else {
            throw GatewayError("\(id) is not a trainer (no Fitness Machine or Tacx FE-C service)")
        }
        devices[id]?.trainer = control
        return control
    }

    private func reply(_ id: String, command: String, done: String? = nil, error: String? = nil) {
        var record: [String: GatewayJSON] = [
            "type": "result", "command": .string(command), "gateway": .string(configuration.id), "time": time(),
            "ok": .bool(error == nil),
        ]
        if let device = devices[id] { record["device"] = deviceJSON(device.address, name: device.name) }
        else { record["device"] = ["id": .string(id)] }
        record["message"] = .string(error ?? done ?? "done")
        log(.command(device: id, command: command, outcome: error ?? done ?? "done"))
        publish(MQTTMessage(topic: topics.result(id), text: GatewayJSON.object(record).text, qos: .atLeastOnce))
    }

    // MARK: shutdown

    private func shutDown() async {
        stopping = true
        let serving = devices
        for (_, device) in serving {
            device.task?.cancel()
            await device.connection?.disconnect()
        }
        for (id, device) in serving where device.connection != nil {
            flushState(id)
            publish(MQTTMessage(topic: topics.deviceAvailability(id), text: "offline", qos: .atLeastOnce, retain: true))
            releaseClaim(id)
        }
        devices = [:]
        publish(MQTTMessage(topic: topics.availability, text: "offline", qos: .atLeastOnce, retain: true))
    }

    // MARK: helpers

    /// One value decoded by its characteristic's profile (a fresh decoder).
    private nonisolated static func decodeOnce(_ bytes: [UInt8], uuid: BluetoothUUID, at time: Double) -> Result<DecodedPacket, DecodingError> {
        guard let profile = ProfileCatalog.forCharacteristic(uuid) else {
            return .failure(.invalid("value", expected: "a characteristic a profile decodes", found: uuid.shortString))
        }
        var decoder = profile.makeDecoder(ProfileOptions())
        return Result { () throws(DecodingError) -> DecodedPacket in try decoder.decode(bytes, at: time) }
    }

    private func publish(_ message: MQTTMessage) {
        do {
            try mqtt.publish(message)
            published += 1
        } catch {}  // QoS 0 while the broker is away: dropped by design; QoS 1 waits in the outbox
    }

    /// Seconds on the gateway's clock since the gateway was made (the `monotonic` stamp).
    private nonisolated func seconds() -> Double {
        clock.elapsed.inSeconds
    }

    /// A record's `time`: `monotonic` on the gateway's clock; `utc` is the calendar time of the
    /// system clock (the clocks in use count from an origin, not a calendar date).
    private nonisolated func time() -> GatewayJSON {
        ["utc": .string(Self.utc(Date())), "monotonic": .number(seconds())]
    }

    /// `2026-11-28T01:57:26.123Z`: ISO 8601 in UTC with milliseconds (written by hand: a
    /// `Date.ISO8601FormatStyle` per message was a noticeable part of the gateway's time).
    nonisolated static func utc(_ date: Date) -> String {
        let since1970 = date.timeIntervalSince1970
        let whole = since1970.rounded(.down)
        var seconds = time_t(whole)
        var parts = tm()
        _ = gmtime_r(&seconds, &parts)
        let milliseconds = min(999, Int((since1970 - whole) * 1000))
        func digits(_ value: Int, _ count: Int) -> String {
            let text = String(value)
            return text.utf8.count >= count ? text : String(repeating: "0", count: count - text.utf8.count) + text
        }
        return digits(Int(parts.tm_year) + 1900, 4) + "-" + digits(Int(parts.tm_mon) + 1, 2) + "-" + digits(Int(parts.tm_mday), 2)
            + "T" + digits(Int(parts.tm_hour), 2) + ":" + digits(Int(parts.tm_min), 2) + ":" + digits(Int(parts.tm_sec), 2)
            + "." + digits(milliseconds, 3) + "Z"
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Lower-case hex of `bytes`, two digits each.
    nonisolated static func hex(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private nonisolated func deviceJSON(_ address: BluetoothAddress, name: String?) -> GatewayJSON {
        var object: [String: GatewayJSON] = [
            "address": .string(address.description), "addressType": .string(address.type == .random ? "random" : "public"),
        ]
        if let name { object["name"] = .string(name) }
        return .object(object)
    }

    private nonisolated func characteristicJSON(_ uuid: BluetoothUUID) -> GatewayJSON {
        var object: [String: GatewayJSON] = ["uuid": .string(uuid.shortString)]
        if let name = uuid.name { object["name"] = .string(name) }
        return .object(object)
    }
}
