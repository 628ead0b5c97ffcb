import BluetideBase
import Foundation
import BluetideProfiles

/// `colmi-r02`: a COLMI R02 smart ring. V1 UART service (16-byte packets with additive checksum)
/// and V2 big-data service (`BC` frames with CRC-16/MODBUS), answering every documented command
/// with packets built by the COLMI codecs from ``COLMISyntheticData``, so the replies agree:
///
/// - `01` set time: the ring clock jumps to the given time (later timestamps follow it); reply
///   = capability map, then the unsolicited `2F F1` packet-size packet.
/// - `03` battery (draining; also pushed as `73 0C` on change), `04` phone name, `02` camera,
///   `0A` preferences (read/write persisted), `10` blink, `50` find device, `08` power off,
///   `FF` factory reset (settings back to defaults), `3C` device support, `21` goals.
/// - `15` HR log: 288 five-minute slots of the requested day, a value every logging interval
///   while logging is on, nothing after "now" today, `15 FF` for days without data (more than
///   a week back or in the future). `16` HR-log settings read/write (persisted).
/// - `2C`/`36`/`38`/`3A` auto SpO2/stress/HRV/temperature toggles (persisted); `37` stress and
///   `39` HRV half-hour histories (`FF` when the toggle is off).
/// - `43` steps/sport detail per quarter hour for day 0...6 back; `73 12` live totals of today
///   agree with it (plus the current quarter so far) and are pushed each minute of ring time they
///   changed, and every 5 minutes; `73 01` when a new HR-log value
///   is recorded.
/// - `69`/`6A` real-time HR, SpO2 (and the other types) at 1 Hz after start (value 0 "measuring"
///   for the first two), until stop, action 4, or 60 s without a continue; `1E` continuous HR
///   likewise; `A1` raw sensor stream: PPG and accelerometer at 4 Hz, SpO2 at 1 Hz, with a
///   pulse wave at the synthetic heart rate and gravity on a resting hand.
/// - V2: `BC 27` sleep, `BC 2A` SpO2, `BC 25` temperature, seven days each; OTA ids answer
///   status 2 (failure). Frames are cut into notifications of ``maximumNotificationLength``.
///
/// Unknown V1 opcodes are acknowledged by echoing the packet; packets with a bad checksum are
/// ignored like the ring does.
public struct COLMIRingModel: DeviceModel {
    /// Catalog name: `colmi-<id>` of ``info``.
    public let name: String
    /// Which family member this ring plays (name, screen, temperature sensor, quirks).
    public let info: COLMIRingModelInfo
    /// Capability map sent after set time.
    public let capabilities: COLMICapabilities
    /// A real ring takes one phone at a time.
    public var acceptsOneCentralAtATime: Bool { true }
    /// Days of history held, today included.
    public static let historyDays = 7
    private var random: SeededGenerator
    private let localName: String
    /// The synthetic person.
    public let data: COLMISyntheticData
    /// Notification size for V2 frames (ATT MTU − 3); set it after the MTU exchange.
    public var maximumNotificationLength = 20
    /// The battery.
    public private(set) var battery: BatteryDrain
    /// Ring clock at model time ``clockSetAt``, seconds since 1970 (ring time base).
    public private(set) var clockBase: Int64
    /// Model time at which ``clockBase`` was valid.
    public private(set) var clockSetAt: Double = 0
    /// HR-log settings.
    public private(set) var heartRateLogEnabled = true
    /// HR-log interval, minutes.
    public private(set) var heartRateLogIntervalMinutes: UInt8 = 30
    /// Auto-measurement toggles.
    public private(set) var autoMeasurements: [COLMIAutoMeasurementKind: Bool] = Self.defaultAutoMeasurements
    /// User preferences.
    public private(set) var preferences = COLMIUserPreferences(ageYears: 35, heightCentimeters: 175, weightKilograms: 72)
    /// Daily goals (`21`), changed by a goals write.
    public private(set) var goals = Self.defaultGoals
    /// Display settings last written (`05`), nil until one is.
    public private(set) var display: COLMIDisplaySettings?
    /// First day (days since 1970) with stored history.
    public let firstDay: Int
    private var realTime: [UInt8: Stream] = [:]
    private var continuous: Stream?
    private var rawSensor: Stream?
    private var rawSensorCount = 0
    private var lastRingMinute: Int64?
    private var lastLiveActivity: COLMILiveActivity?

