import BluetideBase
import BluetideProfiles

/// Which known profiles decode a characteristic's values.
public struct DecodeAttempt: Sendable, Equatable {
    /// The characteristic's value handle.
    public var valueHandle: Int
    /// Values tried (at most ``sampleLimit``).
    public var samples: Int
    /// Profiles (their `bluetide decode` names) that decoded every sample, the one assigned to
    /// the characteristic's UUID first.
    public var profiles: [String]
    /// The first sample as the first matching profile reads it.
    public var firstSummary: String?
    /// Whether the first profile is the one assigned to the characteristic's UUID.
    public var ownProfileDecodes: Bool

    /// Most values tried per characteristic.
    public static let sampleLimit = 64
}

/// The human-readable outputs of a clone: the summary and the central's script.
public enum CloneReport {
    /// Values of `characteristic` that crossed the air (reads, writes, notifications, replies),
    /// in capture order, with their time.
    public static func values(of characteristic: CloneCharacteristic, in device: ClonedDevice) -> [(t: Double, value: [UInt8])] {
        let handle = characteristic.valueHandle
        var values: [(t: Double, value: [UInt8])] = []
        for exchange in device.exchanges {
            if exchange.handle == handle, let bytes = try? Hex.parse(exchange.value) { values.append((exchange.t, bytes)) }
            for reply in exchange.replies where reply.handle == handle {
                if let bytes = try? Hex.parse(reply.value) { values.append((exchange.t + reply.delay, bytes)) }
            }
        }
        for n in device.notifications where n.handle == handle {
            if let bytes = try? Hex.parse(n.value) { values.append((n.t, bytes)) }
        }
        if values.isEmpty, let text = characteristic.value, let bytes = try? Hex.parse(text) { values.append((0, bytes)) }
        return values.sorted { $0.0 < $1.0 }
    }

    /// Tries every profile of ``ProfileCatalog`` on the characteristic's values; nil when no value was seen.
    public static func decodeAttempt(_ characteristic: CloneCharacteristic, in device: ClonedDevice) -> DecodeAttempt? {
        let samples = values(of: characteristic, in: device).prefix(DecodeAttempt.sampleLimit)
        guard !samples.isEmpty else { return nil }
        var matches: [(name: String, summary: String?)] = []
        for profile in ProfileCatalog.all {
            // A profile tied to another characteristic is tried too (a vendor UUID may carry a
            // standard payload), but never the empty-value ones by accident: every sample must decode.
            var decoder = profile.makeDecoder(ProfileOptions())
            var first: String?
            var ok = true
            for (t, value) in samples {
                do {
                    let packet = try decoder.decode(value, at: t)
                    if first == nil { first = packet.summary }
                } catch {
                    ok = false
                    break
                }
            }
            if ok { matches.append((profile.name, first)) }
        }
        matches.sort { lhs, rhs in
            let l = ProfileCatalog.named(lhs.name)?.characteristic == characteristic.uuid
            let r = ProfileCatalog.named(rhs.name)?.characteristic == characteristic.uuid
            return l != r ? l : lhs.name < rhs.name
        }
        let own = matches.first.map { ProfileCatalog.named($0.name)?.characteristic == characteristic.uuid } ?? false
        return DecodeAttempt(valueHandle: characteristic.valueHandle, samples: samples.count, profiles: matches.map(\.name),
                             firstSummary: matches.first?.summary, ownProfileDecodes: own)
    }

