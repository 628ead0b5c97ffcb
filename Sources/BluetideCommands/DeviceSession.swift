import ArgumentParser
import Bluetide
import BluetideBase
import BluetideEmulation
import BluetideDeviceModels
import BluetideProfiles
import BluetideSupport
import BluetideTransport
import Foundation

/// Options every device-facing command shares: where the controller is and which emulated
/// devices to start beside it.
struct DeviceSessionOptions: ParsableArguments {
    @Option(name: .long, help: "Controller transport: \(TransportSpec.syntaxSummary)")
    var transport: String = "virtual"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Start emulated devices first, each seen at RSSI dBm: PROFILE[@RSSI][,PROFILE…] (see bluetide emulate --list). Plain virtual then uses a private link.",
            valueName: "profiles"))
    var emulate: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How to answer pairing when the device asks or a value needs it: just-works, passkey:NNNNNN (the six digits the device shows), or confirm (accept numeric comparison; the number is logged). Without it: asked at a terminal, else Just Works only. On bluez, bluetoothd asks through Bluetide's agent the same way.",
            valueName: "mode"))
    var pairing: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Bond file, so a bonded device re-encrypts without pairing (see bluetide bonds); it also fixes this computer's address, so the device recognises it. Default: $XDG_CONFIG_HOME/bluetide/bonds.json, else ~/.config/bluetide/bonds.json; with --emulate, none (emulated devices are new each run).",
            valueName: "path"))
    var bondsFile: String?
    /// The bond file this command reads and writes: `--bonds-file`, else the user's
    /// (``BondsOptions/defaultPath``), the one `bluetide bonds` lists; none with `--emulate`
    /// unless given, because emulated devices get new keys each run and a kept bond would
    /// make the next run's encryption fail.
    var bondFilePath: String? {
        bondsFile ?? (emulate == nil ? BondsOptions.defaultPath : nil)
    }

    /// The pairing mode: `--pairing` when given, else asking when someone can be asked.
    func pairingMode(canAsk: Bool) throws -> PairingMode {
        try PairingMode.choose(pairing, canAsk: canAsk)
    }

    /// The emulated devices asked for: catalog entry and the RSSI the central sees it with, dBm.
    func emulationPlan() throws -> [(descriptor: EmulatorDescriptor, rssi: Int8)] {
        guard let emulate else { return [] }
        let known = EmulatorCatalog.all.map(\.name).joined(separator: ", ")
        var plan: [(descriptor: EmulatorDescriptor, rssi: Int8)] = []
        for (index, item) in emulate.split(separator: ",").enumerated() {
            let parts = item.split(separator: "@", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let name = parts.first, let descriptor = EmulatorCatalog.named(name) else {
                throw CommandFailure("--emulate: unknown device model \"\(item)\": expected one of \(known)")
            }
            var rssi = Int8(clamping: -50 - 5 * index)
            if parts.count == 2 {
                guard let value = Int(parts[1]), (-127...20).contains(value) else {
                    throw CommandFailure("--emulate \(item): expected an RSSI in dBm after @, e.g. \(name)@-60")
                }
                rssi = Int8(value)
            }
            plan.append((descriptor, rssi))
        }
        guard !plan.isEmpty else { throw CommandFailure("--emulate: name at least one device model: \(known)") }
        return plan
    }
}

/// A central on the chosen transport, plus the emulated devices it was asked to start; closes both.
final class DeviceSession: Sendable {
    /// The host the central runs on.
    let bluetooth: Bluetooth
    /// The public-API central.
    var central: Central { bluetooth.central }
    /// Emulated devices started by `--emulate`.
    let emulated: [EmulatedPeripheral]
    /// The virtual world the emulated devices and the central share (with `--emulate`).
    let world: VirtualWorld?
    /// The transport spec the central opened (after private-link and snoop adjustments).
    let transportText: String

