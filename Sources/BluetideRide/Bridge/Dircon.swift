import BluetideBase
import BluetideProfiles

/// One message of Wahoo Direct Connect (DIRCON), the GATT-like protocol apps (Zwift on Apple TV,
/// iPad and PC) speak to a trainer over TCP: a 6-byte header — version (1), message identifier,
/// sequence number, response code, payload length (big-endian) — and the payload. Requests
/// carry a sequence number the response repeats; notifications carry 0. UUIDs travel as their
/// 16 bytes, most significant first. No I/O.
public struct DirconMessage: Sendable, Hashable {
    /// Message identifiers.
    public enum Identifier: UInt8, Sendable {
        /// The services (payload of the response: their UUIDs).
        case discoverServices = 0x01
        /// A service's characteristics (request: the service UUID; response: it, then each
        /// characteristic's UUID and properties).
        case discoverCharacteristics = 0x02
        /// A characteristic's value (request: its UUID; response: it and the value).
        case readCharacteristic = 0x03
        /// Write a value (request: UUID and value; response: the UUID).
        case writeCharacteristic = 0x04
        /// Turn notifications on (1) or off (0) (request: UUID and the flag; response: the UUID).
        case enableNotifications = 0x05
        /// A notification from the trainer (UUID and value), unasked.
        case notification = 0x06
    }

    /// Response codes.
    public enum Response: UInt8, Sendable {
        case success = 0x00
        case unknownMessageType = 0x01
        case unexpectedError = 0x02
        case serviceNotFound = 0x03
        case characteristicNotFound = 0x04
        case operationNotSupported = 0x05
        case writeFailed = 0x06
        case unknownProtocol = 0x07
    }

    /// Characteristic properties as discovery reports them.
    public struct Properties: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let read = Properties(rawValue: 0x01)
        public static let write = Properties(rawValue: 0x02)
        public static let notify = Properties(rawValue: 0x04)
    }

    /// The protocol version (1).
    public var version: UInt8
    /// The message identifier (``Identifier``'s raw value; unknown ones are kept as they came).
    public var identifier: UInt8
    /// The request's sequence number, repeated in its response; 0 in notifications.
    public var sequence: UInt8
    /// The response code (0 in requests and notifications).
    public var response: UInt8
    /// The payload.
    public var payload: [UInt8]

    /// A message with these parts.
    public init(identifier: UInt8, sequence: UInt8, response: UInt8 = 0, payload: [UInt8] = [], version: UInt8 = 1) {
        self.version = version
        self.identifier = identifier
        self.sequence = sequence
        self.response = response
        self.payload = payload
    }

    /// A message of a known kind.
    public init(_ identifier: Identifier, sequence: UInt8, response: Response = .success, payload: [UInt8] = []) {
        self.init(identifier: identifier.rawValue, sequence: sequence, response: response.rawValue, payload: payload)
    }

    /// The header and payload (a payload is at most 65 535 bytes; longer ones are cut).
    public var bytes: [UInt8] {
        let length = min(payload.count, 0xFFFF)
        return [version, identifier, sequence, response, UInt8(length >> 8), UInt8(length & 0xFF)] + payload.prefix(length)
    }

    /// The UUID at `offset` of the payload (16 bytes, most significant first), when there is one.
    public func uuid(at offset: Int = 0) -> BluetoothUUID? {
        guard payload.count >= offset + 16 else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0
        for byte in payload[offset..<(offset + 8)] { high = high << 8 | UInt64(byte) }
        for byte in payload[(offset + 8)..<(offset + 16)] { low = low << 8 | UInt64(byte) }
        return BluetoothUUID(high: high, low: low)
    }
}

/// Splits the bytes of a DIRCON TCP stream into messages, however they were cut. No I/O.
public struct DirconFramer: Sendable {
    private var buffer: [UInt8] = []

    /// A framer holding nothing.
    public init() {}

    /// The whole messages `bytes` completes, in order; a partial one waits for the rest.
    public mutating func append(_ bytes: [UInt8]) -> [DirconMessage] {
        buffer += bytes
        var messages: [DirconMessage] = []
        while buffer.count >= 6 {
            let length = Int(buffer[4]) << 8 | Int(buffer[5])
            guard buffer.count >= 6 + length else { break }
            messages.append(DirconMessage(
                identifier: buffer[1], sequence: buffer[2], response: buffer[3], payload: Array(buffer[6..<(6 + length)]), version: buffer[0]))
            buffer.removeFirst(6 + length)
        }
        return messages
    }

    /// Bytes waiting for the rest of their message.
    public var pending: Int { buffer.count }
}

