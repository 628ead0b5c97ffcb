import Bluetide
import BluetideBase
import BluetideSupport
import Foundation
import Synchronization

/// What `bluetide shell` does with each request, on one connection to one device: replies and
/// notifications go to `output` as readable lines or (with `json`) one JSON object each.
actor ShellSession {
    private let devices: DeviceSession
    private let target: String
    private let timeout: Double
    private let json: Bool
    private let output: CommandOutput
    /// When the shell started, on the session's clock (the times it prints count from here).
    private let start: BluetideClock.Instant

    private var connection: Connection?
    private var address: BluetoothAddress?
    private var name: String?
    private var services: [GATTRemoteService] = []
    private var subscriptions: [BluetoothUUID: Task<Void, Never>] = [:]
    private var decoders: [BluetoothUUID: ValueDecoding] = [:]
    private var watcher: Task<Void, Never>?
    private var notificationTick: AsyncStream<Void>.Continuation?
    /// Notifications printed so far, and how many of them a `wait` may no longer count: those
    /// printed before the latest other command began (a reply that raced ahead of `wait`, e.g.
    /// a control point's indication, still counts) or already counted by an earlier `wait`.
    private var notificationsPrinted = 0
    private var notificationsCounted = 0
    /// What Tab offers, updated as services are discovered.
    private let completions: ShellCompletions

    init(devices: DeviceSession, target: String, timeout: Double, json: Bool, output: CommandOutput, completions: ShellCompletions = ShellCompletions()) {
        self.completions = completions
        self.devices = devices
        self.start = devices.clock.now
        self.target = target
        self.timeout = timeout
        self.json = json
        self.output = output
    }

    private var label: String {
        guard let address else { return target }
        return name.map { "\($0) (\(address))" } ?? "\(address)"
    }

    private var now: Double { devices.seconds(since: start) }

    // MARK: Connection

    /// Finds the device, connects, discovers its services and re-subscribes what was subscribed.
    func connect() async throws {
        if address == nil {
            let found = try await devices.resolve(target, timeout: timeout)
            (address, name) = (found.address, found.name ?? name)
        }
        guard let address else { return }
        let connection: Connection
        // --timeout also bounds the set-up (MTU exchange, discovery), never below the policy's
        // own 10 s: a slow device or a busy machine given a longer --timeout gets it there too.
        var policy = ConnectionPolicy.default
        policy.setupTimeout = max(policy.setupTimeout, .seconds(timeout))
        do { connection = try await devices.central.connect(to: address, timeout: .seconds(max(timeout, 5)), policy: policy) } catch {
            throw CommandFailure("cannot connect to \(label): \(error); try `reconnect`, or check the device is advertising with `bluetide scan`")
        }
        self.connection = connection
        appLogger.info("connected to \(label)")
        do { services = try await connection.services() } catch {
            throw CommandFailure("discovering services of \(label) failed: \(error)")
        }
        updateCompletionNames()
        watch(connection)
        reply("connected", ["device": deviceJSON, "time": JSONOutput.time(monotonic: now)], "connected to \(label)")
        let resubscribe = Array(subscriptions.keys)
        for task in subscriptions.values { task.cancel() }
        subscriptions = [:]
        for uuid in resubscribe { try await subscribe(uuid) }
    }

    private var deviceJSON: JSONOutputValue {
        address.map { JSONOutput.device($0, name: name) } ?? ["address": .string(target)]
    }

    private func watch(_ connection: Connection) {
        watcher?.cancel()
        watcher = Task { [weak self] in
            for await event in connection.events {
                if case let .disconnected(reason) = event {
                    await self?.linkLost("\(reason)", connection: connection)
                }
            }
        }
    }

    private func linkLost(_ reason: String, connection lost: Connection) {
        guard connection === lost else { return }
        connection = nil
        reply("disconnected", ["device": deviceJSON, "reason": .string(reason), "time": JSONOutput.time(monotonic: now)],
              "link to \(label) lost: \(reason) (type reconnect)")
    }

    private func requireConnection() throws -> Connection {
        guard let connection else { throw CommandFailure("not connected to \(label); type reconnect") }
        return connection
    }

    /// Disconnects and stops every subscription.
    func close() async {
        watcher?.cancel()
        for task in subscriptions.values { task.cancel() }
        subscriptions = [:]
        await connection?.disconnect()
        connection = nil
    }

    // MARK: Requests

    /// Runs one request; false when it asks to leave.
    func perform(_ request: ShellRequest) async throws -> Bool {
        if case .wait = request {} else { notificationsCounted = notificationsPrinted }
        switch request {
        case .quit: return false
        case .help: help()
        case .services: try listServices()
        case let .read(text): try await read(text)
        case let .write(text, value, withResponse): try await write(text, value: value, withResponse: withResponse)
        case let .forms(text): try listForms(text)
        case let .subscribe(text):
            let characteristic = try find(text)
            guard !characteristic.properties.isDisjoint(with: [.notify, .indicate]) else {
                throw CommandFailure("\(CharacteristicLookup.describe(characteristic.uuid)) does not notify or indicate (it is \(GATTCommand.properties(characteristic.properties).joined(separator: ", ")))")
            }
            try await subscribe(characteristic.uuid)
        case let .unsubscribe(text):
            let uuid = try find(text).uuid
            guard let task = subscriptions.removeValue(forKey: uuid) else {
                throw CommandFailure("not subscribed to \(CharacteristicLookup.describe(uuid)); subscribed: \(subscribedList)")
            }
            task.cancel()
            reply("unsubscribed", ["characteristic": JSONOutput.characteristic(uuid)], "unsubscribed from \(CharacteristicLookup.describe(uuid))")
        case let .mtu(request):
            let connection = try requireConnection()
            var mtu = await connection.mtu
            if let request {
                do { mtu = try await connection.requestMTU(request) } catch {
                    throw CommandFailure("MTU exchange failed: \(error)")
                }
            }
            reply("mtu", ["mtu": .integer(Int64(mtu))], "ATT MTU \(mtu) octets")
        case .rssi:
            let rssi: Int
            do { rssi = try await requireConnection().rssi() } catch let failure as CommandFailure { throw failure } catch {
                throw CommandFailure("reading the RSSI failed: \(error)")
            }
            reply("rssi", ["rssiDbm": .integer(Int64(rssi))], "RSSI \(rssi) dBm")
        case .info: await info()
        case .disconnect:
            let connection = try requireConnection()
            self.connection = nil
            await connection.disconnect()
            reply("disconnected", ["device": deviceJSON, "reason": "requested", "time": JSONOutput.time(monotonic: now)], "disconnected from \(label)")
        case .reconnect:
            if let connection { self.connection = nil; await connection.disconnect() }
            try await connect()
        case let .pair(mode): try await pair(mode)
        case let .wait(count, seconds): try await wait(for: count, timeout: seconds)
        case let .sleep(seconds): try await devices.clock.sleep(until: devices.clock.now.advanced(by: .seconds(seconds)), tolerance: nil)
        }
        return true
    }

    private func find(_ text: String) throws -> GATTCharacteristic {
        try CharacteristicLookup.find(text, in: services, device: label).1
    }

    private var subscribedList: String {
        subscriptions.isEmpty ? "none" : subscriptions.keys.map(CharacteristicLookup.describe).sorted().joined(separator: ", ")
    }

    private func help() {
        if json {
            for command in ShellRequest.commands {
                output.emit(JSONOutput.line("help", ["command": .string(command.name), "syntax": .string(command.syntax), "summary": .string(command.summary)]))
            }
            return
        }
        let width = ShellRequest.commands.map { ($0.name + " " + $0.syntax).count }.max() ?? 0
        for command in ShellRequest.commands {
            let usage = command.name + " " + command.syntax
            output.emit("  " + usage + String(repeating: " ", count: width - usage.count) + "  " + command.summary)
        }
        output.emit("CHAR is a name (heart-rate-measurement, or a profile: heart-rate), 16-bit hex (2A37) or a UUID; Tab completes.")
    }

    private func listServices() throws {
        _ = try requireConnection()
        for service in services {
            if json {
                for item in service.characteristics {
                    let characteristic = item.characteristic
                    output.emit(JSONOutput.line("characteristic", [
                        "device": deviceJSON,
                        "service": JSONOutput.characteristic(service.service.uuid),
                        "characteristic": JSONOutput.characteristic(characteristic.uuid),
                        "properties": .array(GATTCommand.properties(characteristic.properties).map { .string($0) }),
                        "handle": .integer(Int64(characteristic.valueHandle)),
                    ]))
                }
                continue
            }
            output.emit("service \(CharacteristicLookup.describe(service.service.uuid))")
            for item in service.characteristics {
                let characteristic = item.characteristic
                let properties = GATTCommand.properties(characteristic.properties).joined(separator: ", ")
                output.emit("  \(CharacteristicLookup.describe(characteristic.uuid))  [\(properties)]")
            }
        }
    }

    private func read(_ text: String) async throws {
        let connection = try requireConnection()
        let characteristic = try find(text)
        guard characteristic.properties.contains(.read) else {
            throw CommandFailure("\(CharacteristicLookup.describe(characteristic.uuid)) is not readable (it is \(GATTCommand.properties(characteristic.properties).joined(separator: ", ")))")
        }
        let bytes: [UInt8]
        do { bytes = try await connection.read(characteristic.uuid) } catch {
            throw CommandFailure("reading \(CharacteristicLookup.describe(characteristic.uuid)) failed: \(error)")
        }
        try show("read", characteristic.uuid, bytes, decoding: ValueDecoding(uuid: characteristic.uuid, profile: nil))
    }

    private func write(_ text: String, value: String, withResponse: Bool) async throws {
        let connection = try requireConnection()
        let (service, characteristic) = try CharacteristicLookup.find(text, in: services, device: label)
        let what = CharacteristicLookup.describe(characteristic.uuid)
        let forms = WriteFormCatalog.forms(for: characteristic.uuid, in: service.uuid)
        let bytes: [UInt8]
        do { bytes = try ShellValue.bytes(value, forms: forms, characteristic: what) } catch {
            throw CommandFailure.usage(error.message, field: "VALUE")
        }
        let needed: GATTCharacteristicProperties = withResponse ? .write : .writeWithoutResponse
        guard characteristic.properties.contains(needed) else {
            let hint = withResponse && characteristic.properties.contains(.writeWithoutResponse) ? "; add --without-response" : ""
            throw CommandFailure("\(what) does not allow \(withResponse ? "write with response" : "write without response") (it is \(GATTCommand.properties(characteristic.properties).joined(separator: ", ")))\(hint)")
        }
        do { try await connection.write(RawBytes(bytes), to: characteristic.uuid, withResponse: withResponse) } catch {
            throw CommandFailure("writing \(what) failed: \(error)")
        }
        let written = ShellValue.written(bytes, to: characteristic.uuid, at: now)
        let fields: [String: JSONOutputValue] = [
            "characteristic": JSONOutput.characteristic(characteristic.uuid), "value": written.json,
            "withResponse": .bool(withResponse), "time": JSONOutput.time(monotonic: now),
        ]
        let readable = written.summary.map { ": " + $0 } ?? ""
        reply("written", fields, "wrote \(bytes.count) byte\(bytes.count == 1 ? "" : "s") to \(what)\(readable)  [\(bytes.spacedHex)]")
    }

    private func listForms(_ text: String) throws {
        let (service, characteristic) = try CharacteristicLookup.find(text, in: services, device: label)
        let what = CharacteristicLookup.describe(characteristic.uuid)
        let forms = WriteFormCatalog.forms(for: characteristic.uuid, in: service.uuid)
        if json {
            for form in forms {
                output.emit(JSONOutput.line("write-form", [
                    "characteristic": JSONOutput.characteristic(characteristic.uuid), "form": .string(form.name),
                    "syntax": .string(form.syntax), "summary": .string(form.summary),
                ]))
            }
            if forms.isEmpty {
                output.emit(JSONOutput.line("write-form", ["characteristic": JSONOutput.characteristic(characteristic.uuid), "form": .null]))
            }
            return
        }
        guard !forms.isEmpty else {
            output.emit("\(what): no typed forms; write hex (01FF), \"text\" or a number (u8:1, u16:500, s16:-2)")
            return
        }
        output.emit("write \(what) takes (or hex, \"text\", u8:/u16:/s16:/u32:/s32: numbers):")
        let width = forms.map(\.usage.count).max() ?? 0
        for form in forms {
            output.emit("  " + form.usage + String(repeating: " ", count: width - form.usage.count) + "  " + form.summary)
        }
    }

    private func subscribe(_ uuid: BluetoothUUID) async throws {
        let connection = try requireConnection()
        guard subscriptions[uuid] == nil else {
            throw CommandFailure("already subscribed to \(CharacteristicLookup.describe(uuid))")
        }
        let values: AsyncThrowingStream<[UInt8], any Error>
        do { values = try await connection.notifications(of: uuid) } catch {
            throw CommandFailure("subscribing to \(CharacteristicLookup.describe(uuid)) failed: \(error)")
        }
        decoders[uuid] = try ValueDecoding(uuid: uuid, profile: nil)
        subscriptions[uuid] = Task { [weak self] in
            do {
                for try await bytes in values { await self?.notified(uuid, bytes) }
            } catch {
                appLogger.debug("notifications of \(uuid) ended: \(error)")
            }
        }
        reply("subscribed", ["characteristic": JSONOutput.characteristic(uuid)], "subscribed to \(CharacteristicLookup.describe(uuid))")
    }

    private func notified(_ uuid: BluetoothUUID, _ bytes: [UInt8]) {
        guard subscriptions[uuid] != nil, let decoding = decoders[uuid] else { return }
        try? show("notification", uuid, bytes, decoding: decoding)
        notificationsPrinted += 1
        notificationTick?.yield()
    }

    private func wait(for count: Int, timeout seconds: Double) async throws {
        guard !subscriptions.isEmpty else { throw CommandFailure("wait: nothing is subscribed; subscribe CHAR first") }
        let target = notificationsCounted + count
        let missing = target - notificationsPrinted
        defer { notificationsCounted = min(target, notificationsPrinted) }
        guard missing > 0 else { return }
        let (ticks, sink) = AsyncStream<Void>.makeStream()
        notificationTick = sink
        defer { notificationTick = nil; sink.finish() }
        let arrived = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                var seen = 0
                for await _ in ticks {
                    seen += 1
                    if seen >= missing { return true }
                }
                return false
            }
            group.addTask { [devices] in
                await devices.pause(seconds: seconds)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            sink.finish()
            return first
        }
        guard arrived else {
            throw CommandFailure("wait: fewer than \(count) notification\(count == 1 ? "" : "s") within \(DeviceSession.format(seconds)) s")
        }
    }

    /// Pairs the link, or encrypts it from the stored bond, answering questions with `mode`
    /// (else as the shell answers them); one line (or a `paired` record) says the outcome.
    private func pair(_ mode: PairingMode?) async throws {
        let connection = try requireConnection()
        let prompter = devices.prompter
        let previous = prompter.mode
        if let mode { prompter.use(mode) }
        defer { prompter.use(previous) }
        let bondedBefore = await isBonded(connection.address)
        let levelBefore = await connection.securityLevel
        let level: SecurityLevel
        do { level = try await connection.pair() } catch {
            throw CommandFailure(devices.explain(error, address: connection.address))
        }
        let bonded = await isBonded(connection.address)
        // What happened: nothing (already secure), encryption with the stored keys, or pairing.
        let (outcome, text): (String, String) =
            levelBefore > .none ? ("already-secure", "the link to \(label) is already \(level)")
            : bondedBefore ? ("encrypted-from-bond", "encrypted from the stored bond with \(label): \(level)")
            : ("paired", "paired with \(label): \(level)")
        var fields: [String: JSONOutputValue] = [
            "device": deviceJSON, "outcome": .string(outcome), "securityLevel": .integer(Int64(level.rawValue)),
            "security": .string("\(level)"), "bonded": .bool(bonded), "time": JSONOutput.time(monotonic: now),
        ]
        if bonded, let file = devices.bondFile { fields["bondsFile"] = .string(file) }
        // Say where the bond is kept, or that it is not (emulated devices are new each run).
        let kept = !bonded ? "not bonded" : devices.bondFile.map { "bonded (kept in \($0))" } ?? "bonded for this run only (bonds with emulated devices are not kept)"
        reply("paired", fields, "\(text), \(kept)")
    }

    private func isBonded(_ address: BluetoothAddress) async -> Bool {
        await devices.bluetooth.bonds().contains { $0.address.value == address.value }
    }

    private func info() async {
        let mtu = await connection?.mtu
        var fields: [String: JSONOutputValue] = [
            "device": deviceJSON, "connected": .bool(connection != nil),
            "subscriptions": .array(subscriptions.keys.sorted { "\($0)" < "\($1)" }.map(JSONOutput.characteristic)),
            "transport": .string(devices.transportText),
        ]
        if let mtu { fields["mtu"] = .integer(Int64(mtu)) }
        reply("info", fields, "\(label): \(connection == nil ? "disconnected" : "connected") on \(devices.transportText), MTU \(mtu.map(String.init) ?? "–"), subscribed: \(subscribedList)")
    }

    // MARK: Output

    private func show(_ type: String, _ uuid: BluetoothUUID, _ bytes: [UInt8], decoding: ValueDecoding) throws {
        let time = now
        let decoded = decoding.decode(bytes, at: time)
        if json {
            output.emit(JSONOutput.line(type, [
                "device": deviceJSON, "characteristic": JSONOutput.characteristic(uuid), "time": JSONOutput.time(monotonic: time),
                "value": JSONOutput.value(bytes, decoded: decoded.value, profile: decoding.profile, summary: decoded.summary, decodeError: decoded.error),
            ]))
            return
        }
        let what = CharacteristicLookup.describe(uuid)
        let text = decoded.summary ?? decoded.error.map { "does not decode as \(decoding.profile ?? "?"): \($0)" }
        let arrow = type == "notification" ? "← " : ""
        output.emit("\(arrow)\(what): \(text.map { "\($0)  [\(bytes.spacedHex)]" } ?? bytes.spacedHex)")
    }

    private func reply(_ type: String, _ fields: [String: JSONOutputValue], _ text: String) {
        output.emit(json ? JSONOutput.line(type, fields) : text)
    }

    // MARK: Completion

    private func updateCompletionNames() {
        completions.update(with: services)
    }
}

