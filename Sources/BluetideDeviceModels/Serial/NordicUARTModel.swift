import BluetideBase
import BluetideProfiles

/// `nus`: a Nordic UART Service device whose UART is looped back: every byte written to RX
/// (6E400002, Write + Write Without Response) comes back as notifications on TX (6E400003) of
/// at most ``maximumNotificationLength`` bytes, ATT MTU − 3 once the link's MTU is known
/// (20 before). Advertises the NUS service UUID and the name "Bluetide UART".
public struct NordicUARTModel: DeviceModel, NotificationLengthAdjustable {
    /// Catalog name.
    public let name = "nus"
    /// The advertised name.
    public let localName: String
    /// Most bytes per notification (MTU − 3 of the smallest open link; 20 at first).
    public var maximumNotificationLength = SerialChunker.defaultMaxChunkSize

    /// The advertised name when none is given.
    public static let defaultName = "Bluetide UART"

    /// Builds the model; `options.localName` replaces the advertised name.
    public init(seed: UInt64 = 0, options: EmulatorOptions = EmulatorOptions()) {
        localName = options.localName ?? Self.defaultName
        stream = options.serialStream.map { NumericLineStream(series: $0, rate: options.serialStreamRate) }
    }

    public var advertising: AdvertisingHints {
        AdvertisingHints(localName: localName, serviceUUIDs: [SerialUUID.nordicUARTService])
    }

    public var services: [EmulatedService] {
        [EmulatedService(SerialUUID.nordicUARTService, [
            EmulatedCharacteristic(SerialUUID.nordicUARTRX, [.write, .writeWithoutResponse]),
            EmulatedCharacteristic(SerialUUID.nordicUARTTX, [.notify]),
        ])]
    }

    /// Numeric lines it prints by itself (``EmulatorOptions/serialStream``); nil: it only echoes.
    public var stream: NumericLineStream?

    public var tickInterval: Double { stream.map { 1 / $0.rate } ?? 1 }

    public func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? { nil }

    public mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        guard characteristic == SerialUUID.nordicUARTRX else { return .rejected(attError: EmulatedATTError.writeNotPermitted) }
        let chunker = SerialChunker(maxChunkSize: maximumNotificationLength)
        return .accepted(chunker.chunks(bytes).map { EmulatedOutput(SerialUUID.nordicUARTTX, $0) })
    }

    public mutating func tick(now: Double) -> [EmulatedOutput] {
        guard let lines = stream?.lines(now: now), !lines.isEmpty else { return [] }
        let chunker = SerialChunker(maxChunkSize: maximumNotificationLength)
        return chunker.chunks(Array(lines.joined().utf8)).map { EmulatedOutput(SerialUUID.nordicUARTTX, $0) }
    }

    public mutating func setMaximumNotificationLength(_ length: Int) {
        maximumNotificationLength = max(20, min(length, SerialChunker.maximumAttributeLength))
    }
}

/// A model whose notifications are cut to what the link carries (ATT MTU − 3 octets); the
/// server tells it the smallest MTU among its links.
public protocol NotificationLengthAdjustable {
    /// Sets the longest notification value, octets (the model clamps it to what it supports).
    mutating func setMaximumNotificationLength(_ length: Int)
}