/// The DIRCON side of the bridge without I/O: the same services as ``RideBridge`` serves over
/// BLE (Fitness Machine, Cycling Power, Heart Rate) as a GATT-like table, each connection's
/// notification subscriptions, and the Fitness Machine Control Point under ``FTMSBridgeCore``'s
/// rules (Request Control first; one connection in control; its disconnection releases it).
/// Feed it messages with the connection they came from; it answers with messages to send and,
/// for a control point write the trainer must carry out, a command to forward.
public struct DirconBridgeCore: Sendable {
    /// What to do after a message.
    public enum Output: Sendable, Equatable {
        /// Send `message` to `connection`.
        case send(DirconMessage, to: Int)
        /// Carry out `command` on the trainer, then call ``completed(_:failure:connection:)``.
        case forward(FTMSBridgeCore.TrainerCommand, request: FitnessMachineControlPointRequest, connection: Int)
    }

    /// A characteristic of the served table.
    public struct Characteristic: Sendable, Hashable {
        /// Its UUID.
        public var uuid: BluetoothUUID
        /// What may be done with it.
        public var properties: DirconMessage.Properties
    }

    /// The served services and their characteristics, in discovery order.
    public let services: [(service: BluetoothUUID, characteristics: [Characteristic])]
    /// Values read by ``DirconMessage/Identifier/readCharacteristic``.
    private var values: [BluetoothUUID: [UInt8]]
    private var subscriptions: [Int: Set<BluetoothUUID>] = [:]
    private var ftms = FTMSBridgeCore()
    private var measurements = BridgeMeasurements()

    /// The core serving Fitness Machine, and Cycling Power and Heart Rate unless left out.
    public init(cyclingPower: Bool = true, heartRate: Bool = true) {
        var services: [(BluetoothUUID, [Characteristic])] = [(.fitnessMachine, [
            Characteristic(uuid: .fitnessMachineFeature, properties: [.read]),
            Characteristic(uuid: .indoorBikeData, properties: [.notify]),
            Characteristic(uuid: .trainingStatus, properties: [.read, .notify]),
            Characteristic(uuid: .supportedInclinationRange, properties: [.read]),
            Characteristic(uuid: .supportedResistanceLevelRange, properties: [.read]),
            Characteristic(uuid: .supportedPowerRange, properties: [.read]),
            Characteristic(uuid: .fitnessMachineControlPoint, properties: [.write, .notify]),
            Characteristic(uuid: .fitnessMachineStatus, properties: [.notify]),
        ])]
        if cyclingPower {
            services.append((.cyclingPower, [
                Characteristic(uuid: .cyclingPowerMeasurement, properties: [.notify]),
                Characteristic(uuid: .cyclingPowerFeature, properties: [.read]),
                Characteristic(uuid: .sensorLocation, properties: [.read]),
            ]))
        }
        if heartRate { services.append((.heartRate, [Characteristic(uuid: .heartRateMeasurement, properties: [.notify])])) }
        self.services = services
        values = [
            .fitnessMachineFeature: FTMSBridgeCore.feature.bytes,
            .trainingStatus: TrainingStatus(status: .idle).bytes,
            .supportedInclinationRange: FTMSBridgeCore.inclinationRange.bytes,
            .supportedResistanceLevelRange: FTMSBridgeCore.resistanceRange.bytes,
            .supportedPowerRange: FTMSBridgeCore.powerRange.bytes,
            .cyclingPowerFeature: CyclingPowerFeature.crankRevolutionData.bytes,
            // Sensor Location 13: rear hub.
            .sensorLocation: [13],
        ]
    }

    /// The connection holding control of the trainer, if any.
    public var controller: Int? { ftms.controller.map(Int.init) }

    private func characteristic(_ uuid: BluetoothUUID) -> Characteristic? {
        for service in services { if let found = service.characteristics.first(where: { $0.uuid == uuid }) { return found } }
        return nil
    }