    /// Default toggles: everything on.
    public static let defaultAutoMeasurements: [COLMIAutoMeasurementKind: Bool] = [.spo2: true, .stress: true, .hrv: true, .temperature: true]

    /// Capability map of the emulated R02: temperature, SpO2, weather, new sleep protocol,
    /// manual HR, stress and HRV (every sensor, so every sync path runs; a real R02's map, in
    /// colmi_r02_client's tests, has no temperature and no HRV).
    public static let capabilities = COLMICapabilities(
        temperatureRaw: 1, flags1: 0x22, newSleepProtocolRaw: 1, flags3: 0x01, flags4: 0x30)

    /// The capability map of a family member: the R02's, with the temperature sensor as the
    /// model has it and, for a ring with a screen, a screen size (made up: no source gives one).
    public static func capabilities(of info: COLMIRingModelInfo) -> COLMICapabilities {
        guard info.id != "r02" else { return capabilities }
        var c = capabilities
        c.temperatureRaw = info.hasTemperatureSensor ? 1 : 0
        if info.hasScreen {
            c.screenWidth = 128
            c.screenHeight = 32
        }
        return c
    }

    /// Firmware revision string: the R02's real one (from colmi_r02_client #6); a marked
    /// emulated one for the others.
    public var firmwareRevision: String { info.id == "r02" ? "R02_3.00.06_240523" : "\(info.id.uppercased())_emulated" }
    /// Hardware revision string.
    public var hardwareRevision: String { info.id == "r02" ? "R02_V3.0" : "\(info.id.uppercased())_emulated" }

    /// Goals the ring reports until they are written.
    public static let defaultGoals = COLMIGoals(steps: 8000, calories: 300, distanceMeters: 6000, sportMinutes: 60, sleepMinutes: 480)

    private struct Stream: Hashable, Sendable {
        var keepAliveUntil: Double
        var next: Double
        var sent = 0
    }

    /// Builds the model: `seed` fixes its randomness, `options` its rider and device settings.
    public init(seed: UInt64 = 0, options: EmulatorOptions = EmulatorOptions(), model: COLMIRingModelInfo = COLMIRingModelInfo.family[0]) {
        info = model
        name = "colmi-\(model.id)"
        capabilities = Self.capabilities(of: model)
        random = SeededGenerator(seed: seed)
        data = COLMISyntheticData(seed: seed)
        var naming = SeededGenerator(seed: seed ^ 0xC011)
        let suffix = [UInt8(truncatingIfNeeded: naming.next()), UInt8(truncatingIfNeeded: naming.next())].hexString.uppercased()
        localName = options.localName ?? "\(model.namePrefix)\(suffix)"
        battery = BatteryDrain(percent: options.batteryPercent, secondsPerPercent: options.batterySecondsPerPercent)
        let start = options.clockStartSeconds ?? Int64(Date().timeIntervalSince1970)
        clockBase = start
        firstDay = Int(start / 86_400) - Self.historyDays + 1
    }

    public var advertising: AdvertisingHints {
        AdvertisingHints(
            // Two 128-bit UUIDs and a long name (`COLMI R10_…`) do not fit 31 bytes: those list the
            // UART service alone (the big-data service is found by discovery).
            localName: localName, serviceUUIDs: localName.utf8.count > 8 ? [COLMIUUID.service] : [COLMIUUID.service, COLMIUUID.bigDataService],
            manufacturerData: .init(companyID: COLMIUUID.manufacturerCompanyID, data: [0x00, 0x00]))
    }

    public var services: [EmulatedService] {
        [
            EmulatedService(COLMIUUID.service, [
                EmulatedCharacteristic(COLMIUUID.write, [.write, .writeWithoutResponse]),
                EmulatedCharacteristic(COLMIUUID.notify, [.notify]),
            ]),
            EmulatedService(COLMIUUID.bigDataService, [
                EmulatedCharacteristic(COLMIUUID.bigDataWrite, [.write, .writeWithoutResponse]),
                EmulatedCharacteristic(COLMIUUID.bigDataNotify, [.notify]),
            ]),
            EmulatedService(.deviceInformation, [
                EmulatedCharacteristic(.firmwareRevision, [.read], initialValue: Array(firmwareRevision.utf8)),
                EmulatedCharacteristic(.hardwareRevision, [.read], initialValue: Array(hardwareRevision.utf8)),
            ]),
        ]
    }

