import BluetideBase
import BluetideHCI
import BluetideHost
import Foundation

/// Why a Bluetide API call failed. Each description says what happened and, where it helps,
/// what to try.
public enum BluetideError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The transport spec could not be opened; the text is the transport's error.
    case transportUnavailable(spec: String, reason: String)
    /// No connection to the device within the time limit, seconds.
    case connectTimedOut(BluetoothAddress, seconds: Double)
    /// The controller refused or failed to make the connection; `reason` says why.
    case connectFailed(BluetoothAddress, reason: String)
    /// The central already has `limit` connections (``Central/maximumConnections``).
    case tooManyConnections(limit: Int)
    /// The characteristic does not exist on the device; `services` lists the services that do.
    case characteristicNotFound(BluetoothUUID, services: [BluetoothUUID])
    /// The characteristic has no descriptor of that type; `descriptors` lists the ones it has.
    case descriptorNotFound(BluetoothUUID, characteristic: BluetoothUUID, descriptors: [BluetoothUUID])
    /// The device refused the operation with an ATT error. Insufficient Authorization (0x08)
    /// means the device's owner has not allowed this central; pairing does not change that.
    case attError(ATTErrorCode, characteristic: BluetoothUUID, operation: String)
    /// A write without response is limited to MTU − 3 octets, and any value to 512 octets.
    case valueTooLong(BluetoothUUID, length: Int, maximum: Int)
    /// The characteristic can neither notify nor indicate.
    case notSubscribable(BluetoothUUID)
    /// The characteristic says it notifies or indicates, but has no Client Characteristic
    /// Configuration descriptor (0x2902) to switch that on, so it cannot be subscribed to.
    case noClientConfiguration(BluetoothUUID)
    /// A value received from the characteristic could not be decoded as the requested type.
    case decodingFailed(BluetoothUUID, type: String, DecodingError)
    /// An operation got no answer within its time limit, seconds.
    case timedOut(operation: String, seconds: Double)
    /// The connection is closed for good (by the user, or the link was lost and not restored).
    case disconnected(reason: DisconnectReason)
    /// Reconnecting after a link loss failed `attempts` times; the text is the last error.
    case reconnectFailed(attempts: Int, lastError: String)
    /// The ATT MTU can be exchanged once per connection; it already was, to `current` octets.
    case mtuAlreadyExchanged(current: Int)
    /// A name pattern in a scan filter is not a valid regular expression.
    case invalidNamePattern(String, reason: String)
    /// A value given to the API is out of range.
    case invalidArgument(String)
    /// The device broke the ATT protocol: a response that answers no request, or not the one
    /// outstanding, or does not fit it (handles outside the range asked for, backwards ranges,
    /// a value handle that is not the characteristic's). The text says what came. Nothing more
    /// is exchanged with the device on this connection, since no later answer could be trusted.
    case protocolError(String)
    /// The host stack failed; the text is its error.
    case host(String)
    /// Pairing (or encrypting with a bond) failed: wrong passkey, timeout, refused by the device.
    case pairingFailed(PairingError)

    /// A sentence saying what happened, for logs and command-line output.
    public var description: String {
        switch self {
        case let .transportUnavailable(spec, reason): "cannot open transport \"\(spec)\": \(reason)"
        case let .connectTimedOut(address, seconds):
            "no connection to \(address) within \(Self.format(seconds)) s: is it advertising and connectable, and is the address type (/P public, /R random) right?"
        case let .connectFailed(address, reason): "connection to \(address) failed: \(reason)"
        case let .tooManyConnections(limit):
            "the central already has \(limit) connection\(limit == 1 ? "" : "s") (its maximum); disconnect one first or raise maximumConnections"
        case let .characteristicNotFound(uuid, services):
            "characteristic \(uuid) not found; the device has services: "
                + (services.isEmpty ? "(none)" : services.map(\.description).joined(separator: ", "))
        case let .descriptorNotFound(uuid, characteristic, descriptors):
            "characteristic \(characteristic) has no descriptor \(uuid); it has: "
                + (descriptors.isEmpty ? "(none)" : descriptors.map(\.description).joined(separator: ", "))
        case let .attError(code, uuid, operation) where code == .insufficientAuthorization:
            // Pairing cannot fix this one (the central does not try): a person must allow it.
            "\(operation) of \(uuid): the device refused: this central is not authorised for \(uuid) (ATT 0x08); the device's owner must allow it, then try again"
        case let .attError(code, uuid, operation): "\(operation) of \(uuid) refused by the device: ATT error \(code)"
        case let .valueTooLong(uuid, length, maximum):
            "\(length) bytes is too long for a write without response to \(uuid): at most \(maximum) (MTU − 3, and 512 for any value); split the value, raise the MTU or write with response"
        case let .notSubscribable(uuid): "characteristic \(uuid) supports neither notifications nor indications"
        case let .noClientConfiguration(uuid):
            "characteristic \(uuid) says it notifies or indicates but has no Client Characteristic Configuration descriptor (0x2902), so it cannot be subscribed to"
        case let .decodingFailed(uuid, type, error): "value of \(uuid) is not a valid \(type): \(error)"
        case let .timedOut(operation, seconds): "\(operation): no answer within \(Self.format(seconds)) s"
        case let .disconnected(reason): "the connection is closed (\(reason))"
        case let .reconnectFailed(attempts, lastError):
            "the link was lost and \(attempts) reconnect attempt\(attempts == 1 ? "" : "s") failed; last: \(lastError)"
        case let .mtuAlreadyExchanged(current):
            "the ATT MTU was already exchanged on this connection (it is \(current)); it can be exchanged once per connection"
        case let .invalidNamePattern(pattern, reason): "invalid name pattern \"\(pattern)\": \(reason)"
        case let .invalidArgument(text): text
        case let .protocolError(text):
            "protocol error: \(text); the device's answers cannot be trusted, so nothing more is asked on this connection"
        case let .host(text): text
        case let .pairingFailed(error): error.description
        }
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
    }

    /// Translates a host stack or GATT client error into the API's words.
    static func from(_ error: any Error, characteristic: BluetoothUUID? = nil, operation: String = "operation") -> BluetideError {
        if let error = error as? BluetideError { return error }
        if let error = error as? SMPPairingError { return .pairingFailed(error) }
        if let error = error as? HostError {
            switch error {
            case let .connectTimedOut(address, seconds): return .connectTimedOut(address, seconds: seconds)
            case let .connectFailed(address, status): return .connectFailed(address, reason: "\(status)")
            case let .disconnected(_, reason): return .disconnected(reason: DisconnectReason(reason))
            case let .timedOut(what, seconds): return .timedOut(operation: what, seconds: seconds)
            default: return .host(error.description)
            }
        }
        if case let .protocolViolation(text)? = error as? ATTBearerError { return .protocolError(text) }
        if let error = error as? GATTClientError {
            switch error {
            case let .protocolViolation(text): return .protocolError(text)
            case let .unexpectedResponse(pdu, request):
                return .protocolError("the device answered \(request.aName) with \(pdu.opcode.aName) that does not fit it")
            case let .att(code, _, _): return .attError(code, characteristic: characteristic ?? BluetoothUUID(0), operation: operation)
            case let .valueTooLong(length, maximum):
                return .valueTooLong(characteristic ?? BluetoothUUID(0), length: length, maximum: maximum)
            case .notSubscribable:
                return .notSubscribable(characteristic ?? BluetoothUUID(0))
            case .noClientConfiguration:
                return .noClientConfiguration(characteristic ?? BluetoothUUID(0))
            default: return .host(error.description)
            }
        }
        if let error = error as? ATTErrorCode {
            return .attError(error, characteristic: characteristic ?? BluetoothUUID(0), operation: operation)
        }
        return .host("\(error)")
    }
}
