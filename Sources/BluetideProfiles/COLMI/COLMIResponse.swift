import BluetideBase

/// Every V1 packet the ring sends, decoded by opcode.
///
/// Unknown opcodes decode to ``raw(_:)``, never an error; a known opcode whose fields are malformed
/// (bad BCD in a sport-detail date, …) throws ``DecodingError`` naming the field. ``packet`` encodes
/// the exact packet the ring would send (an emulator uses it).
///
/// colmi-docs' "bit 7 of the opcode marks an error" rule is not applied: 0xA1, 0xBC and 0xFF are
/// legitimate opcodes, and no capture shows an error reply, so such packets decode as ``raw(_:)``.
public enum COLMIResponse: GATTCodable, Hashable, Sendable, Encodable {
    /// `01`: set-time reply, the capability map.
    case capabilities(COLMICapabilities)
    /// `02`: a camera / gesture event.
    case camera(COLMICameraEvent)
    /// `03`: battery level and charging.
    case battery(COLMIBattery)
    /// `15`: one packet of a day's heart-rate log.
    case heartRateLog(COLMIHeartRateLogPacket)
    /// `16`: HR-log settings (read reply or write echo).
    case heartRateLogSettings(COLMIHeartRateLogSettings)
    /// `1E <bpm>`: one reading of the continuous HR stream.
    case continuousHeartRate(bpm: UInt8)
    /// `21`: goals.
    case goals(COLMIGoals)
    /// `2C`, `36`, `38`, `3A`: an automatic-measurement toggle.
    case autoMeasurement(COLMIAutoMeasurementSetting)
    /// `2F <size>`: packet-size indicator (unsolicited, e.g. after set time), bytes.
    case packetSize(bytes: UInt8)
    /// `37`: one packet of stress history.
    case stressHistory(COLMIHalfHourHistoryPacket)
    /// `39`: one packet of HRV history.
    case hrvHistory(COLMIHalfHourHistoryPacket)
    /// `3C <flags>`: device support; flag 0x08 = the host should bond.
    case deviceSupport(flags: UInt8)
    /// `43`: one packet of sport detail.
    case sportDetail(COLMISportDetailPacket)
    /// `69`: one real-time reading.
    case realTimeReading(COLMIRealTimeReading)
    /// `73`: an unsolicited device notification.
    case deviceNotification(COLMIDeviceNotification)
    /// `A1`: a raw sensor sample.
    case rawSensor(COLMIRawSensorSample)
    /// Any other packet (unknown opcode, or a reply with nothing documented to decode).
    case raw(COLMIPacket)

    /// Decodes a packet whose checksum is already checked.
    public init(packet: COLMIPacket) throws(DecodingError) {
        let p = packet.payload
        do {
            switch packet.opcode {
            case COLMIOpcode.setTime: self = .capabilities(try COLMICapabilities(bytes: p))
            case COLMIOpcode.camera: self = .camera(try COLMICameraEvent(bytes: p))
            case COLMIOpcode.battery: self = .battery(try COLMIBattery(bytes: p))
            case COLMIOpcode.heartRateLog: self = .heartRateLog(try COLMIHeartRateLogPacket(bytes: p))
            case COLMIOpcode.heartRateLogSettings: self = .heartRateLogSettings(try COLMIHeartRateLogSettings(bytes: p))
            case COLMIOpcode.continuousHeartRate: self = .continuousHeartRate(bpm: packet[1])
            case COLMIOpcode.goals: self = .goals(try COLMIGoals(bytes: p))
            case COLMIOpcode.autoSpO2, COLMIOpcode.autoStress, COLMIOpcode.autoHRV, COLMIOpcode.autoTemperature:
                if let s = COLMIAutoMeasurementSetting(packet: packet) { self = .autoMeasurement(s) } else { self = .raw(packet) }
            case COLMIOpcode.packetSize: self = .packetSize(bytes: packet[1])
            case COLMIOpcode.stressHistory: self = .stressHistory(try COLMIHalfHourHistoryPacket(bytes: p))
            case COLMIOpcode.hrvHistory: self = .hrvHistory(try COLMIHalfHourHistoryPacket(bytes: p))
            case COLMIOpcode.deviceSupport: self = .deviceSupport(flags: packet[1])
            case COLMIOpcode.sportDetail: self = .sportDetail(try COLMISportDetailPacket(bytes: p))
            case COLMIOpcode.realTimeStart: self = .realTimeReading(try COLMIRealTimeReading(bytes: p))
            case COLMIOpcode.deviceNotification: self = .deviceNotification(try COLMIDeviceNotification(payload: p))
            case COLMIOpcode.rawSensor: self = .rawSensor(try COLMIRawSensorSample(payload: p))
            default: self = .raw(packet)
            }
        } catch {
            // Field offsets count from byte 1 of the packet.
            var shifted = error
            shifted.offset = error.offset.map { $0 + 1 }
            throw shifted
        }
    }