    /// Answers the host's pairing questions (`--pairing`, or asking).
    let prompter: PairingPrompter
    /// Names of the devices found, for pairing questions and messages.
    let labels: DeviceLabels
    /// The bond file bonds are kept in (``DeviceSessionOptions/bondFilePath``); nil when they
    /// last only as long as this command.
    let bondFile: String?
    /// The clock the central (and, with `--emulate`, the whole world) runs on: the command's
    /// waits — its `--timeout`, `--duration`, the times it prints — are measured on it.
    let clock: BluetideClock

    private init(
        bluetooth: Bluetooth, emulated: [EmulatedPeripheral], world: VirtualWorld?, transportText: String,
        prompter: PairingPrompter, labels: DeviceLabels, bondFile: String?, clock: BluetideClock
    ) {
        self.bondFile = bondFile
        self.clock = clock
        self.bluetooth = bluetooth
        self.emulated = emulated
        self.world = world
        self.transportText = transportText
        self.prompter = prompter
        self.labels = labels
    }

    /// Opens the central (with `+snoop:FILE` when `snoop` is given) and starts the emulated devices.
    /// With `--emulate` on the plain `virtual` transport, a private link is used so nothing else
    /// on the default link shows up; the capture holds the central's traffic only. Pairing
    /// questions are answered as `--pairing` says or, without it, asked through `conversation`
    /// (by default the terminal, when standard input is one); with neither, pairing is Just Works.
    /// The emulated world (radio, devices and the central) runs on `clock`: a test passes a
    /// manual clock and drives the command with ``ManualClock/advancing(step:yields:_:)``.
    /// Without `--emulate`, the central runs on `clock` (on `virtual:NAME`, a link that a test
    /// created on the same clock).
    static func open(
        _ options: DeviceSessionOptions, snoop: String? = nil,
        conversation: PairingConversation? = TerminalPairingConversation.make(),
        hint: PairingPrompter.PairingHint = .option, emulatorOptions: EmulatorOptions = EmulatorOptions(),
        clock: BluetideClock = .continuous
    ) async throws -> DeviceSession {
        let mode = try options.pairingMode(canAsk: conversation != nil)
        let labels = DeviceLabels()
        let prompter = PairingPrompter(
            mode: mode, hint: hint, conversation: conversation ?? TerminalPairingConversation.tellOnly,
            label: { labels.label($0) })
        let session = try await openSession(
            options, snoop: snoop, policy: mode.policy, prompter: prompter, labels: labels, emulatorOptions: emulatorOptions,
            clock: clock)
        let prompts = session.bluetooth.pairingPrompts
        Task { await prompter.answer(prompts) }
        return session
    }

    private static func openSession(
        _ options: DeviceSessionOptions, snoop: String?, policy: PairingPolicy, prompter: PairingPrompter, labels: DeviceLabels,
        emulatorOptions: EmulatorOptions, clock: BluetideClock
    ) async throws -> DeviceSession {
        let plan = try options.emulationPlan()
        let spec: TransportSpec
        do { spec = try TransportSpec(parsing: options.transport) } catch {
            throw CommandFailure("--transport: \(error)")
        }
        if let snoop, spec.snoopPath != nil {
            throw CommandFailure("--snoop \(snoop): the transport already has +snoop; give one of them")
        }
        let capture = spec.snoopPath ?? snoop
        var configuration = Bluetooth.Configuration(
            address: options.bondFilePath.map(BondedIdentity.address(forBondFile:)), deviceName: "bluetide", pairing: policy,
            bondFile: options.bondFilePath)
        configuration.clock = clock
        guard !plan.isEmpty else {
            if case .virtual(nil) = spec.kind {
                appLogger.warning("the virtual transport has no devices of its own: add --emulate PROFILE (see bluetide emulate --list), share one with `bluetide emulate` in another process, or pick a radio with --transport (e.g. hci-socket:0)")
            }
            let text = "\(TransportSpec(spec.kind, snoopPath: capture))"
            do {
                return DeviceSession(
                    bluetooth: try await Bluetooth.open(transport: text, configuration: configuration), emulated: [],
                    world: nil, transportText: text, prompter: prompter, labels: labels, bondFile: options.bondFilePath,
                    clock: clock)
            } catch {
                throw CommandFailure.cannotOpenTransport(text, error)
            }
        }
        guard case let .virtual(name) = spec.kind else {
            throw CommandFailure("--emulate needs a virtual transport (virtual or virtual:NAME), not \(options.transport)")
        }
        let world = VirtualWorld(linkName: name, clock: clock)
        var peripherals: [EmulatedPeripheral] = []
        for (index, item) in plan.enumerated() {
            let model = item.descriptor.make(UInt64(index), emulatorOptions)
            do {
                peripherals.append(try await world.emulate(
                    [model], address: .randomStatic(0xB1DE_0000_0000 &+ UInt64(index) &+ 1), rssi: item.rssi))
            } catch {
                await world.close()
                throw CommandFailure("\(item.descriptor.name): could not start the emulated device: \(error)")
            }
        }
        let text = world.transportSpec + (capture.map { "+snoop:\($0)" } ?? "")
        do {
            let bluetooth = try await world.openHost(configuration: configuration, snoop: capture)
            return DeviceSession(
                bluetooth: bluetooth, emulated: peripherals, world: world, transportText: text, prompter: prompter, labels: labels,
                bondFile: options.bondFilePath, clock: clock)
        } catch {
            await world.close()
            throw CommandFailure.cannotOpenTransport(text, error)
        }
    }