    /// The summary: the capture, each connection, each device's services and characteristics
    /// (assigned names, handles, properties, what carried what and how often, decode attempts),
    /// its command→reply table, and the warnings.
    public static func summary(_ document: CloneDocument) -> String {
        var lines: [String] = []
        let source = document.source
        lines.append("Clone of \(source.capture): \(source.format), \(source.records) records, \(source.packets) HCI packets, \(format(source.durationSeconds)) s")
        lines.append("")
        lines.append("Connections (\(document.connections.count)):")
        for c in document.connections {
            var line = "  #\(c.number) handle 0x\(String(c.handle, radix: 16)): we were \(c.localRole)"
            if let peer = c.peer { line += ", peer \(peer) (\(c.peerAddressType ?? "?"))" }
            line += ", \(format(c.start)) s"
            line += c.end.map { "–\(format($0)) s" } ?? " to the end"
            line += ", \(c.attPDUs) ATT PDUs"
            if c.encrypted { line += ", encrypted" }
            if c.unreadablePDUs > 0 { line += ", \(c.unreadablePDUs) unreadable" }
            if let log = c.valueLog { line += " → \(log)" }
            lines.append(line)
        }
        for (index, device) in document.devices.enumerated() {
            lines.append("")
            let title = index == 0 ? "Device" : "Also serving GATT"
            lines.append("\(title): \(device.name.map { "\"\($0)\" " } ?? "")\(device.address) (\(device.side), \(device.role))"
                + (device.mtu.map { ", ATT MTU \($0)" } ?? ""))
            lines.append("  address: " + addressNote(device))
            if let ad = device.advertising {
                lines.append("  advertising: \(ad.data)" + (ad.scanResponse.flatMap { $0.isEmpty ? nil : ", scan response \($0)" } ?? "")
                    + (ad.serviceUUIDs.isEmpty ? "" : ", services \(ad.serviceUUIDs.map(\.shortString).joined(separator: " "))"))
            } else {
                lines.append("  advertising: not in the capture (the clone advertises its name and service UUIDs)")
            }
            for service in device.services {
                lines.append("  service \(service.uuid.shortString)\(service.name.map { " \($0)" } ?? "") [0x\(hex4(service.startHandle))–0x\(hex4(service.endHandle))]"
                    + (service.inferred ? " (inferred)" : ""))
                for c in service.characteristics {
                    var line = "    0x\(hex4(c.valueHandle)) \(c.uuid.shortString)\(c.name.map { " \($0)" } ?? "") [\(c.properties.joined(separator: ","))]"
                    if c.inferred { line += " (inferred)" }
                    let counts = [("read", c.counts.reads), ("written", c.counts.writes), ("written w/o response", c.counts.writesWithoutResponse),
                                  ("notified", c.counts.notifications), ("indicated", c.counts.indications)]
                        .filter { $0.1 > 0 }.map { "\($0.0) \($0.1)×" }
                    if !counts.isEmpty { line += ": " + counts.joined(separator: ", ") }
                    lines.append(line)
                    if let value = c.value { lines.append("        value \(value)\(printable(value))") }
                    for d in c.descriptors {
                        lines.append("        descriptor 0x\(hex4(d.handle)) \(d.uuid.shortString)\(d.name.map { " \($0)" } ?? "")\(d.value.map { " = \($0)" } ?? "")")
                    }
                    if let attempt = decodeAttempt(c, in: device) {
                        if attempt.profiles.isEmpty {
                            lines.append("        decode: no known profile decodes its \(attempt.samples) value(s)")
                        } else if attempt.ownProfileDecodes {
                            let others = attempt.profiles.count - 1
                            lines.append("        decode: \(attempt.profiles[0]) (its UUID's profile) decodes all \(attempt.samples) value(s)"
                                + (attempt.firstSummary.map { ", first: \($0)" } ?? "")
                                + (others > 0 ? "; \(others) other profile(s) also parse them" : ""))
                        } else {
                            lines.append("        decode: no profile of its UUID; \(attempt.profiles.count) profile(s) parse all \(attempt.samples) value(s) "
                                + "(\(attempt.profiles.prefix(3).joined(separator: ", "))\(attempt.profiles.count > 3 ? ", …" : "")), "
                                + "a guess only: short values parse as many things")
                        }
                    }
                }
            }
            let answered = device.exchanges.filter { !$0.replies.isEmpty }
            lines.append("  writes: \(device.exchanges.count), \(answered.count) answered by notifications; timed notifications: \(device.notifications.count)")
            for exchange in answered.prefix(40) {
                let replies = exchange.replies.prefix(3).map { "0x\(hex4($0.handle)) \($0.value)" }.joined(separator: ", ")
                lines.append("    0x\(hex4(exchange.handle)) ← \(exchange.value) ⇒ \(exchange.replies.count) reply(s): \(replies)\(exchange.replies.count > 3 ? ", …" : "")")
            }
            if answered.count > 40 { lines.append("    … \(answered.count - 40) more in device.json") }
        }
        if !document.warnings.isEmpty {
            lines.append("")
            lines.append("Warnings (\(document.warnings.count)):")
            for warning in document.warnings { lines.append("  - \(warning)") }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A `bluetide shell` script that plays the central's side of `device`'s connections again
    /// against the real device: subscriptions, reads and writes in capture order, the gaps as
    /// `sleep`, and a `wait` for the notifications that answered each write.
    public static func centralScript(_ document: CloneDocument, device: ClonedDevice) -> String {
        let target = device.address + (device.addressType == "random" ? "/R" : "")
        var lines = [
            "# bluetide shell script: the central's side of the capture \(document.source.capture) with \(device.name.map { "\"\($0)\" " } ?? "")\(device.address)",
            "# written by bluetide clone; run it against the real device with",
            "#   bluetide shell \(target) < THIS-FILE",
            "# Writes are sent as captured; waits expect the notifications the device sent back.",
            "# Characteristics are named by their captured value handle (handle:0x…), so the script",
            "# drives the device, or its clone, even where UUIDs repeat or were never discovered:",
        ]
        let used = Set(device.exchanges.map(\.handle))
        for c in device.characteristics where used.contains(c.valueHandle) || c.counts.reads > 0 || c.descriptors.contains(where: { $0.uuid == .clientCharacteristicConfiguration }) {
            lines.append("#   handle:0x\(hex4(c.valueHandle)) \(c.uuid.shortString)\(c.name.map { " \($0)" } ?? "")")
        }
        struct Step { let t: Double; let line: String }
        var steps: [Step] = []
        let notifying = device.characteristics.filter { $0.properties.contains("notify") || $0.properties.contains("indicate") }
        let subscribed = notifying.filter { c in
            c.descriptors.contains { $0.uuid == .clientCharacteristicConfiguration && ($0.value ?? "0000") != "0000" }
        }
        // The shell counts the notifications of what it subscribed to: a wait expects those only.
        let heard = Set(subscribed.map(\.valueHandle))
        for c in subscribed {
            steps.append(Step(t: device.playbackOrigin ?? 0, line: "subscribe handle:0x\(hex4(c.valueHandle))"))
        }
        for exchange in device.exchanges {
            let value = exchange.value.isEmpty ? "\"\"" : "0x" + exchange.value
            steps.append(Step(t: exchange.t, line: "write handle:0x\(hex4(exchange.handle)) \(value)\(exchange.withResponse ? "" : " --without-response")"))
            let answers = exchange.replies.filter { heard.contains($0.handle) }
            if !answers.isEmpty {
                let timeout = max(5, (answers.last?.delay ?? 0) * 2 + 2)
                steps.append(Step(t: exchange.t + 0.000_001, line: "wait \(answers.count) --timeout \(format(timeout))"))
            }
        }
        for c in device.characteristics where c.counts.reads > 0 {
            // Reads are not timestamped in the model: they follow the subscriptions.
            steps.append(Step(t: device.playbackOrigin ?? 0, line: "read handle:0x\(hex4(c.valueHandle))"))
        }
        steps.sort { $0.t < $1.t }
        var previous: Double?
        for step in steps {
            if let previous, step.t - previous >= 0.05, !step.line.hasPrefix("wait") {
                lines.append("sleep \(format(min(step.t - previous, 60)))")
            }
            lines.append(step.line)
            previous = step.t
        }
        lines.append("quit")
        return lines.joined(separator: "\n") + "\n"
    }

    /// What the captured address is and how `emulate --from` serves it.
    static func addressNote(_ device: ClonedDevice) -> String {
        guard let type = device.addressType, let address = try? BluetoothAddress(device.address, type: type == "public" ? .public : .random) else {
            return "\(device.address), type not in the capture (the clone advertises from a fresh random static address)"
        }
        switch address.randomKind {
        case nil: return "\(address.string) public (the clone serves it as its virtual controller's public address; other controllers keep their own)"
        case .static?: return "\(address.string) random static (the clone serves it unchanged)"
        case .resolvablePrivate?: return "\(address.string) resolvable private (the clone serves it as the same random address, unchanged: without the device's IRK it cannot make new ones)"
        case .nonResolvablePrivate?: return "\(address.string) non-resolvable private (the clone serves it unchanged)"
        default: return "\(address.string) random of a reserved kind (the clone advertises from a fresh random static address)"
        }
    }

    static func hex4(_ value: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }

    static func format(_ seconds: Double) -> String {
        let rounded = (seconds * 1000).rounded() / 1000
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    private static func printable(_ hex: String) -> String {
        guard let bytes = try? Hex.parse(hex), !bytes.isEmpty, bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return "" }
        return " (\"\(String(decoding: bytes, as: UTF8.self))\")"
    }
}