/// What Tab completes in the shell: command names first, then characteristics (assigned names,
/// profile names, 16-bit UUIDs) of the connected device, then after `write CHAR` the typed
/// forms of that characteristic's profile and, for a form that takes one of a few words, those
/// words. Read by the terminal while typing.
final class ShellCompletions: Sendable {
    private struct Names {
        var characteristics: [String] = []
        /// Write forms by every name a characteristic is typed as (lower-cased).
        var forms: [String: [WriteForm]] = [:]
    }

    private let names = Mutex(Names())

    /// Takes the characteristic names of `services`.
    func update(with services: [GATTRemoteService]) {
        var found: Set<String> = []
        var forms: [String: [WriteForm]] = [:]
        for service in services {
            for item in service.characteristics {
                let uuid = item.characteristic.uuid
                var spellings = [uuid.shortString, "\(uuid)"]
                if let name = uuid.name { spellings.append(CharacteristicLookup.slug(name)) }
                if let profile = ProfileCatalog.forCharacteristic(uuid) { spellings.append(profile.name) }
                found.formUnion(spellings.dropFirst(2))
                found.insert(uuid.shortString)
                let typed = WriteFormCatalog.forms(for: uuid, in: service.service.uuid)
                if !typed.isEmpty {
                    for spelling in spellings { forms[spelling.lowercased()] = typed }
                }
            }
        }
        names.withLock { $0 = Names(characteristics: found.sorted(), forms: forms) }
    }

    /// The candidates for the word after `previousWords`.
    func candidates(previousWords: [String], word: String) -> [String] {
        guard let command = previousWords.first?.lowercased() else { return ShellRequest.commands.map(\.name) }
        if command == "pair" { return previousWords.count == 1 ? ["just-works", "passkey:", "confirm"] : [] }
        let takesCharacteristic = ["read", "write", "subscribe", "sub", "unsubscribe", "unsub", "forms"].contains(command)
        if takesCharacteristic, previousWords.count == 1 { return names.withLock { $0.characteristics } }
        guard command == "write", previousWords.count >= 2 else { return [] }
        let characteristic = ShellWords.unquoted(previousWords[1]).lowercased()
        let forms = names.withLock { $0.forms[characteristic] ?? [] }
        if previousWords.count == 2 { return forms.map(\.name) }
        // The first argument of a form that takes one of a few words (location, spin-down).
        guard previousWords.count == 3 else { return [] }
        return forms.first { $0.name == previousWords[2].lowercased() }?.choices ?? []
    }
}
