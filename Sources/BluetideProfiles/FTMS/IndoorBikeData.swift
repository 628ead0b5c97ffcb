import BluetideBase

/// Indoor Bike Data (0x2AD2): one notification of an FTMS indoor bike's measurements.
///
/// A uint16 flags field, then the present fields in a fixed order. Bit 0 ("more data") is
/// **inverted**: 0 means the instantaneous speed is present; a notification without speed is one
/// part of a record split over several notifications. Every other bit uses 1 = present. RFU bits
/// 13-15 are ignored. Raw fields keep the wire integers; each has a `Double` accessor in units.
public struct IndoorBikeData: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// Instantaneous speed, 0.01 km/h units (present when flags bit 0 is **0**).
    public var instantaneousSpeedHundredthKmh: UInt16?
    /// Average speed, 0.01 km/h units (bit 1).
    public var averageSpeedHundredthKmh: UInt16?
    /// Instantaneous cadence, 0.5 rpm units (bit 2).
    public var instantaneousCadenceHalfRpm: UInt16?
    /// Average cadence, 0.5 rpm units (bit 3).
    public var averageCadenceHalfRpm: UInt16?
    /// Total distance in metres, uint24 on the wire (bit 4).
    public var totalDistanceMeters: UInt32?
    /// Resistance level, unitless, resolution 1 (bit 5); sint16 per FTMS 1.0.
    public var resistanceLevel: Int16?
    /// Width of the resistance level on the wire when encoding: 2 (FTMS 1.0, the default) or 1
    /// (newer supplement text). Decoding always reads 2 bytes: a packet whose length does not
    /// match its flags is refused, never re-read with a guessed width.
    public var resistanceLevelWidth: ResistanceLevelWidth
    /// Instantaneous power in watts, sint16 (bit 6).
    public var instantaneousPowerWatts: Int16?
    /// Average power in watts, sint16 (bit 7).
    public var averagePowerWatts: Int16?
    /// Total energy, energy per hour and per minute (bit 8; the three travel together).
    public var energy: ExpendedEnergy?
    /// Heart rate in beats per minute (bit 9).
    public var heartRateBpm: UInt8?
    /// Metabolic equivalent, 0.1 MET units (bit 10).
    public var metabolicEquivalentTenths: UInt8?
    /// Elapsed time in seconds (bit 11).
    public var elapsedTimeSeconds: UInt16?
    /// Remaining time in seconds (bit 12).
    public var remainingTimeSeconds: UInt16?

    /// How many bytes the resistance level takes.
    public enum ResistanceLevelWidth: String, Sendable, Equatable, Encodable {
        /// sint16, FTMS 1.0 and what devices send.
        case twoBytes
        /// One byte, as some newer devices send.
        case oneByte
    }

    /// Expended energy (flags bit 8): 5 bytes, kcal. 0xFFFF / 0xFFFF / 0xFF mean "not available".
    public struct ExpendedEnergy: Equatable, Sendable, Encodable {
        /// Total energy in kcal; 0xFFFF = not available.
        public var totalKcal: UInt16
        /// Energy per hour in kcal; 0xFFFF = not available.
        public var perHourKcal: UInt16
        /// Energy per minute in kcal; 0xFF = not available.
        public var perMinuteKcal: UInt8

        public init(totalKcal: UInt16 = 0xFFFF, perHourKcal: UInt16 = 0xFFFF, perMinuteKcal: UInt8 = 0xFF) {
            self.totalKcal = totalKcal
            self.perHourKcal = perHourKcal
            self.perMinuteKcal = perMinuteKcal
        }

        /// Total energy, nil when the device marks it not available.
        public var total: UInt16? { totalKcal == 0xFFFF ? nil : totalKcal }
        /// Energy per hour, nil when not available.
        public var perHour: UInt16? { perHourKcal == 0xFFFF ? nil : perHourKcal }
        /// Energy per minute, nil when not available.
        public var perMinute: UInt8? { perMinuteKcal == 0xFF ? nil : perMinuteKcal }
    }

    public init(
        instantaneousSpeedHundredthKmh: UInt16? = nil, averageSpeedHundredthKmh: UInt16? = nil,
        instantaneousCadenceHalfRpm: UInt16? = nil, averageCadenceHalfRpm: UInt16? = nil,
        totalDistanceMeters: UInt32? = nil, resistanceLevel: Int16? = nil,
        resistanceLevelWidth: ResistanceLevelWidth = .twoBytes,
        instantaneousPowerWatts: Int16? = nil, averagePowerWatts: Int16? = nil, energy: ExpendedEnergy? = nil,
        heartRateBpm: UInt8? = nil, metabolicEquivalentTenths: UInt8? = nil,
        elapsedTimeSeconds: UInt16? = nil, remainingTimeSeconds: UInt16? = nil
    ) {
        self.instantaneousSpeedHundredthKmh = instantaneousSpeedHundredthKmh
        self.averageSpeedHundredthKmh = averageSpeedHundredthKmh
        self.instantaneousCadenceHalfRpm = instantaneousCadenceHalfRpm
        self.averageCadenceHalfRpm = averageCadenceHalfRpm
        self.totalDistanceMeters = totalDistanceMeters
        self.resistanceLevel = resistanceLevel
        self.resistanceLevelWidth = resistanceLevelWidth
        self.instantaneousPowerWatts = instantaneousPowerWatts
        self.averagePowerWatts = averagePowerWatts
        self.energy = energy
        self.heartRateBpm = heartRateBpm
        self.metabolicEquivalentTenths = metabolicEquivalentTenths
        self.elapsedTimeSeconds = elapsedTimeSeconds
        self.remainingTimeSeconds = remainingTimeSeconds
    }

    // MARK: Values in units

    /// Instantaneous speed in km/h.
    public var instantaneousSpeedKmh: Double? { instantaneousSpeedHundredthKmh.map { Double($0) / 100 } }
    /// Average speed in km/h.
    public var averageSpeedKmh: Double? { averageSpeedHundredthKmh.map { Double($0) / 100 } }
    /// Instantaneous cadence in rpm.
    public var instantaneousCadenceRpm: Double? { instantaneousCadenceHalfRpm.map { Double($0) / 2 } }
    /// Average cadence in rpm.
    public var averageCadenceRpm: Double? { averageCadenceHalfRpm.map { Double($0) / 2 } }
    /// Metabolic equivalent in MET.
    public var metabolicEquivalent: Double? { metabolicEquivalentTenths.map { Double($0) / 10 } }
    /// True when this notification is a non-final part of a split record (flags bit 0 = 1).
    public var hasMoreData: Bool { instantaneousSpeedHundredthKmh == nil }

    /// Combines the parts of a record split over several notifications: every field present in
    /// `next` replaces this one's, the others are kept. Merge until a part has the speed
    /// (``hasMoreData`` false), which ends the record.
    public func merged(with next: IndoorBikeData) -> IndoorBikeData {
        var out = self
        if let v = next.instantaneousSpeedHundredthKmh { out.instantaneousSpeedHundredthKmh = v }
        if let v = next.averageSpeedHundredthKmh { out.averageSpeedHundredthKmh = v }
        if let v = next.instantaneousCadenceHalfRpm { out.instantaneousCadenceHalfRpm = v }
        if let v = next.averageCadenceHalfRpm { out.averageCadenceHalfRpm = v }
        if let v = next.totalDistanceMeters { out.totalDistanceMeters = v }
        if let v = next.resistanceLevel {
            out.resistanceLevel = v
            out.resistanceLevelWidth = next.resistanceLevelWidth
        }
        if let v = next.instantaneousPowerWatts { out.instantaneousPowerWatts = v }
        if let v = next.averagePowerWatts { out.averagePowerWatts = v }
        if let v = next.energy { out.energy = v }
        if let v = next.heartRateBpm { out.heartRateBpm = v }
        if let v = next.metabolicEquivalentTenths { out.metabolicEquivalentTenths = v }
        if let v = next.elapsedTimeSeconds { out.elapsedTimeSeconds = v }
        if let v = next.remainingTimeSeconds { out.remainingTimeSeconds = v }
        return out
    }

    // MARK: Flags

    /// Flag bits as they go on the wire (bit 0 inverted: set when speed is absent).
    public var flags: UInt16 {
        var f: UInt16 = instantaneousSpeedHundredthKmh == nil ? 1 : 0
        if averageSpeedHundredthKmh != nil { f |= 1 << 1 }
        if instantaneousCadenceHalfRpm != nil { f |= 1 << 2 }
        if averageCadenceHalfRpm != nil { f |= 1 << 3 }
        if totalDistanceMeters != nil { f |= 1 << 4 }
        if resistanceLevel != nil { f |= 1 << 5 }
        if instantaneousPowerWatts != nil { f |= 1 << 6 }
        if averagePowerWatts != nil { f |= 1 << 7 }
        if energy != nil { f |= 1 << 8 }
        if heartRateBpm != nil { f |= 1 << 9 }
        if metabolicEquivalentTenths != nil { f |= 1 << 10 }
        if elapsedTimeSeconds != nil { f |= 1 << 11 }
        if remainingTimeSeconds != nil { f |= 1 << 12 }
        return f
    }

    /// Bytes the fields after the flags take for these flags, counting the resistance level as 2.
    static func fieldLength(flags: UInt16) -> Int {
        let widths: [(UInt16, Int)] = [
            (1 << 1, 2), (1 << 2, 2), (1 << 3, 2), (1 << 4, 3), (1 << 5, 2), (1 << 6, 2), (1 << 7, 2),
            (1 << 8, 5), (1 << 9, 1), (1 << 10, 1), (1 << 11, 2), (1 << 12, 2),
        ]
        var length = flags & 1 == 0 ? 2 : 0
        for (bit, width) in widths where flags & bit != 0 { length += width }
        return length
    }

    /// Decodes one notification (the reader holds exactly its bytes).
    ///
    /// The packet's length must be exactly what its flags describe (FTMS 1.0 widths, resistance
    /// level 2 bytes): a short packet fails naming the field it cuts, a long one (trailing
    /// bytes are not tolerated here, unlike most codecs) naming both lengths. No field width is ever
    /// guessed: a packet one byte short is not re-read with a one-byte resistance level (that
    /// turned a short packet into 24,832 W). Known device quirks are refused, not tolerated:
    /// a Life Fitness bike sends instantaneous cadence without its flag bit (26 bytes where
    /// its flags describe 24); decoding it by the flags shifts every later field (6,619,255 m,
    /// 13 W, 65,535 s), so it fails with "flags 0x…: 24 bytes, found 26".
    public init(from reader: inout ByteReader) throws(DecodingError) {
        let context = "Indoor Bike Data"
        let flags = try reader.read(UInt16.self, "\(context).flags")
        func has(_ bit: UInt16) -> Bool { flags & (1 << bit) != 0 }
        let described = Self.fieldLength(flags: flags)
        let present = reader.remaining
        self.init()
        if flags & 1 == 0 {
            instantaneousSpeedHundredthKmh = try reader.read(UInt16.self, "\(context).instantaneous speed")
        }
        if has(1) { averageSpeedHundredthKmh = try reader.read(UInt16.self, "\(context).average speed") }
        if has(2) { instantaneousCadenceHalfRpm = try reader.read(UInt16.self, "\(context).instantaneous cadence") }
        if has(3) { averageCadenceHalfRpm = try reader.read(UInt16.self, "\(context).average cadence") }
        if has(4) { totalDistanceMeters = try reader.readUInt24("\(context).total distance") }
        if has(5) { resistanceLevel = try reader.read(Int16.self, "\(context).resistance level") }
        if has(6) { instantaneousPowerWatts = try reader.read(Int16.self, "\(context).instantaneous power") }
        if has(7) { averagePowerWatts = try reader.read(Int16.self, "\(context).average power") }
        if has(8) {
            let total = try reader.read(UInt16.self, "\(context).total energy")
            let perHour = try reader.read(UInt16.self, "\(context).energy per hour")
            let perMinute = try reader.readUInt8("\(context).energy per minute")
            energy = ExpendedEnergy(totalKcal: total, perHourKcal: perHour, perMinuteKcal: perMinute)
        }
        if has(9) { heartRateBpm = try reader.readUInt8("\(context).heart rate") }
        if has(10) { metabolicEquivalentTenths = try reader.readUInt8("\(context).metabolic equivalent") }
        if has(11) { elapsedTimeSeconds = try reader.read(UInt16.self, "\(context).elapsed time") }
        if has(12) { remainingTimeSeconds = try reader.read(UInt16.self, "\(context).remaining time") }
        // A short packet has failed above, naming the field it cut; a longer one fails here.
        guard reader.isAtEnd else {
            let hexFlags = String(flags, radix: 16, uppercase: true)
            throw .invalid(
                "\(context).length", expected: "\(2 + described) bytes as flags 0x\(String(repeating: "0", count: 4 - hexFlags.count))\(hexFlags) describe",
                found: "\(2 + present) bytes", at: 0)
        }
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(flags)
        if let v = instantaneousSpeedHundredthKmh { writer.write(v) }
        if let v = averageSpeedHundredthKmh { writer.write(v) }
        if let v = instantaneousCadenceHalfRpm { writer.write(v) }
        if let v = averageCadenceHalfRpm { writer.write(v) }
        if let v = totalDistanceMeters { writer.writeUInt24(v) }
        if let v = resistanceLevel {
            switch resistanceLevelWidth {
            case .twoBytes: writer.write(v)
            case .oneByte: writer.write(UInt8(truncatingIfNeeded: v))
            }
        }
        if let v = instantaneousPowerWatts { writer.write(v) }
        if let v = averagePowerWatts { writer.write(v) }
        if let e = energy {
            writer.write(e.totalKcal)
            writer.write(e.perHourKcal)
            writer.write(e.perMinuteKcal)
        }
        if let v = heartRateBpm { writer.write(v) }
        if let v = metabolicEquivalentTenths { writer.write(v) }
        if let v = elapsedTimeSeconds { writer.write(v) }
        if let v = remainingTimeSeconds { writer.write(v) }
    }

    /// One line such as `24.60 km/h, 46.0 rpm, 79 W, HR 80`.
    public var description: String {
        var parts: [String] = []
        if let v = instantaneousSpeedKmh { parts.append("\(trainerFormat(v, decimals: 2)) km/h") }
        if let v = averageSpeedKmh { parts.append("avg \(trainerFormat(v, decimals: 2)) km/h") }
        if let v = instantaneousCadenceRpm { parts.append("\(trainerFormat(v, decimals: 1)) rpm") }
        if let v = averageCadenceRpm { parts.append("avg \(trainerFormat(v, decimals: 1)) rpm") }
        if let v = totalDistanceMeters { parts.append("\(v) m") }
        if let v = resistanceLevel {
            parts.append("resistance \(v)\(resistanceLevelWidth == .oneByte ? " (1 byte)" : "")")
        }
        if let v = instantaneousPowerWatts { parts.append("\(v) W") }
        if let v = averagePowerWatts { parts.append("avg \(v) W") }
        if let e = energy {
            let show = { (v: String?) in v ?? "n/a" }
            parts.append(
                "energy \(show(e.total.map { "\($0)" })) kcal, \(show(e.perHour.map { "\($0)" })) kcal/h, "
                    + "\(show(e.perMinute.map { "\($0)" })) kcal/min")
        }
        if let v = heartRateBpm { parts.append("HR \(v)") }
        if let v = metabolicEquivalent { parts.append("\(trainerFormat(v, decimals: 1)) MET") }
        if let v = elapsedTimeSeconds { parts.append("elapsed \(v) s") }
        if let v = remainingTimeSeconds { parts.append("remaining \(v) s") }
        if hasMoreData { parts.append("(more data follows)") }
        return parts.isEmpty ? "no fields" : parts.joined(separator: ", ")
    }
}
