import Bluetide
import BluetideSupport
import Foundation
import Logging

/// A session with one COLMI ring over one ``Connection``.
///
/// Commands run one at a time, in call order. Each writes one request and waits for its reply,
/// matched by opcode (multi-packet replies and big-data frames are assembled); a reply that does
/// not come within ``Options/replyTimeout``, or comes corrupt (bad checksum, bad CRC, packets out
/// of order), is asked for again up to ``Options/retries`` times, then the command throws
/// ``RingError/noValidReply(command:attempts:lastProblem:)``. Packets the ring sends by itself
/// (battery pushes, real-time readings, activity totals) go to ``events``, and battery pushes and
/// readings also to their own streams, ``batteryUpdates`` and ``readings``.
///
/// ``open(_:options:)`` subscribes to both notify characteristics and sets the ring's clock (as
/// the official app does on every connect). ``close()`` stops any real-time measurement it
/// started, then disconnects.
public actor Ring {
    /// Debug logs of the protocol steps (open, each request, retries, close): `bluetide.ring`.
    static let logger = Logger(label: "bluetide.ring")

    /// How patient the session is.
    public struct Options: Sendable {
        /// How long to wait for a complete reply before asking again.
        public var replyTimeout: Duration = .seconds(3)
        /// How many times a command is asked again after a timeout or a corrupt reply.
        public var retries = 2
        /// Pause before a retry, so the rest of a corrupt multi-packet reply drains.
        public var retryPause: Duration = .milliseconds(300)
        /// The calendar the ring's clock is set in (local time by default).
        public var calendar = RingCalendar()
        /// Whether ``open(_:options:)`` sets the ring's clock.
        public var setsTimeOnOpen = true
        /// Whether ``open(_:options:)`` asks a model known to want a bond (the R09) for its
        /// device-support flags (`3C`) and, when flag 0x08 is set, secures the link with
        /// ``Connection/pair(force:)`` (the host's pairing policy, prompts and bond file).
        public var bondsWhenAsked = true
        /// The time the ring's clock is set to (the system clock; a fixed time replays a capture).
        public var clock: @Sendable () -> Date = { Date() }
        /// The clock the session's own waits run on: reply time limits, retry pauses and the
        /// arrival times of raw samples. nil (the default) takes the connection's
        /// (``Connection/clock``, the host's ``Bluetooth/Configuration/clock``), so a host on a
        /// virtual clock runs its ring sessions in virtual time too.
        public var waitClock: BluetideClock?
        public init() {}
    }

    /// The connection the session runs on.
    public nonisolated let connection: Connection
    /// Options in force.
    public nonisolated let options: Options
    /// The clock the session waits on: ``Options/waitClock``, else the connection's.
    public nonisolated let waitClock: BluetideClock
    /// Every unsolicited packet, newest kept when nobody reads (up to 256).
    public nonisolated let events: AsyncStream<RingEvent>
    /// Battery pushes (`73 0C`) alone.
    public nonisolated let batteryUpdates: AsyncStream<COLMIBattery>
    /// Real-time readings (`69`) alone, including the "measuring" (value 0) and error ones.
    public nonisolated let readings: AsyncStream<COLMIRealTimeReading>
    /// Raw sensor samples (`A1`) after ``startRawStream(mode:)``, oldest kept when nobody reads
    /// (up to 16384; the rest is counted in ``rawDropped``).
    public nonisolated let rawSamples: AsyncStream<RingRawSample>
    private let rawSink: AsyncStream<RingRawSample>.Continuation
    private let eventSink: AsyncStream<RingEvent>.Continuation
    private let batterySink: AsyncStream<COLMIBattery>.Continuation
    private let readingSink: AsyncStream<COLMIRealTimeReading>.Continuation

    /// The capability map the ring sent after the last set time.
    public private(set) var capabilities: COLMICapabilities?
    /// Corrupt packets received (bad checksum or CRC), for diagnostics.
    public private(set) var corruptPackets = 0
    /// The ring's name (GAP Device Name, as it advertises), read on open; nil when unreadable.
    public private(set) var deviceName: String?
    /// The family member the name says this is (docs/ring.md "The family"); nil for an unknown name.
    public var model: COLMIRingModelInfo? { deviceName.flatMap(COLMIRingModelInfo.matching(name:)) }
    /// `COLMI R10` or, for an unknown model, `this ring`: how error messages name the ring.
    public var modelLabel: String { model.map { "the \($0.displayName)" } ?? "this ring" }
    /// Display settings this session wrote (the protocol has no command to read them).
    public private(set) var lastDisplay: COLMIDisplaySettings?

    func rememberDisplay(_ display: COLMIDisplaySettings) { lastDisplay = display }

    /// Raw packets discarded by the session since the raw stream started: corrupt ones and
    /// those not taken from a full ``rawSamples`` buffer.
    public private(set) var rawDropped = 0
    /// When the raw stream started (on ``waitClock``); nil while none runs.
    private var rawStart: BluetideClock.Instant?
    /// Whether this session started the continuous heart-rate stream (`1E`).
    private var continuousHeartRate = false

    private struct Pending {
        let id: Int
        var collector: RingReplyCollector
        let sink: AsyncThrowingStream<RingReply, any Error>.Continuation
    }
    private var pending: Pending?
    private var nextID = 0
    private let commands = AsyncLock()
    private var readers: [Task<Void, Never>] = []
    private var linkProblem: String?
    private var measuring: Set<UInt8> = []

    private init(connection: Connection, options: Options) {
        self.connection = connection
        self.options = options
        waitClock = options.waitClock ?? connection.clock
        (events, eventSink) = AsyncStream<RingEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
        (batteryUpdates, batterySink) = AsyncStream<COLMIBattery>.makeStream(bufferingPolicy: .bufferingNewest(16))
        (readings, readingSink) = AsyncStream<COLMIRealTimeReading>.makeStream(bufferingPolicy: .bufferingNewest(256))
        (rawSamples, rawSink) = AsyncStream<RingRawSample>.makeStream(bufferingPolicy: .bufferingOldest(16384))
    }

    /// Starts a session on `connection`: checks for the COLMI service, subscribes, sets the clock.
    public static func open(_ connection: Connection, options: Options = Options()) async throws -> Ring {
        let services: [GATTRemoteService]
        do { services = try await connection.services() } catch { throw RingError.linkLost("\(error)") }
        guard services.contains(where: { $0.service.uuid == COLMIUUID.service }) else {
            throw RingError.notARing("\(connection.address) has no service \(COLMIUUID.service)")
        }
        let ring = Ring(connection: connection, options: options)
        let bigData = services.contains { $0.service.uuid == COLMIUUID.bigDataService }
        logger.debug("ring \(connection.address): subscribing to notifications\(bigData ? " and big data" : "")")
        try await ring.subscribe(bigData: services.contains { $0.service.uuid == COLMIUUID.bigDataService })
        if let name = try? await connection.read(.deviceName) {
            await ring.setDeviceName(String(decoding: name, as: UTF8.self).trimmingCharacters(in: .controlCharacters))
        }
        if options.setsTimeOnOpen { _ = try await ring.setTime() }
        if options.bondsWhenAsked { try await ring.bondIfAsked() }
        return ring
    }

    private func setDeviceName(_ name: String) { deviceName = name.isEmpty ? nil : name }

    /// True when the ring asked for a bond (`3C` flag 0x08) in ``open(_:options:)``.
    public private(set) var bondRequested = false

    /// Asks a model known to want a bond for its `3C` flags (other models are not asked: an R02
    /// may never answer); pairs when flag 0x08 is set and the link is not encrypted yet.
    private func bondIfAsked() async throws {
        guard model?.mayAskForBond == true, let flags = try? await deviceSupportFlags(), flags & 0x08 != 0 else { return }
        bondRequested = true
        guard await connection.securityLevel == .none else { return }
        Self.logger.debug("ring \(connection.address): it asks for a bond (3C flag 0x08); pairing")
        do { _ = try await connection.pair() } catch {
            throw RingError.bondFailed("\(error)")
        }
    }

    private func subscribe(bigData: Bool) async throws {
        let v1: AsyncThrowingStream<[UInt8], any Error>
        do { v1 = try await connection.notifications(of: COLMIUUID.notify) } catch { throw RingError.linkLost("\(error)") }
        readers.append(Task { [weak self] in
            do {
                for try await bytes in v1 { await self?.received(v1: bytes) }
                await self?.ended("notifications stopped")
            } catch {
                await self?.ended("\(error)")
            }
        })
        guard bigData else { return }
        let v2: AsyncThrowingStream<[UInt8], any Error>
        do { v2 = try await connection.notifications(of: COLMIUUID.bigDataNotify) } catch { throw RingError.linkLost("\(error)") }
        readers.append(Task { [weak self] in
            do { for try await bytes in v2 { await self?.received(v2: bytes) } } catch {}
        })
    }

    // MARK: Commands

    /// Sets the ring's clock to `date` (default: ``Options/clock``) in ``Options/calendar``;
    /// returns the capability map.
    @discardableResult
    public func setTime(_ date: Date? = nil) async throws -> COLMICapabilities {
        let date = date ?? options.clock()
        let offset = options.calendar.timeZone.secondsFromGMT(for: date)
        let request = try COLMISetTime(secondsSince1970: Int64(date.timeIntervalSince1970), utcOffsetSeconds: offset)
        let packet = try await single(.setTime(request), "set time")
        let map = try COLMICapabilities(bytes: packet.payload)
        capabilities = map
        return map
    }

    /// Battery level and charging state.
    public func battery() async throws -> COLMIBattery {
        try COLMIBattery(bytes: try await single(.battery, "battery").payload)
    }

    /// Firmware and hardware revisions (GATT Device Information).
    public func deviceInformation() async throws -> RingDeviceInformation {
        func text(_ uuid: BluetoothUUID) async -> String? {
            guard let bytes = try? await connection.read(uuid) else { return nil }
            return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .controlCharacters)
        }
        return RingDeviceInformation(firmware: await text(.firmwareRevision), hardware: await text(.hardwareRevision))
    }

    /// The heart-rate log of ring day `day` (see ``RingCalendar``); nil when the ring has none.
    public func heartRateLog(day: Int) async throws -> COLMIHeartRateLog? {
        let start = UInt32(clamping: Int64(day) * 86_400)
        guard case let .heartRateLog(log) = try await exchange(COLMIRequest.heartRateLog(dayStart: start).packet.bytes, .heartRateLog, "heart-rate log")
        else { return nil }
        return log
    }

    /// Steps per quarter hour `daysAgo` days before the ring's today; nil when none.
    public func steps(daysAgo: Int) async throws -> COLMISportDetail? {
        let request = COLMIRequest.sportDetail(dayOffset: UInt8(clamping: daysAgo))
        guard case let .sportDetail(day) = try await exchange(request.packet.bytes, .sportDetail, "steps") else { return nil }
        return day
    }

    /// Stress index per half hour, `daysAgo` days back; nil when none.
    public func stress(daysAgo: Int) async throws -> COLMIHalfHourHistory? {
        let request = COLMIRequest.stressHistory(dayIndex: UInt8(clamping: daysAgo))
        guard case let .halfHourHistory(h) = try await exchange(request.packet.bytes, .halfHourHistory(opcode: COLMIOpcode.stressHistory), "stress history")
        else { return nil }
        return h
    }

    /// HRV per half hour in ms, `daysAgo` days back; nil when none.
    public func hrv(daysAgo: Int) async throws -> COLMIHalfHourHistory? {
        let request = COLMIRequest.hrvHistory(daysAgo: UInt32(clamping: daysAgo))
        guard case let .halfHourHistory(h) = try await exchange(request.packet.bytes, .halfHourHistory(opcode: COLMIOpcode.hrvHistory), "HRV history")
        else { return nil }
        return h
    }

    /// Every night the ring holds (V2 big data `27`).
    public func sleep() async throws -> COLMISleepHistory {
        // The R10 answers only the 2-byte request (`ff 01`); the others the 1-byte one.
        let request = COLMIBigDataFrame.sleepRequest(model?.sleepRequest ?? .all)
        guard case let .sleep(history) = try await bigData(request, "sleep history") else {
            return COLMISleepHistory(days: [])
        }
        return history
    }

    /// Hourly SpO2 of every day the ring holds (V2 big data `2A`).
    public func spo2History() async throws -> COLMISpO2History {
        guard case let .spo2(history) = try await bigData(COLMIBigDataFrame.spo2Request, "SpO2 history") else {
            return COLMISpO2History(days: [])
        }
        return history
    }

    /// Skin temperature per half hour of every day held (V2 big data `25`; not every ring has it).
    public func temperatureHistory() async throws -> COLMITemperatureHistory {
        guard case let .temperature(history) = try await bigData(COLMIBigDataFrame.temperatureRequest, "temperature history") else {
            return COLMITemperatureHistory(days: [])
        }
        return history
    }

    /// Whether the ring logs heart rate by itself, and how often.
    public func heartRateLogSettings() async throws -> COLMIHeartRateLogSettings {
        try COLMIHeartRateLogSettings(bytes: try await single(.readHeartRateLogSettings, "read HR-log settings").payload)
    }

    /// Turns heart-rate logging on or off, every `intervalMinutes` (5...60, multiples of 5).
    @discardableResult
    public func setHeartRateLog(enabled: Bool, intervalMinutes: Int) async throws -> COLMIHeartRateLogSettings {
        let write = COLMIHeartRateLogSettingsWrite(enabled: enabled, intervalMinutes: UInt8(clamping: intervalMinutes))
        _ = try await single(.writeHeartRateLogSettings(write), "write HR-log settings")
        return try await heartRateLogSettings()
    }

    /// Flashes the ring's LED for about 10 s.
    public func findDevice() async throws { try await send(COLMIRequest.findDevice.packet.bytes, "find device") }

    /// Powers the ring off (reboots on some firmware). The link drops.
    public func powerOff() async throws { try await send(COLMIRequest.powerOff.packet.bytes, "power off") }

    /// Erases the ring's settings and history. The link may drop.
    public func factoryReset() async throws { try await send(COLMIRequest.factoryReset.packet.bytes, "factory reset") }

    /// Starts a real-time measurement; readings arrive on ``events`` as ``RingEvent/reading(_:)``
    /// about once a second (value 0 while measuring). Keep it going with ``continueMeasurement(_:)``
    /// at least every 30 s; ``close()`` stops it.
    public func startMeasurement(_ type: COLMIRealTimeType) async throws {
        measuring.insert(type.rawValue)
        try await send(COLMIRequest.realTimeStart(type, .start).packet.bytes, "start \(type)")
    }

    /// Keeps a real-time measurement going (the ring stops one after about a minute otherwise).
    public func continueMeasurement(_ type: COLMIRealTimeType) async throws {
        try await send(COLMIRequest.realTimeStart(type, .continue).packet.bytes, "continue \(type)")
    }

    /// Stops a real-time measurement.
    public func stopMeasurement(_ type: COLMIRealTimeType) async throws {
        measuring.remove(type.rawValue)
        try await send(COLMIRequest.realTimeStop(type).packet.bytes, "stop \(type)")
    }

    /// Starts the raw sensor stream (`A1 04 <mode>`: mode 0 as colmi_r02_client's firehose
    /// branch sends it, 4 as atc1441's tool does); samples arrive on ``rawSamples`` with their
    /// arrival time. ``close()`` stops it.
    public func startRawStream(mode: UInt8 = 0) async throws {
        rawStart = waitClock.now
        rawDropped = 0
        try await send(COLMIRequest.rawSensorStart(mode: mode).packet.bytes, "start raw stream")
    }

    /// Stops the raw sensor stream (`A1 02`).
    public func stopRawStream() async throws {
        rawStart = nil
        try await send(COLMIRequest.rawSensorStop.packet.bytes, "stop raw stream")
    }

    /// Starts the continuous heart-rate stream (`1E 01`): about one `1E <bpm>` a second on
    /// ``events`` as ``RingEvent/continuousHeartRate(_:)``. Keep it going with
    /// ``continueContinuousHeartRate()`` (the ring stops after about a minute); ``close()`` stops it.
    public func startContinuousHeartRate() async throws {
        continuousHeartRate = true
        try await send(COLMIRequest.continuousHeartRate(action: 1).packet.bytes, "start continuous HR")
    }

    /// Keeps the continuous heart-rate stream going (`1E 03`; Gadgetbridge sends it every 30 readings).
    public func continueContinuousHeartRate() async throws {
        try await send(COLMIRequest.continuousHeartRate(action: 3).packet.bytes, "continue continuous HR")
    }

    /// Stops the continuous heart-rate stream (`1E 02`).
    public func stopContinuousHeartRate() async throws {
        continuousHeartRate = false
        try await send(COLMIRequest.continuousHeartRate(action: 2).packet.bytes, "stop continuous HR")
    }

    /// Stops every measurement and stream this session started, ends the event streams and disconnects.
    public func close() async {
        Self.logger.debug("ring \(connection.address): closing (stopping \(measuring.count) measurement(s))")
        for type in measuring.sorted() { try? await stopMeasurement(COLMIRealTimeType(rawValue: type)) }
        if rawStart != nil { try? await stopRawStream() }
        if continuousHeartRate { try? await stopContinuousHeartRate() }
        for task in readers { task.cancel() }
        readers.removeAll()
        finishStreams()
        await connection.disconnect()
    }

    // MARK: Exchange

    private func single(_ request: COLMIRequest, _ name: String) async throws -> COLMIPacket {
        guard case let .packet(packet) = try await exchange(request.packet.bytes, .packet(opcode: request.packet.opcode), name) else {
            throw RingError.unexpectedReply(command: name, detail: "not a single packet")
        }
        return packet
    }

    private func bigData(_ frame: COLMIBigDataFrame, _ name: String) async throws -> COLMIBigDataPayload {
        guard case let .bigData(reply) = try await exchange(frame.bytes, .bigData(id: frame.dataID), name, bigData: true) else {
            throw RingError.unexpectedReply(command: name, detail: "not a big-data frame")
        }
        do { return try COLMIBigDataPayload(frame: reply) } catch {
            throw RingError.unexpectedReply(command: name, detail: "\(error)")
        }
    }

    /// Runs `body` after every earlier command has finished (commands never overlap).
    private func serialized<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await commands.run(body)
    }

    /// Writes a request that has no reply.
    func send(_ bytes: [UInt8], _ name: String) async throws {
        try await serialized { try await self.write(bytes, bigData: false, name) }
    }

    private func write(_ bytes: [UInt8], bigData: Bool, _ name: String) async throws {
        if let linkProblem { throw RingError.linkLost(linkProblem) }
        Self.logger.debug("ring \(name): request \(bytes.map { String(format: "%02x", $0) }.joined())\(bigData ? " (big data)" : "")")
        do {
            try await connection.write(bytes, to: bigData ? COLMIUUID.bigDataWrite : COLMIUUID.write, withResponse: true)
        } catch {
            throw RingError.linkLost("\(name): \(error)")
        }
    }

    /// Writes `bytes` and waits for the reply `kind`, retrying on timeouts and corrupt replies.
    public func exchange(_ bytes: [UInt8], _ kind: RingReplyKind, _ name: String, bigData: Bool = false) async throws -> RingReply {
        try await serialized {
            var problem = "no reply"
            let attempts = self.options.retries + 1
            for attempt in 1...attempts {
                do {
                    return try await self.attempt(bytes, kind, name, bigData: bigData)
                } catch let failure as AttemptFailure {
                    problem = failure.problem
                    Self.logger.debug("ring \(name): attempt \(attempt) of \(attempts) failed: \(problem)")
                    if attempt < attempts { try await self.waitClock.sleep(for: self.options.retryPause) }
                }
            }
            throw RingError.noValidReply(command: name, attempts: attempts, lastProblem: problem)
        }
    }

    private struct AttemptFailure: Error { let problem: String }

    private func attempt(_ bytes: [UInt8], _ kind: RingReplyKind, _ name: String, bigData: Bool) async throws -> RingReply {
        if let linkProblem { throw RingError.linkLost(linkProblem) }
        nextID += 1
        let id = nextID
        let (stream, sink) = AsyncThrowingStream<RingReply, any Error>.makeStream()
        pending = Pending(id: id, collector: RingReplyCollector(kind), sink: sink)
        let timeout = options.replyTimeout
        let clock = waitClock
        let timer = Task { [weak self] in
            try? await clock.sleep(for: timeout)
            await self?.fail(id, AttemptFailure(problem: "no complete reply within \(timeout)"))
        }
        defer {
            timer.cancel()
            if pending?.id == id { pending = nil }
        }
        try await write(bytes, bigData: bigData, name)
        return try await withTaskCancellationHandler {
            for try await reply in stream { return reply }
            throw CancellationError()
        } onCancel: {
            sink.finish(throwing: CancellationError())
        }
    }

    private func fail(_ id: Int, _ error: any Error) {
        guard let p = pending, p.id == id else { return }
        pending = nil
        p.sink.finish(throwing: error)
    }

    private func ended(_ problem: String) {
        linkProblem = problem
        if let p = pending {
            pending = nil
            p.sink.finish(throwing: RingError.linkLost(problem))
        }
        finishStreams()
    }

    private func finishStreams() {
        eventSink.finish()
        batterySink.finish()
        readingSink.finish()
        rawSink.finish()
    }

    // MARK: Incoming

    private func received(v1 bytes: [UInt8]) {
        guard bytes.count == COLMIPacket.size else { return }
        let packet: COLMIPacket
        do { packet = try COLMIPacket(bytes: bytes) } catch {
            corruptPackets += 1
            if bytes[0] == COLMIOpcode.rawSensor, rawStart != nil { rawDropped += 1 }
            if let p = pending, p.collector.kind.opcode == bytes[0] {
                fail(p.id, AttemptFailure(problem: "corrupt packet \(bytes.spacedHex): \(error)"))
            }
            return
        }
        if var p = pending {
            switch p.collector.feed(packet) {
            case .notMine: break
            case .waiting:
                pending = p
                return
            case let .done(reply):
                pending = nil
                p.sink.yield(reply)
                p.sink.finish()
                return
            case let .failed(problem):
                fail(p.id, AttemptFailure(problem: problem))
                return
            }
        }
        unsolicited(packet)
    }

    private func received(v2 bytes: [UInt8]) {
        guard var p = pending else { return }
        switch p.collector.feed(bigDataChunk: bytes) {
        case .notMine: return
        case .waiting: pending = p
        case let .done(reply):
            pending = nil
            p.sink.yield(reply)
            p.sink.finish()
        case let .failed(problem):
            corruptPackets += 1
            fail(p.id, AttemptFailure(problem: problem))
        }
    }

    private func unsolicited(_ packet: COLMIPacket) {
        guard let response = try? COLMIResponse(packet: packet) else { return }
        switch response {
        case let .realTimeReading(r):
            eventSink.yield(.reading(r))
            readingSink.yield(r)
        case let .continuousHeartRate(bpm): eventSink.yield(.continuousHeartRate(bpm))
        case let .rawSensor(sample):
            guard let rawStart else { return }
            let seconds = waitClock.now.seconds(since: rawStart)
            if case .dropped = rawSink.yield(RingRawSample(seconds: seconds, sample: sample, packet: packet.bytes)) { rawDropped += 1 }
        case let .deviceNotification(n):
            switch n {
            case let .battery(b):
                eventSink.yield(.battery(b))
                batterySink.yield(b)
            case let .liveActivity(a): eventSink.yield(.activity(a))
            case let .event(subtype, _): eventSink.yield(.notice(subtype: subtype))
            }
        default: break
        }
    }
}