    /// Disconnects, stops the emulated devices and closes the transports.
    func close() async {
        await PromptShutdown.run({ [central] in await central.disconnectAll() }, force: { [bluetooth] in await PromptShutdown.forceClose(bluetooth) })
        await PromptShutdown.close(bluetooth)
        for peripheral in emulated {
            await PromptShutdown.run({ await peripheral.stop() }, force: { await PromptShutdown.forceClose(peripheral.bluetooth) })
        }
        await world?.close()
    }

    /// The address `target` gives with its type (`ADDRESS/P` or `ADDRESS/R`): connected to
    /// directly, without a scan. Nil for a name or an address without its type.
    static func typedAddress(_ target: String) -> BluetoothAddress? {
        DeviceQuery(parsing: target).typedAddress
    }

    /// Finds the device `target` names: an address (with /P or /R, connected directly; without,
    /// looked for in a scan) or an advertised name, within `timeout` seconds.
    func resolve(_ target: String, timeout: Double) async throws -> (address: BluetoothAddress, name: String?) {
        let query = DeviceQuery(parsing: target)
        if let address = query.typedAddress {
            labels.remember(address, name: nil)
            return (address, nil)
        }
        let trimmed = target.trimmingCharacters(in: .whitespaces)
        appLogger.debug("looking for \(trimmed) in a scan on \(transportText) for up to \(Self.format(timeout)) s (--timeout)")
        do {
            let advertisement = try await central.find(query, within: .seconds(timeout))
            labels.remember(advertisement.address, name: advertisement.name)
            return (advertisement.address, advertisement.name)
        } catch is DeviceNotFound {
            let seconds = Self.format(timeout)
            if query.address != nil {
                throw CommandFailure("no device at \(trimmed) seen within \(seconds) s; try `bluetide scan`")
            }
            throw CommandFailure("no device named \(trimmed) seen within \(seconds) s; try `bluetide scan`")
        } catch let error as CancellationError {
            throw error
        } catch {
            throw CommandFailure("cannot scan on \(transportText): \(error)")
        }
    }

    /// Resolves `target` and connects with `policy`, all within `timeout` seconds (the user's
    /// `--timeout`): an address with /P or /R gets the whole limit for the connection; a
    /// device looked for in a scan first gets what the scan left. The link and its set-up
    /// (MTU exchange, service discovery) share that limit, and a failure names it.
    func connect(_ target: String, timeout: Double, policy: ConnectionPolicy = .default) async throws -> (Connection, String) {
        let started = clock.now
        let (address, name) = try await resolve(target, timeout: timeout)
        let label = name.map { "\($0) (\(address))" } ?? "\(address)"
        let limit = Self.typedAddress(target) != nil ? timeout : max(timeout - seconds(since: started), 0.001)
        appLogger.debug("connecting to \(label) on \(transportText): waiting up to \(Self.format(limit)) s for it to answer, then for the MTU exchange and service discovery (--timeout \(Self.format(timeout)))")
        do {
            return (try await central.connect(to: address, timeout: .seconds(limit), policy: policy, within: .seconds(limit)), label)
        } catch let BluetideError.connectTimedOut(address, _) {
            throw CommandFailure("cannot connect to \(label): \(BluetideError.connectTimedOut(address, seconds: timeout))")
        } catch BluetideError.timedOut(let operation, _) {
            throw CommandFailure("cannot connect to \(label): \(operation) did not finish within \(Self.format(timeout)) s (--timeout); try a longer --timeout")
        } catch {
            throw CommandFailure("cannot connect to \(label): \(explain(error, address: address))")
        }
    }

