import BluetideBase
import BluetideProfiles

/// `hm10`: an HM-10 serial module (HMSoft firmware) whose UART is looped back: every byte
/// written to FFE1 comes back as notifications of at most 20 bytes, as a module with TX wired to
/// RX would send it. FFE1 is Read + Write Without Response + Notify (properties 0x16).
///
/// AT commands (uppercase, no CR/LF; a trailing CR/LF is tolerated) written over the air are
/// answered the way the module answers them on its UART, when ``answersATCommands`` is on
/// (default): `AT` → `OK`, `AT+NAME?` → `OK+NAME:HMSoft`, `AT+NAMExxx` → `OK+Set:xxx` (the
/// advertised name changes), `AT+ADDR?` → `OK+ADDR:…`, `AT+VERS?`/`AT+VERR?` → `HMSoft V540`,
/// `AT+BAUD?` → `OK+Get:0`, `AT+BAUDn` → `OK+Set:n`, `AT+ROLE?`/`AT+MODE?`/`AT+NOTI?` and
/// their setters, `AT+RESET` → `OK+RESET`, `AT+RENEW` → `OK+RENEW`. Anything else is echoed.
/// (A real module parses AT only from its UART while not connected; over the air it is
/// transparent. ``uartCommand(_:connected:)`` gives that exact behaviour for the host side.)
public struct HM10Model: DeviceModel {
    /// Catalog name.
    public let name = "hm10"
    /// Whether AT commands written over the air are answered (else everything is echoed).
    public var answersATCommands = true
    /// Module name (`AT+NAME`), also the advertised name.
    public private(set) var moduleName: String
    /// Module address as the `AT+ADDR?` answer prints it (12 hex digits).
    public let address: String
    /// Baud rate index (`AT+BAUD`), 0 = 9600.
    public private(set) var baudIndex = 0
    /// Role (`AT+ROLE`), 0 = peripheral.
    public private(set) var role = 0
    /// Work mode (`AT+MODE`), 0 = transmit.
    public private(set) var mode = 0
    /// Connection notices (`AT+NOTI`), 0 = off.
    public private(set) var notice = 0
    private var lastValue: [UInt8] = []
    private let chunker = SerialChunker()

    /// Builds the model: `seed` fixes its randomness, `options` its rider and device settings.
    public init(seed: UInt64 = 0, options: EmulatorOptions = EmulatorOptions()) {
        moduleName = options.localName ?? SerialUUID.hm10DefaultName
        stream = options.serialStream.map { NumericLineStream(series: $0, rate: options.serialStreamRate) }
        var g = SeededGenerator(seed: seed)
        let bits = g.next() & 0xFFFF_FFFF_FFFF
        address = (0..<6).map { i in
            let byte = UInt8(truncatingIfNeeded: bits >> UInt64(8 * (5 - i)))
            return [byte].hexString.uppercased()
        }.joined()
    }

    public var advertising: AdvertisingHints {
        AdvertisingHints(localName: moduleName, serviceUUIDs: [SerialUUID.hm10Service])
    }

    public var services: [EmulatedService] {
        [EmulatedService(SerialUUID.hm10Service, [
            EmulatedCharacteristic(SerialUUID.hm10Data, [.read, .writeWithoutResponse, .notify])
        ])]
    }

    /// Numeric lines it prints by itself (``EmulatorOptions/serialStream``); nil: it only echoes.
    public var stream: NumericLineStream?

    public var tickInterval: Double { stream.map { 1 / $0.rate } ?? 1 }

    public func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? {
        characteristic == SerialUUID.hm10Data ? lastValue : nil
    }

    public mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        guard characteristic == SerialUUID.hm10Data else { return .rejected(attError: EmulatedATTError.writeNotPermitted) }
        lastValue = bytes
        var reply = bytes
        if answersATCommands, let answer = answer(String(decoding: bytes, as: UTF8.self), connected: false) {
            reply = Array(answer.utf8)
        }
        return .accepted(chunker.chunks(reply).map { EmulatedOutput(SerialUUID.hm10Data, $0) })
    }

    public mutating func tick(now: Double) -> [EmulatedOutput] {
        guard let lines = stream?.lines(now: now), !lines.isEmpty else { return [] }
        let chunker = self.chunker
        return chunker.chunks(Array(lines.joined().utf8)).map { EmulatedOutput(SerialUUID.hm10Data, $0) }
    }

    /// The module's answer to an AT command arriving on its UART, or nil when it is not an AT
    /// command it knows. While `connected`, `AT` drops the link and answers `OK+LOST`.
    public mutating func uartCommand(_ text: String, connected: Bool) -> String? {
        answer(text, connected: connected)
    }

    private mutating func answer(_ raw: String, connected: Bool) -> String? {
        var text = Substring(raw)
        while let last = text.last, last.isNewline { text = text.dropLast() }
        guard text.hasPrefix("AT") else { return nil }
        let command = String(text)
        if command == "AT" { return connected ? "OK+LOST" : "OK" }
        guard command.hasPrefix("AT+") else { return nil }
        let body = String(command.dropFirst(3))
        switch body {
        case "NAME?": return "OK+NAME:\(moduleName)"
        case "ADDR?": return "OK+ADDR:\(address)"
        case "VERS?", "VERR?": return "HMSoft V540"
        case "BAUD?": return "OK+Get:\(baudIndex)"
        case "ROLE?": return "OK+Get:\(role)"
        case "MODE?": return "OK+Get:\(mode)"
        case "NOTI?": return "OK+Get:\(notice)"
        case "RESET": return "OK+RESET"
        case "RENEW":
            moduleName = SerialUUID.hm10DefaultName
            baudIndex = 0; role = 0; mode = 0; notice = 0
            return "OK+RENEW"
        default: break
        }
        if body.hasPrefix("NAME") {
            let newName = String(body.dropFirst(4).prefix(12))
            guard !newName.isEmpty else { return nil }
            moduleName = newName
            return "OK+Set:\(newName)"
        }
        for (prefix, range) in [("BAUD", 0...8), ("ROLE", 0...1), ("MODE", 0...2), ("NOTI", 0...1)] where body.hasPrefix(prefix) {
            guard let value = Int(body.dropFirst(prefix.count)), range.contains(value) else { return nil }
            switch prefix {
            case "BAUD": baudIndex = value
            case "ROLE": role = value
            case "MODE": mode = value
            default: notice = value
            }
            return "OK+Set:\(value)"
        }
        return nil
    }
}
