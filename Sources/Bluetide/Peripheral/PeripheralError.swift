/// Why a ``Peripheral`` operation failed.
public enum PeripheralError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name, UUIDs and data asked for do not fit legacy advertising (31 bytes of
    /// advertisement + 31 bytes of scan response); the text says which piece needs how much.
    case advertisingDataTooLong(String)
    /// A service has no `@Characteristic` properties (nothing to serve).
    case serviceHasNoCharacteristics(BluetoothUUID)
    /// The service object was already added to this peripheral.
    case serviceAlreadyAdded(BluetoothUUID)

    /// A sentence saying what went wrong and, for advertising, what needs how many bytes.
    public var description: String {
        switch self {
        case let .advertisingDataTooLong(text): text
        case let .serviceHasNoCharacteristics(uuid):
            "service \(uuid) has no @Characteristic properties: nothing to serve"
        case let .serviceAlreadyAdded(uuid): "service \(uuid) was already added to this peripheral"
        }
    }
}
