import Bluetide

extension Ring {
    /// The monitoring switches this ring has, from the capability map of the last set time
    /// (all four when the session did not set the time).
    public var monitoringKinds: [COLMIAutoMeasurementKind] {
        guard let c = capabilities else { return COLMIAutoMeasurementKind.allCases }
        return COLMIAutoMeasurementKind.allCases.filter { kind in
            switch kind {
            case .spo2: c.supportsSpO2
            case .stress: c.supportsStress
            case .hrv: c.supportsHRV
            case .temperature: c.supportsTemperature
            }
        }
    }

    /// Whether the ring has a screen: its model has one, or its capability map reports a screen size.
    public var hasScreen: Bool {
        model?.hasScreen == true || ((capabilities?.screenWidth ?? 0) > 0 && (capabilities?.screenHeight ?? 0) > 0)
    }

    /// Reads every setting: heart-rate logging, the monitoring switches the ring has, the user
    /// profile and the goals (one read command each; replies matched by their `01` read action,
    /// so an echo of an earlier write is never taken for one).
    public func settings() async throws -> RingSettings {
        let log = try COLMIHeartRateLogSettings(bytes: try await read(COLMIRequest.readHeartRateLogSettings, prefix: [0x01], "read HR-log settings").payload)
        var monitoring: [COLMIAutoMeasurementKind: Bool] = [:]
        for kind in monitoringKinds {
            let request = COLMIRequest.readAutoMeasurement(kind)
            let packet = try await read(request, prefix: kind == .temperature ? [0x03, 0x01] : [0x01], "read auto \(kind)")
            guard let setting = COLMIAutoMeasurementSetting(packet: packet) else {
                throw RingError.unexpectedReply(command: "read auto \(kind)", detail: packet.description)
            }
            monitoring[kind] = setting.enabled
        }
        let preferences = try await read(COLMIRequest.readUserPreferences, prefix: [0x01], "read user profile")
        let profile: COLMIUserPreferences
        do { profile = try COLMIUserPreferences(bytes: preferences.payload.dropFirst()) } catch {
            throw RingError.unexpectedReply(command: "read user profile", detail: "\(error)")
        }
        let goalsPacket = try await read(COLMIRequest.readGoals, prefix: [0x01], "read goals")
        let goals: COLMIGoals
        do { goals = try COLMIGoals(bytes: goalsPacket.payload) } catch {
            throw RingError.unexpectedReply(command: "read goals", detail: "\(error)")
        }
        return RingSettings(heartRateLog: log, monitoring: monitoring, profile: profile, goals: goals, display: lastDisplay)
    }

    /// Applies `changes` (in order; a later change of the same key wins): writes each group
    /// that changed (one command per group), reads every setting back and checks each change
    /// took. Throws ``RingError/unsupported(_:)`` before writing anything when the ring lacks a
    /// monitoring switch or a screen, and ``RingError/settingNotKept(key:wanted:found:)`` when
    /// the read-back differs.
    @discardableResult
    public func changeSettings(_ changes: [RingSettingChange]) async throws -> RingSettings {
        let current = try await settings()
        let kinds = monitoringKinds
        for change in changes {
            if let kind = change.key.monitoringKind, !kinds.contains(kind) {
                throw RingError.unsupported("\(modelLabel) has no all-day \(kind) monitoring (its capability map says so); leave out --set \(change.key.rawValue)")
            }
            if change.key.group == .display, !hasScreen {
                throw RingError.unsupported("\(modelLabel) has no screen, so no display settings; leave out --set \(change.key.rawValue)")
            }
        }
        let target = current.applying(changes)
        let groups = Set(changes.map(\.key.group))
        if groups.contains(.heartRateLog) {
            let write = COLMIHeartRateLogSettingsWrite(enabled: target.heartRateLog.enabled, intervalMinutes: target.heartRateLog.intervalMinutes)
            try await send(COLMIRequest.writeHeartRateLogSettings(write).packet.bytes, "write HR-log settings")
        }
        for kind in COLMIAutoMeasurementKind.allCases where changes.contains(where: { $0.key.monitoringKind == kind }) {
            try await send(COLMIRequest.writeAutoMeasurement(kind, enabled: target.monitoring[kind] ?? false).packet.bytes, "write auto \(kind)")
        }
        if groups.contains(.profile) {
            try await send(COLMIRequest.writeUserPreferences(target.profile).packet.bytes, "write user profile")
        }
        if groups.contains(.goals) {
            try await send(COLMIRequest.writeGoals(target.goals).packet.bytes, "write goals")
        }
        if groups.contains(.display), let display = target.display {
            try await send(COLMIRequest.writeDisplay(display).packet.bytes, "write display")
            rememberDisplay(display)
        }
        let readBack = try await settings()
        for change in changes where change.key.group != .display {
            let wanted = target.text(of: change.key), found = readBack.text(of: change.key)
            if wanted != found {
                throw RingError.settingNotKept(key: change.key.rawValue, wanted: wanted ?? "?", found: found ?? "nothing")
            }
        }
        return readBack
    }

    /// The device-support flags (`3C`); flag 0x08 means the ring wants an OS bond.
    public func deviceSupportFlags() async throws -> UInt8 {
        try await read(COLMIRequest.deviceSupport, prefix: [], "device support").payload[0]
    }

    private func read(_ request: COLMIRequest, prefix: [UInt8], _ name: String) async throws -> COLMIPacket {
        let packet = request.packet
        guard case let .packet(reply) = try await exchange(packet.bytes, .reply(opcode: packet.opcode, prefix: prefix), name) else {
            throw RingError.unexpectedReply(command: name, detail: "not a single packet")
        }
        return reply
    }
}