    /// What to do with `message` from `connection`.
    public mutating func receive(_ message: DirconMessage, from connection: Int) -> [Output] {
        func reply(_ response: DirconMessage.Response, _ payload: [UInt8] = []) -> [Output] {
            [.send(DirconMessage(identifier: message.identifier, sequence: message.sequence, response: response.rawValue, payload: payload), to: connection)]
        }
        guard message.version == 1 else { return reply(.unknownProtocol) }
        guard let identifier = DirconMessage.Identifier(rawValue: message.identifier), identifier != .notification else {
            return reply(.unknownMessageType)
        }
        switch identifier {
        case .discoverServices:
            return reply(.success, services.flatMap(\.service.bigEndianBytes))
        case .discoverCharacteristics:
            guard let uuid = message.uuid(), let service = services.first(where: { $0.service == uuid }) else {
                return reply(.serviceNotFound, message.payload)
            }
            return reply(.success, uuid.bigEndianBytes + service.characteristics.flatMap { $0.uuid.bigEndianBytes + [$0.properties.rawValue] })
        case .readCharacteristic:
            guard let uuid = message.uuid(), let found = characteristic(uuid) else { return reply(.characteristicNotFound, message.payload) }
            guard found.properties.contains(.read) else { return reply(.operationNotSupported, uuid.bigEndianBytes) }
            return reply(.success, uuid.bigEndianBytes + (values[uuid] ?? []))
        case .enableNotifications:
            guard let uuid = message.uuid(), let found = characteristic(uuid) else { return reply(.characteristicNotFound, message.payload) }
            guard found.properties.contains(.notify), message.payload.count == 17 else { return reply(.operationNotSupported, uuid.bigEndianBytes) }
            if message.payload[16] != 0 { subscriptions[connection, default: []].insert(uuid) } else { subscriptions[connection]?.remove(uuid) }
            return reply(.success, uuid.bigEndianBytes)
        case .writeCharacteristic:
            guard let uuid = message.uuid(), let found = characteristic(uuid) else { return reply(.characteristicNotFound, message.payload) }
            guard found.properties.contains(.write) else { return reply(.operationNotSupported, uuid.bigEndianBytes) }
            // The write is taken; the control point's answer follows as its notification.
            let taken = reply(.success, uuid.bigEndianBytes)
            switch ftms.receive(Array(message.payload.dropFirst(16)), from: UInt16(truncatingIfNeeded: connection)) {
            case let .forward(command, request):
                return taken + [.forward(command, request: request, connection: connection)]
            case let .answer(response, statuses):
                return taken + answer(response, statuses: statuses, to: connection)
            }
        case .notification:
            return reply(.unknownMessageType)
        }
    }

    /// The answer to a forwarded control point request once the trainer confirmed it (`failure`
    /// nil) or refused it: the control point's response to `connection`, status changes to
    /// every subscriber.
    public mutating func completed(_ request: FitnessMachineControlPointRequest, failure: String?, connection: Int) -> [Output] {
        guard case let .answer(response, statuses) = ftms.completed(request, failure: failure) else { return [] }
        return answer(response, statuses: statuses, to: connection)
    }

    private mutating func answer(_ response: FitnessMachineControlPointResponse, statuses: [FitnessMachineStatus], to connection: Int) -> [Output] {
        // The response goes to the writer (FTMS indicates it to the app that wrote), subscribed or not.
        var outputs: [Output] = [.send(Self.notification(.fitnessMachineControlPoint, response.bytes), to: connection)]
        for status in statuses { outputs += notify(.fitnessMachineStatus, status.bytes) }
        let training = ftms.trainingStatus.bytes
        if values[.trainingStatus] != training {
            values[.trainingStatus] = training
            outputs += notify(.trainingStatus, training)
        }
        return outputs
    }

    /// The notifications for one ride sample (tick samples only, as a trainer sends at 1 Hz):
    /// Indoor Bike Data, and Cycling Power and Heart Rate measurements when the sample has them,
    /// to each connection subscribed to them.
    public mutating func publish(_ sample: RideSample) -> [Output] {
        guard sample.trigger == .tick else { return [] }
        let values = measurements.values(for: sample)
        var outputs = notify(.indoorBikeData, values.indoorBikeData.bytes)
        if let power = values.cyclingPower, characteristic(.cyclingPowerMeasurement) != nil { outputs += notify(.cyclingPowerMeasurement, power.bytes) }
        if let heart = values.heartRate, characteristic(.heartRateMeasurement) != nil { outputs += notify(.heartRateMeasurement, heart.bytes) }
        return outputs
    }

    /// `connection` closed: its subscriptions end and it no longer holds control.
    public mutating func disconnected(_ connection: Int) {
        subscriptions[connection] = nil
        ftms.disconnected(UInt16(truncatingIfNeeded: connection))
    }

    private func notify(_ uuid: BluetoothUUID, _ value: [UInt8]) -> [Output] {
        subscriptions.keys.sorted().compactMap { connection in
            subscriptions[connection]?.contains(uuid) == true ? .send(Self.notification(uuid, value), to: connection) : nil
        }
    }

    static func notification(_ uuid: BluetoothUUID, _ value: [UInt8]) -> DirconMessage {
        DirconMessage(.notification, sequence: 0, payload: uuid.bigEndianBytes + value)
    }
}