    /// Seconds on the session's clock since `start`.
    func seconds(since start: BluetideClock.Instant) -> Double {
        clock.now.seconds(since: start)
    }

    /// Sleeps `seconds` on the session's clock (a `--duration`); returns early when cancelled.
    func pause(seconds: Double) async {
        try? await clock.sleep(until: clock.now.advanced(by: .seconds(seconds)), tolerance: nil)
    }

    /// Warns (one line on standard error) when `--pairing passkey:…` or `confirm` was given but
    /// the link to `connection`'s device is encrypted without authentication: the device paired
    /// Just Works (it can neither show nor type a number), so the passkey was not used.
    func warnIfNotAuthenticated(_ connection: Connection) async {
        let mode = prompter.mode
        guard mode != .justWorks, mode != .ask, await connection.securityLevel == .encrypted else { return }
        appLogger.warning("\(labels.label(connection.address)): the link is encrypted but not authenticated: the device paired Just Works (it cannot show or type a number) or its bond is from such a pairing, so --pairing \(mode) was not used")
    }

    /// `error` of an operation with the device at `address` in one line: pairing failures say
    /// what happened and what to give (``PairingFailureLine``), others as they are.
    func explain(_ error: any Error, address: BluetoothAddress?, level: SecurityLevel? = nil) -> String {
        PairingFailureLine.explain(error, device: labels.label(address), address: address, prompter: prompter, level: level)
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

/// Where a command's lines go: standard output when run, a collector in tests.
struct CommandOutput: Sendable {
    let emit: @Sendable (String) -> Void
    /// Whether the output is an interactive terminal (live tables, colours).
    var isTerminal = false

    static func standardOutput() -> CommandOutput {
        let printer = LinePrinter()
        return CommandOutput(emit: { printer.emit($0) }, isTerminal: isatty(STDOUT_FILENO) == 1)
    }
}

/// Characteristic lookup and value decoding shared by gatt/read/write/subscribe/record.
enum CharacteristicLookup {
    /// Lower-case words joined by hyphens: "Battery Level" → "battery-level".
    static func slug(_ text: String) -> String {
        text.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).joined(separator: "-")
    }

    /// Finds the characteristic `text` names (UUID, 16-bit hex, assigned name like battery-level,
    /// a profile name like heart-rate, or `handle:0x0012`, its value handle) among `services`;
    /// the error lists what exists.
    static func find(_ text: String, in services: [GATTRemoteService], device: String) throws -> (GATTServiceRange, GATTCharacteristic) {
        let all = services.flatMap { service in service.characteristics.map { (service.service, $0.characteristic) } }
        if text.lowercased().hasPrefix("handle:") {
            let digits = text.dropFirst("handle:".count)
            let hex = digits.lowercased().hasPrefix("0x") ? digits.dropFirst(2) : digits[...]
            guard let handle = UInt16(hex, radix: 16) else {
                throw CommandFailure.usage("\(text): expected a value handle in hex, e.g. handle:0x0012", field: "characteristic")
            }
            if let hit = all.first(where: { $0.1.valueHandle == handle }) { return hit }
            let list = all.map { entry -> String in
                let digits = String(entry.1.valueHandle, radix: 16, uppercase: true)
                let padding = String(repeating: "0", count: max(0, 4 - digits.count))
                return "handle:0x\(padding)\(digits) \(describe(entry.1.uuid))"
            }.joined(separator: ", ")
            throw CommandFailure("no characteristic value at \(text) on \(device); values at: \(list.isEmpty ? "none" : list)")
        }
        var wanted: BluetoothUUID?
        if let uuid = try? BluetoothUUID(text) { wanted = uuid }
        if wanted == nil, let profile = ProfileCatalog.named(text) { wanted = profile.characteristic }
        if let wanted, let hit = all.first(where: { $0.1.uuid == wanted }) { return hit }
        if wanted == nil, let hit = all.first(where: { $0.1.uuid.name.map(slug) == slug(text) }) { return hit }
        let list = all.map { describe($0.1.uuid) }.joined(separator: ", ")
        throw CommandFailure("characteristic \(text) not found on \(device); it has: \(list.isEmpty ? "none" : list)")
    }

    /// "2A37 Heart Rate Measurement" style label.
    static func describe(_ uuid: BluetoothUUID) -> String {
        let short = uuid.shortString
        return uuid.name.map { "\(short) \($0)" } ?? short
    }

    /// The profile decoder to use: `--profile NAME` or the one for the characteristic.
    static func decoder(for uuid: BluetoothUUID, profile: String?, options: ProfileOptions = ProfileOptions()) throws -> (any PacketDecoder, String)? {
        if let profile {
            guard let descriptor = ProfileCatalog.named(profile) else {
                throw CommandFailure.usage("unknown profile \"\(profile)\": expected one of \(ProfileCatalog.all.map(\.name).joined(separator: ", "))")
            }
            return (descriptor.makeDecoder(options), descriptor.name)
        }
        return ProfileCatalog.forCharacteristic(uuid).map { ($0.makeDecoder(options), $0.name) }
    }

    /// The profile to read `uuid`'s value with when it is not a known profile characteristic:
    /// plain strings for the common text characteristics.
    static func textValue(_ bytes: [UInt8], uuid: BluetoothUUID) -> String? {
        guard let name = uuid.name?.lowercased() else {
            // A vendor characteristic whose value is printable ASCII text reads best as that text.
            guard bytes.count >= 2, bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
            return "\"\(String(decoding: bytes, as: UTF8.self))\""
        }
        guard name.contains("name") || name.contains("string") || name.contains("revision") else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.allSatisfy({ !$0.isASCII || $0.isLetter || $0.isNumber || $0.isPunctuation || $0 == " " || $0.isSymbol }) ? "\"\(text)\"" : nil
    }
}

/// A decoder kept across values (stateful profiles compute speeds from deltas).
final class ValueDecoding {
    private var decoder: (any PacketDecoder)?
    let profile: String?
    let uuid: BluetoothUUID