    public var tickInterval: Double { 0.25 }

    // MARK: Clock

    /// The ring's clock at model time `now`, seconds since 1970 (ring time base).
    public func ringSeconds(at now: Double) -> Int64 { clockBase &+ Int64((now - clockSetAt).rounded(.down)) }

    private func today(_ now: Double) -> Int { Int(ringSeconds(at: now) / 86_400) }
    private func minuteOfDay(_ now: Double) -> Int { Int(ringSeconds(at: now) % 86_400 / 60) }

    // MARK: GATT

    public func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? {
        switch characteristic {
        case .firmwareRevision: return Array(firmwareRevision.utf8)
        case .hardwareRevision: return Array(hardwareRevision.utf8)
        default: return nil
        }
    }

    public mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        switch characteristic {
        case COLMIUUID.write:
            guard let packet = try? COLMIPacket(bytes: bytes) else { return .ok }
            return .accepted(handle(COLMIRequest(packet: packet), packet: packet, now: now).map(v1))
        case COLMIUUID.bigDataWrite:
            guard let frame = try? COLMIBigDataFrame(bytes: bytes) else { return .ok }
            return .accepted(bigData(frame, now: now))
        default:
            return .rejected(attError: EmulatedATTError.writeNotPermitted)
        }
    }

    private func v1(_ packet: COLMIPacket) -> EmulatedOutput { EmulatedOutput(COLMIUUID.notify, packet.bytes) }

    private func echo(_ packet: COLMIPacket) -> [COLMIPacket] { [packet] }

    private func reply(_ opcode: UInt8, _ payload: [UInt8] = []) -> [COLMIPacket] {
        (try? COLMIPacket(opcode: opcode, payload: Array(payload.prefix(COLMIPacket.payloadCapacity)))).map { [$0] } ?? []
    }

    // MARK: V1 commands

    private mutating func handle(_ request: COLMIRequest, packet: COLMIPacket, now: Double) -> [COLMIPacket] {
        switch request {
        case let .setTime(setTime):
            clockBase = setTime.dateTime.secondsSince1970
            clockSetAt = now
            lastRingMinute = nil
            return [COLMIResponse.capabilities(capabilities).packet, COLMIResponse.packetSize(bytes: 0xF1).packet]
        case let .camera(mode):
            switch mode {
            case 4: return [COLMIResponse.camera(.entered).packet]
            case 6: return [COLMIResponse.camera(.finished).packet]
            default: return echo(packet)
            }
        case .battery:
            return [COLMIResponse.battery(COLMIBattery(levelPercent: battery.percent, isCharging: false)).packet]
        case .phoneName:
            return reply(COLMIOpcode.phoneName)
        case .powerOff:
            realTime = [:]
            continuous = nil
            rawSensor = nil
            return echo(packet)
        case .readUserPreferences:
            return reply(COLMIOpcode.userPreferences, [0x01] + preferences.bytes)
        case let .writeUserPreferences(p):
            preferences = p
            return reply(COLMIOpcode.userPreferences, [0x02] + p.bytes)
        case .blinkTwice, .findDevice:
            return echo(packet)
        case let .heartRateLog(dayStart):
            return heartRateLog(requestTimestamp: dayStart, now: now)
        case .readHeartRateLogSettings:
            return [COLMIResponse.heartRateLogSettings(.init(
                action: 1, enabled: heartRateLogEnabled, intervalMinutes: heartRateLogIntervalMinutes)).packet]
        case let .writeHeartRateLogSettings(s):
            heartRateLogEnabled = s.enabled
            heartRateLogIntervalMinutes = s.intervalMinutes
            return [COLMIResponse.heartRateLogSettings(.init(action: 2, enabled: s.enabled, intervalMinutes: s.intervalMinutes)).packet]
        case let .continuousHeartRate(action):
            switch action {
            case 0x01, 0x03:
                var stream = continuous ?? Stream(keepAliveUntil: now, next: now + 1)
                stream.keepAliveUntil = now + 60
                continuous = stream
            default:
                continuous = nil
            }
            return []
        case .readGoals:
            return [COLMIResponse.goals(goals).packet]
        case let .writeGoals(g):
            goals = g
            goals.action = 1
            var echo = g
            echo.action = 2
            return [COLMIResponse.goals(echo).packet]
        case let .writeDisplay(d):
            display = d
            return self.echo(packet)
        case let .readAutoMeasurement(kind):
            return [COLMIAutoMeasurementSetting(kind: kind, action: 1, enabled: autoMeasurements[kind] ?? false).packet]
        case let .writeAutoMeasurement(kind, enabled):
            autoMeasurements[kind] = enabled
            return [COLMIAutoMeasurementSetting(kind: kind, action: 2, enabled: enabled).packet]
        case let .stressHistory(dayIndex):
            return halfHourHistory(opcode: COLMIOpcode.stressHistory, kind: .stress, daysAgo: Int(dayIndex), now: now)
        case let .hrvHistory(daysAgo):
            return halfHourHistory(opcode: COLMIOpcode.hrvHistory, kind: .hrv, daysAgo: Int(min(daysAgo, 1000)), now: now)
        case .deviceSupport:
            // Newer R09 firmware asks the host to bond (flag 0x08).
            return [COLMIResponse.deviceSupport(flags: info.mayAskForBond ? 0x08 : 0).packet]
        case let .sportDetail(dayOffset):
            return sportDetail(day: today(now) - Int(dayOffset), now: now).map { $0.packets }
                ?? [COLMIResponse.sportDetail(.noData).packet]
        case let .realTimeStart(type, action):
            switch action {
            case .pause, .stop:
                realTime[type.rawValue] = nil
            default:
                var stream = realTime[type.rawValue] ?? Stream(keepAliveUntil: now, next: now + 1)
                stream.keepAliveUntil = now + 60
                realTime[type.rawValue] = stream
            }
            return []
        case let .realTimeStop(type):
            realTime[type.rawValue] = nil
            return []
        case .rawSensorStart:
            rawSensor = Stream(keepAliveUntil: .infinity, next: now + Self.rawInterval)
            return []
        case .rawSensorStop:
            rawSensor = nil
            return []
        case .factoryReset:
            heartRateLogEnabled = true
            heartRateLogIntervalMinutes = 30
            autoMeasurements = Self.defaultAutoMeasurements
            preferences = COLMIUserPreferences(ageYears: 35, heightCentimeters: 175, weightKilograms: 72)
            goals = Self.defaultGoals
            display = nil
            return echo(packet)
        case .other:
            return echo(packet)
        }
    }

    /// The HR log the ring holds for the day containing `requestTimestamp`, nil when it has none.
    public func heartRateLogValues(day: Int, now: Double) -> [UInt8]? {
        guard day >= firstDay, day <= today(now) else { return nil }
        let interval = Int(heartRateLogIntervalMinutes)
        let nowMinute = day == today(now) ? minuteOfDay(now) : 24 * 60
        return (0..<288).map { slot in
            let minute = slot * 5
            guard heartRateLogEnabled, interval > 0, minute % interval == 0, minute <= nowMinute else { return 0 }
            return data.heartRate(day: day, minute: minute)
        }
    }

    private func heartRateLog(requestTimestamp: UInt32, now: Double) -> [COLMIPacket] {
        guard let values = heartRateLogValues(day: Int(requestTimestamp / 86_400), now: now) else {
            return [COLMIResponse.heartRateLog(.noData).packet]
        }
        return COLMIHeartRateLog(requestTimestamp: requestTimestamp, bpmBySlot: values).packets
    }

    private func halfHourHistory(opcode: UInt8, kind: COLMIAutoMeasurementKind, daysAgo: Int, now: Double) -> [COLMIPacket] {
        let day = today(now) - daysAgo
        guard autoMeasurements[kind] == true, day >= firstDay, daysAgo >= 0 else {
            return reply(opcode, COLMIHalfHourHistoryPacket.noData.bytes)
        }
        let nowSlot = daysAgo == 0 ? minuteOfDay(now) / 30 : 48
        let values: [UInt8] = (0..<48).map { slot in
            guard slot < nowSlot else { return 0 }
            return kind == .hrv ? data.hrv(day: day, slot: slot) : data.stress(day: day, slot: slot)
        }
        return COLMIHalfHourHistory(kind: kind == .hrv ? "hrv" : "stress", valuesBySlot: values).packets(opcode: opcode)
    }

    /// The sport detail of `day` (completed quarter hours only for today), nil when none.
    public func sportDetail(day: Int, now: Double) -> COLMISportDetail? {
        guard day >= firstDay, day <= today(now) else { return nil }
        let lastQuarter = day == today(now) ? minuteOfDay(now) / 15 : 96
        let dt = COLMIDateTime(secondsSince1970: Int64(day) * 86_400)
        let date = COLMIDate(year: dt.year, month: dt.month, day: dt.day)
        let active = (0..<lastQuarter).compactMap { q -> (Int, UInt16)? in
            let steps = data.steps(day: day, quarter: q)
            return steps > 0 ? (q, steps) : nil
        }.prefix(255)
        guard !active.isEmpty else { return nil }
        let records = active.enumerated().map { i, entry in
            COLMISportDetailRecord(
                date: date, quarterHourIndex: UInt8(entry.0), packetIndex: UInt8(i), packetCount: UInt8(active.count),
                caloriesRaw: COLMISyntheticData.caloriesRaw(steps: entry.1), steps: entry.1,
                distanceMeters: COLMISyntheticData.distanceMeters(steps: entry.1))
        }
        return COLMISportDetail(newCalorieProtocol: true, records: records)
    }

    /// Today's totals as the `73 12` notification reports them: the sport detail's completed
    /// quarter hours plus the share of the current one walked so far (whole minutes), so the
    /// totals grow minute by minute while the synthetic person walks.
    public func liveActivity(now: Double) -> COLMILiveActivity {
        let day = today(now), minute = minuteOfDay(now)
        let records = sportDetail(day: day, now: now)?.records ?? []
        let current = Int(data.steps(day: day, quarter: minute / 15)) * (minute % 15) / 15
        let partial = UInt16(clamping: current)
        return COLMILiveActivity(
            steps: UInt32(records.reduce(0) { $0 + Int($1.steps) } + current),
            caloriesRaw: UInt32(records.reduce(0) { $0 + Int($1.caloriesRaw) } + Int(current > 0 ? COLMISyntheticData.caloriesRaw(steps: partial) : 0)),
            distanceMeters: UInt32(records.reduce(0) { $0 + Int($1.distanceMeters) } + Int(current > 0 ? COLMISyntheticData.distanceMeters(steps: partial) : 0)))
    }

    // MARK: V2 big data

    private mutating func bigData(_ frame: COLMIBigDataFrame, now: Double) -> [EmulatedOutput] {
        let today = today(now)
        let days = (0...6).reversed().map { (ago: UInt8($0), day: today - $0) }.filter { $0.day >= firstDay }
        let payload: COLMIBigDataPayload
        switch frame.dataID {
        case COLMIBigDataID.sleep where info.sleepRequest == .allProtocolV1 && frame.payload != [0xFF, 0x01]:
            // An R10 ignored the 1-byte sleep request (PulseLoopAndroid PR #26).
            return []
        case COLMIBigDataID.sleep:
            payload = .sleep(COLMISleepHistory(days: days.map { data.sleep(day: $0.day, daysAgo: $0.ago) }))
        case COLMIBigDataID.spo2:
            let hoursToday = minuteOfDay(now) / 60
            payload = .spo2(COLMISpO2History(days: autoMeasurements[.spo2] == true ? days.map { entry in
                let pairs = (0..<24).map { hour in
                    entry.ago == 0 && hour >= hoursToday ? (min: UInt8(0), max: UInt8(0)) : data.spo2(day: entry.day, hour: hour)
                }
                return COLMISpO2Day(daysAgo: entry.ago, minimumPercentByHour: pairs.map(\.min), maximumPercentByHour: pairs.map(\.max))
            } : []))
        case COLMIBigDataID.temperature:
            let slotsToday = minuteOfDay(now) / 30
            payload = .temperature(COLMITemperatureHistory(days: autoMeasurements[.temperature] == true ? days.map { entry in
                COLMITemperatureDay(daysAgo: entry.ago, rawByHalfHour: (0..<48).map { slot in
                    entry.ago == 0 && slot >= slotsToday ? 0 : COLMITemperatureDay.raw(celsius: data.temperature(day: entry.day, slot: slot)) ?? 0
                })
            } : []))
        case 0x01...0x05:
            payload = .otaStatus(step: frame.dataID, status: 2)
        default:
            payload = .other(dataID: frame.dataID, payload: [])
        }
        let bytes = payload.frame.bytes
        let size = max(maximumNotificationLength, 1)
        return stride(from: 0, to: bytes.count, by: size).map {
            EmulatedOutput(COLMIUUID.bigDataNotify, Array(bytes[$0..<min($0 + size, bytes.count)]))
        }
    }

    // MARK: Time

    public mutating func tick(now: Double) -> [EmulatedOutput] {
        var packets: [COLMIPacket] = []
        if !battery.tick(now: now).isEmpty {
            packets.append(COLMIResponse.deviceNotification(.battery(COLMIBattery(levelPercent: battery.percent, isCharging: false))).packet)
        }
        // Unsolicited notices on ring-clock minute boundaries.
        let minute = ringSeconds(at: now) / 60
        if let last = lastRingMinute, minute > last {
            for m in (max(last + 1, minute - 10))...minute {
                let minuteOfDay = Int(m % 1440)
                let interval = Int(heartRateLogIntervalMinutes)
                if heartRateLogEnabled, interval > 0, minuteOfDay % interval == 0, minuteOfDay % 5 == 0 {
                    packets.append(COLMIResponse.deviceNotification(.event(subtype: 0x01, data: [])).packet)
                }
                // Today's totals: every 5 minutes, and each minute they changed (Gadgetbridge's
                // live steps are these pushes).
                let totals = liveActivity(now: now)
                if minuteOfDay % 5 == 0 || totals != lastLiveActivity {
                    packets.append(COLMIResponse.deviceNotification(.liveActivity(totals)).packet)
                    lastLiveActivity = totals
                }
            }
        }
        lastRingMinute = minute
        packets += realTimeReadings(now: now)
        return packets.map(v1)
    }

    private mutating func realTimeReadings(now: Double) -> [COLMIPacket] {
        var out: [COLMIPacket] = []
        let day = today(now), minute = minuteOfDay(now)
        for type in realTime.keys.sorted() {
            guard var stream = realTime[type] else { continue }
            while now >= stream.next {
                if stream.next > stream.keepAliveUntil {
                    realTime[type] = nil
                    break
                }
                stream.next += 1
                stream.sent += 1
                let value: UInt8 = stream.sent <= 2 ? 0 : realTimeValue(type: type, day: day, minute: minute)
                out.append(COLMIResponse.realTimeReading(COLMIRealTimeReading(type: COLMIRealTimeType(rawValue: type), value: value)).packet)
                realTime[type] = stream
            }
        }
        if var stream = continuous {
            while now >= stream.next {
                if stream.next > stream.keepAliveUntil {
                    continuous = nil
                    break
                }
                stream.next += 1
                let bpm = UInt8(clamping: Int(data.heartRate(day: day, minute: minute)) + Int(random.unit() * 3) - 1)
                out.append(COLMIResponse.continuousHeartRate(bpm: bpm).packet)
                continuous = stream
            }
        }
        if var stream = rawSensor {
            while now >= stream.next {
                let t = stream.next
                stream.next += Self.rawInterval
                rawSensorCount += 1
                let bpm = Double(data.heartRate(day: day, minute: minute))
                out.append(COLMIResponse.rawSensor(rawPPG(at: t, bpm: bpm)).packet)
                out.append(COLMIResponse.rawSensor(rawAccelerometer(at: t)).packet)
                if rawSensorCount % 4 == 0 { out.append(COLMIResponse.rawSensor(rawSpO2(at: t, bpm: bpm)).packet) }
                rawSensor = stream
            }
        }
        return out
    }

    // MARK: Raw sensor stream

    /// Seconds between raw samples: about 4 Hz per sensor, as atc1441's FasterRawValues firmware
    /// mod reports (stock firmware is slower); SpO2 once a second.
    public static let rawInterval = 0.25

    /// The pulse wave at model time `t`, 0...1: a systolic peak and a smaller dicrotic wave per beat.
    static func pulseShape(_ t: Double, bpm: Double) -> Double {
        let phase = (t * max(bpm, 30) / 60).truncatingRemainder(dividingBy: 1)
        func bump(_ centre: Double, _ width: Double) -> Double { exp(-((phase - centre) / width) * ((phase - centre) / width)) }
        return min(1, bump(0.15, 0.08) + 0.35 * bump(0.45, 0.1))
    }

    /// Green-light PPG: a baseline of about 12000 counts drifting with breathing (15 a minute),
    /// a pulse of about 900 counts at the heart rate, and a little noise; max/min/diff over a beat.
    private mutating func rawPPG(at t: Double, bpm: Double) -> COLMIRawSensorSample {
        let baseline = 12_000 + 150 * sin(2 * .pi * t / 4)
        let value = baseline + 900 * Self.pulseShape(t, bpm: bpm) + (random.unit() - 0.5) * 80
        let high = UInt16(clamping: Int(baseline + 900)), low = UInt16(clamping: Int(baseline - 40))
        return .ppg(raw: UInt16(clamping: Int(value)), max: high, min: low, diff: high - low)
    }

    /// Red-light SpO2 channel: a smaller pulse on a lower baseline; max/min/diff as single bytes.
    private mutating func rawSpO2(at t: Double, bpm: Double) -> COLMIRawSensorSample {
        let value = 9000 + 300 * Self.pulseShape(t, bpm: bpm) + (random.unit() - 0.5) * 40
        let diff = UInt8(clamping: 38 + Int(random.unit() * 5))
        return .spo2(raw: UInt16(clamping: Int(value)), max: 120, min: 120 - diff, diff: diff)
    }

    /// Accelerometer (12-bit two's complement, 512 counts per g as on a ±4 g range): gravity on a
    /// hand at rest, turning slowly over 20 s, with tremor noise.
    private mutating func rawAccelerometer(at t: Double) -> COLMIRawSensorSample {
        let tilt = 0.35 * sin(2 * .pi * t / 20)
        let g = (x: sin(tilt) * 0.3, y: -0.3 + 0.1 * cos(2 * .pi * t / 20), z: cos(tilt) * 0.9)
        func counts(_ v: Double) -> UInt16 {
            let n = max(-2048, min(2047, Int((v * 512 + (random.unit() - 0.5) * 12).rounded())))
            return UInt16(bitPattern: Int16(n)) & 0x0FFF
        }
        return .accelerometer(first: counts(g.x), second: counts(g.y), third: counts(g.z))
    }

    private mutating func realTimeValue(type: UInt8, day: Int, minute: Int) -> UInt8 {
        let jitter = Int(random.unit() * 3) - 1
        switch COLMIRealTimeType(rawValue: type) {
        case .heartRate, .realTimeHeartRate, .healthCheck, .ecg:
            return UInt8(clamping: Int(data.heartRate(day: day, minute: minute)) + jitter)
        case .spo2: return UInt8(clamping: 97 + jitter)
        case .bloodPressure: return UInt8(clamping: 118 + jitter)
        case .fatigue: return UInt8(clamping: 30 + jitter)
        case .stress: return data.stress(day: day, slot: minute / 30)
        case .hrv: return data.hrv(day: day, slot: minute / 30)
        case .bloodSugar: return UInt8(clamping: 55 + jitter)
        default: return UInt8(clamping: 50 + jitter)
        }
    }
}

extension COLMIRingModel: NotificationLengthAdjustable {
    /// Frames are cut to `length` octets, kept within 20…244.
    public mutating func setMaximumNotificationLength(_ length: Int) {
        maximumNotificationLength = max(20, min(length, 244))
    }
}