    /// Reads a 16-byte packet (checksum checked) and decodes it.
    public init(from reader: inout ByteReader) throws(DecodingError) {
        try self.init(packet: try COLMIPacket(from: &reader))
    }

    /// The 16-byte packet the ring sends for this response.
    public var packet: COLMIPacket {
        func p(_ op: UInt8, _ payload: [UInt8]) -> COLMIPacket { COLMIPacket(opcode: op, truncating: payload) }
        switch self {
        case let .capabilities(c): return p(COLMIOpcode.setTime, c.bytes)
        case let .camera(e): return p(COLMIOpcode.camera, e.bytes)
        case let .battery(b): return p(COLMIOpcode.battery, b.bytes)
        case let .heartRateLog(h): return h.packet
        case let .heartRateLogSettings(s): return p(COLMIOpcode.heartRateLogSettings, s.bytes)
        case let .continuousHeartRate(bpm): return p(COLMIOpcode.continuousHeartRate, [bpm])
        case let .goals(g): return p(COLMIOpcode.goals, g.bytes)
        case let .autoMeasurement(s): return s.packet
        case let .packetSize(size): return p(COLMIOpcode.packetSize, [size])
        case let .stressHistory(h): return p(COLMIOpcode.stressHistory, h.bytes)
        case let .hrvHistory(h): return p(COLMIOpcode.hrvHistory, h.bytes)
        case let .deviceSupport(flags): return p(COLMIOpcode.deviceSupport, [flags])
        case let .sportDetail(s): return s.packet
        case let .realTimeReading(r): return p(COLMIOpcode.realTimeStart, r.bytes)
        case let .deviceNotification(n): return p(COLMIOpcode.deviceNotification, n.payload)
        case let .rawSensor(s): return p(COLMIOpcode.rawSensor, s.payload)
        case let .raw(packet): return packet
        }
    }

    public func encode(to writer: inout ByteWriter) { packet.encode(to: &writer) }

    /// One readable line, e.g. `battery 64 %, not charging`.
    public var summary: String {
        switch self {
        case let .capabilities(c):
            var features: [String] = []
            if c.supportsSpO2 { features.append("SpO2") }
            if c.supportsTemperature { features.append("temperature") }
            if c.supportsManualHeartRate { features.append("manual HR") }
            if c.supportsStress { features.append("stress") }
            if c.supportsHRV { features.append("HRV") }
            if c.supportsWeather { features.append("weather") }
            if c.usesNewSleepProtocol { features.append("big-data sleep") }
            return "capabilities: \(features.isEmpty ? "none" : features.joined(separator: ", "))"
        case let .camera(e): return "camera event \(e.rawValue)"
        case let .battery(b): return "battery \(b.levelPercent) %, \(b.isCharging ? "charging" : "not charging")"
        case let .heartRateLog(h):
            switch h {
            case .noData: return "HR log: no data"
            case let .header(n, m): return "HR log header: \(n) packets, \(m)-min slots"
            case let .first(t, bpm):
                return "HR log 1: day of \(COLMIDateTime(secondsSince1970: Int64(t))), \(bpm.filter { $0 != 0 }.count) measured in slots 0-8"
            case let .values(k, bpm):
                let first = COLMIHeartRateLogPacket.firstSlotCount + (Int(k) - 2) * COLMIHeartRateLogPacket.slotsPerPacket
                return "HR log \(k): slots \(first)-\(first + 12), \(bpm.filter { $0 != 0 }.count) measured"
            }
        case let .heartRateLogSettings(s):
            return "HR-log settings: \(s.enabled ? "on" : "off"), every \(s.intervalMinutes) min"
        case let .continuousHeartRate(bpm): return "continuous HR \(bpm) bpm"
        case let .goals(g): return "goals: \(g.steps) steps, \(g.calories) cal, \(g.distanceMeters) m"
        case let .autoMeasurement(s): return "auto \(s.kind): \(s.enabled ? "on" : "off")"
        case let .packetSize(size): return "packet size \(size)"
        case let .stressHistory(h): return "stress history \(Self.historySummary(h))"
        case let .hrvHistory(h): return "HRV history \(Self.historySummary(h))"
        case let .deviceSupport(flags): return "device support 0x\([flags].hexString)\(flags & 0x08 != 0 ? " (bond)" : "")"
        case let .sportDetail(s):
            switch s {
            case .noData: return "sport detail: no data"
            case let .header(n, f): return "sport detail header: \(n) records\(f ? ", calories ×10" : "")"
            case let .record(r):
                return "sport detail \(r.date) \(COLMIDateTime.clock(minuteOfDay: r.minuteOfDay)): \(r.steps) steps, \(r.distanceMeters) m, \(r.caloriesRaw) cal raw (\(Int(r.packetIndex) + 1)/\(r.packetCount))"
            }
        case let .realTimeReading(r):
            if let e = r.errorDescription { return "real-time \(r.type) error \(r.errorCode) (\(e))" }
            return r.value == 0 ? "real-time \(r.type): measuring" : "real-time \(r.type) \(r.value) \(r.type.unit)"
        case let .deviceNotification(n):
            switch n {
            case let .battery(b): return "notification: battery \(b.levelPercent) %, \(b.isCharging ? "charging" : "not charging")"
            case let .liveActivity(a): return "notification: today \(a.steps) steps, \(a.distanceMeters) m, \(a.caloriesRaw) cal raw"
            case let .event(subtype, _): return "notification: \(COLMIDeviceNotification.name(ofSubtype: subtype))"
            }
        case let .rawSensor(s):
            switch s {
            case let .spo2(raw, _, _, _): return "raw SpO2 \(raw)"
            case let .ppg(raw, _, _, _): return "raw PPG \(raw)"
            case let .accelerometer(a, b, c):
                return "raw accelerometer \(COLMIRawSensorSample.signed12(a)) \(COLMIRawSensorSample.signed12(b)) \(COLMIRawSensorSample.signed12(c))"
            case let .other(subtype, _): return "raw sensor subtype \(subtype)"
            }
        case let .raw(p): return "\(COLMIOpcode.name(p.opcode)): \(p.payload.hexString)"
        }
    }

