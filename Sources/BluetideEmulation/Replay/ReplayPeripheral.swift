import Bluetide
import BluetideBase
import BluetideDeviceModels
import BluetideRecording

/// Serves a value log as an emulated device: one GATT characteristic per recorded (service,
/// characteristic) pair whose values came from the device, notifying the recorded values at
/// their recorded pace (scaled by a ``ReplayPace``) on the clock of its host (in a world on a
/// manual clock: virtual time). Reads return the latest value played.
///
/// Characteristics recorded as notified or indicated get the notify (or indicate) property and a
/// CCCD; ones only ever read are read-only and change silently as the replay passes their reads.
/// Records written by the recorder (write, write without response) are not played. Records
/// without a service go into ``fallbackService``.
///
/// Playback starts, by default, when the first central subscribes, so nothing is lost to a
/// central that connects late; it runs once, then the device keeps serving the last values.
public actor ReplayPeripheral {
    /// When playback starts.
    public enum Start: Sendable, Hashable {
        /// As soon as ``start()`` has set the device up.
        case immediately
        /// When a central first subscribes to a characteristic.
        case onFirstSubscription
    }

    /// Service holding characteristics whose records name no service.
    public static let fallbackService = BluetoothUUID(high: 0xB1DE_0F00_0000_4000, low: 0x8000_0000_0000_B1DE)

    /// The host the device is served on.
    public nonisolated let bluetooth: Bluetooth
    /// The address the device advertises from.
    public nonisolated var address: BluetoothAddress { bluetooth.address }
    /// The GATT services served.
    public nonisolated let serviceDefinitions: [GATTServiceDefinition]
    /// The name advertised.
    public nonisolated let advertisedName: String
    /// The advertising data and scan response used.
    public nonisolated let advertising: AdvertisingPlan
    /// How many records will be played.
    public nonisolated let recordCount: Int
    /// Each record as it is played (before its value is sent); finishes when playback ends.
    public nonisolated let played: AsyncStream<ValueRecord>

    private let pace: ReplayPace
    private let startMode: Start
    private let source: Source
    /// Every served characteristic, in definition order.
    private let keys: [Key]
    private let playedSink: AsyncStream<ValueRecord>.Continuation
    private var tasks: [Task<Void, Never>] = []
    private var playback: Task<Void, Never>?
    private var served: [Key: ServedValue] = [:]
    /// Why a replay read from a file stopped before its end.
    public private(set) var failure: ValueLogError?

    struct Key: Hashable, Sendable {
        let service: BluetoothUUID
        let characteristic: BluetoothUUID
    }

    /// Where the played records come from.
    private enum Source: Sendable {
        /// Held in memory (already filtered).
        case records([ValueRecord])
        /// Read from a value log as they are played.
        case file(path: String, filter: ValueRecordFilter, strict: Bool, warn: @Sendable (ValueLogWarning) -> Void)
    }

    /// Which records are played: the device's values (of `device`, address or name, when given).
    public static func filter(device: String?) -> ValueRecordFilter {
        ValueRecordFilter(devices: device.map { [$0] }, operations: [.notify, .indicate, .read])
    }

    /// Prepares `log` for `bluetooth`'s peripheral role (one replay per host: it owns the host's
    /// services and advertising): only records of `device` (address or name) when given;
    /// `name` replaces the advertised name (default: the recorded device name).
    public init(
        bluetooth: Bluetooth, log: ValueLog, pace: ReplayPace = .original, device: String? = nil, name: String? = nil,
        start: Start = .onFirstSubscription
    ) {
        let kept = log.records.filter(Self.filter(device: device).matches)
        self.init(
            bluetooth: bluetooth, outline: ValueLogOutline(records: kept), source: .records(kept), pace: pace, name: name,
            start: start)
    }

    /// Prepares the value log at `path` like ``init(bluetooth:log:pace:device:name:start:)``, without
    /// holding it: the file is read once as a stream for what to serve (``ValueLogOutline``), and
    /// again as the values play, so memory stays one read chunk and one line whatever its length.
    /// Damaged lines go to `warn` naming the line as they are played; with `strict` the first one
    /// throws here (or stops playback, kept in ``failure``). Throws for a file that cannot be read,
    /// a bad header, or a file that is not a regular file (a pipe cannot be read twice).
    /// `outline`, when the caller has read it already (with the same `device`), saves a pass.
    public init(
        bluetooth: Bluetooth, logAt path: String, outline: ValueLogOutline? = nil, pace: ReplayPace = .original,
        device: String? = nil, name: String? = nil, start: Start = .onFirstSubscription, strict: Bool = false,
        warn: @escaping @Sendable (ValueLogWarning) -> Void = { _ in }
    ) throws(ValueLogError) {
        let filter = Self.filter(device: device)
        let read: ValueLogOutline
        if let outline { read = outline } else { read = try ValueLogOutline.read(path: path, filter: filter, strict: strict) }
        self.init(
            bluetooth: bluetooth, outline: read, source: .file(path: path, filter: filter, strict: strict, warn: warn),
            pace: pace, name: name, start: start)
    }

    private init(bluetooth: Bluetooth, outline: ValueLogOutline, source: Source, pace: ReplayPace, name: String?, start: Start) {
        self.bluetooth = bluetooth
        self.pace = pace
        self.startMode = start
        self.source = source
        recordCount = outline.recordCount
        (played, playedSink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)

        // Services and characteristics in order of first appearance.
        var order: [BluetoothUUID] = []
        var characteristics: [BluetoothUUID: [BluetoothUUID]] = [:]
        var operations: [Key: Set<ValueOperation>] = [:]
        for entry in outline.characteristics {
            let key = Key(service: entry.service ?? Self.fallbackService, characteristic: entry.characteristic)
            if characteristics[key.service] == nil { order.append(key.service) }
            if !(characteristics[key.service] ?? []).contains(key.characteristic) {
                characteristics[key.service, default: []].append(key.characteristic)
            }
            operations[key, default: []].formUnion(entry.operations)
        }
        var definitions: [GATTServiceDefinition] = []
        var keys: [Key] = []
        for service in order {
            var list: [GATTCharacteristicDefinition] = []
            for characteristic in characteristics[service] ?? [] {
                let key = Key(service: service, characteristic: characteristic)
                let ops = operations[key] ?? []
                var properties: GATTCharacteristicProperties = .read
                if ops.contains(.notify) { properties.insert(.notify) }
                if ops.contains(.indicate) { properties.insert(.indicate) }
                list.append(GATTCharacteristicDefinition(uuid: characteristic, properties: properties))
                keys.append(key)
            }
            definitions.append(GATTServiceDefinition(uuid: service, characteristics: list))
        }
        serviceDefinitions = definitions
        self.keys = keys

        advertisedName = name ?? outline.deviceName ?? "Bluetide Replay"
        advertising = AdvertisingPlan(
            hints: AdvertisingHints(localName: advertisedName, serviceUUIDs: order.filter { $0 != Self.fallbackService }))
    }

    /// Installs the services, advertises, and starts playback (now or on the first subscription).
    public func start() async throws {
        let peripheral = bluetooth.peripheral
        let subscriptions = peripheral.subscriptionChanges
        let values = await peripheral.add(definitions: serviceDefinitions).flatMap { $0 }
        // Returned in definition order, like `keys`.
        for (key, value) in zip(keys, values) { served[key] = value }
        try await peripheral.startAdvertising(
            advertising.advertisingData, scanResponse: advertising.scanResponse, interval: .milliseconds(100))
        tasks.append(Task { [weak self] in
            for await change in subscriptions where !change.configuration.isEmpty {
                await self?.beginPlayback()
            }
        })
        if startMode == .immediately { beginPlayback() }
    }

    /// Waits until every record has been played (returns at once if playback never started).
    public func waitUntilPlayed() async {
        await playback?.value
    }

    /// Stops playback and advertising; the host stays up (``close()`` closes it too).
    public func stop() async {
        playback?.cancel()
        for task in tasks { task.cancel() }
        tasks.removeAll()
        playedSink.finish()
        try? await bluetooth.peripheral.stopAdvertising()
    }

    /// Stops playback and closes the host.
    public func close() async {
        await stop()
        await bluetooth.close()
    }

    private func beginPlayback() {
        guard playback == nil else { return }
        let peripheral = bluetooth.peripheral
        let served = self.served
        let sink = playedSink
        let pace = pace
        // Paced on the host's clock: in a world on a manual clock the replay plays in virtual time.
        let clock = bluetooth.central.clock
        let send: @Sendable (ValueRecord) -> Void = { record in
            let key = Key(service: record.service ?? Self.fallbackService, characteristic: record.characteristic)
            guard let value = served[key] else { return }
            sink.yield(record)
            peripheral.updateValue(record.value, of: value)
        }
        switch source {
        case let .records(records):
            playback = Task {
                for await record in ValueReplay(records: records, pace: pace, clock: clock) { send(record) }
                sink.finish()
            }
        case let .file(path, filter, strict, warn):
            playback = Task { [weak self] in
                do throws(ValueLogError) {
                    var replay = StreamedValueReplay(
                        stream: try ValueLogStream(path: path, strict: strict, warn: warn), pace: pace, filter: filter, clock: clock)
                    while let record = try await replay.next() { send(record) }
                } catch {
                    await self?.failed(error)
                }
                sink.finish()
            }
        }
    }

    private func failed(_ error: ValueLogError) {
        failure = error
    }
}