    init(uuid: BluetoothUUID, profile: String?, options: ProfileOptions = ProfileOptions()) throws {
        self.uuid = uuid
        let found = try CharacteristicLookup.decoder(for: uuid, profile: profile, options: options)
        decoder = found?.0
        self.profile = found?.1
    }

    /// Decodes `bytes`: the summary, the JSON-able value, or the decoder's error.
    func decode(_ bytes: [UInt8], at time: Double) -> (summary: String?, value: (any Encodable & Sendable)?, error: String?) {
        guard var current = decoder else {
            return (CharacteristicLookup.textValue(bytes, uuid: uuid), nil, nil)
        }
        do {
            let packet = try current.decode(bytes, at: time)
            decoder = current
            return (packet.summary, packet.value, nil)
        } catch {
            decoder = current
            return (nil, nil, "\(error)")
        }
    }
}

/// JSON lines from mixed dictionaries (Encodable values embedded as their JSON).
enum JSONObjectLine {
    static func embed(_ value: any Encodable) -> Any {
        guard let data = try? JSONEncoder().encode(value),
              let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else { return NSNull() }
        return object
    }

    /// The line, with numbers written as every `--json` writes them (``JSONOutputValue``).
    static func line(_ object: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "{}"
        }
        guard let value = try? JSONDecoder().decode(JSONOutputValue.self, from: data) else { return String(decoding: data, as: UTF8.self) }
        return value.text
    }
}