    private static func historySummary(_ h: COLMIHalfHourHistoryPacket) -> String {
        switch h {
        case .noData: return "no data"
        case let .header(n, _): return "header: \(n) packets"
        case let .first(_, v): return "1: \(v.filter { $0 != 0 }.count) values"
        case let .values(k, v): return "\(k): \(v.filter { $0 != 0 }.count) values"
        }
    }

    /// A short name of the case, used as `kind` in JSON.
    public var kind: String {
        switch self {
        case .capabilities: return "capabilities"
        case .camera: return "camera"
        case .battery: return "battery"
        case .heartRateLog: return "heartRateLog"
        case .heartRateLogSettings: return "heartRateLogSettings"
        case .continuousHeartRate: return "continuousHeartRate"
        case .goals: return "goals"
        case .autoMeasurement: return "autoMeasurement"
        case .packetSize: return "packetSize"
        case .stressHistory: return "stressHistory"
        case .hrvHistory: return "hrvHistory"
        case .deviceSupport: return "deviceSupport"
        case .sportDetail: return "sportDetail"
        case .realTimeReading: return "realTimeReading"
        case .deviceNotification: return "deviceNotification"
        case .rawSensor: return "rawSensor"
        case .raw: return "raw"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        struct BPM: Encodable { let bpm: UInt8 }
        struct Size: Encodable { let packetSizeBytes: UInt8 }
        struct Support: Encodable { let flags: UInt8; let supportsBlePairing: Bool }
        let value: any Encodable
        switch self {
        case let .capabilities(v): value = v
        case let .camera(v): value = v
        case let .battery(v): value = v
        case let .heartRateLog(v): value = v
        case let .heartRateLogSettings(v): value = v
        case let .continuousHeartRate(bpm): value = BPM(bpm: bpm)
        case let .goals(v): value = v
        case let .autoMeasurement(v): value = v
        case let .packetSize(size): value = Size(packetSizeBytes: size)
        case let .stressHistory(v): value = v
        case let .hrvHistory(v): value = v
        case let .deviceSupport(flags): value = Support(flags: flags, supportsBlePairing: flags & 0x08 != 0)
        case let .sportDetail(v): value = v
        case let .realTimeReading(v): value = v
        case let .deviceNotification(v): value = v
        case let .rawSensor(v): value = v
        case let .raw(v): value = v
        }
        try COLMITaggedEncoding.encode(encoder, kind: kind, value: value)
    }
}
