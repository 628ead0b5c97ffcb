import BluetideBase

/// Subscribing or unsubscribing (Core Vol 3 Part G 4.10, 4.11, 4.12.3): the characteristic's
/// descriptors are discovered to find its Client Characteristic Configuration descriptor, which
/// is then written — notifications (0x0001) or indications (0x0002) on, or 0x0000 off.
/// Notifications are chosen unless the characteristic can only indicate, or indications are
/// preferred and it can indicate.
public struct SubscriptionChange: GATTProcedure {
    /// What to do with the characteristic's subscription.
    public enum Change: Sendable, Equatable {
        /// Turn notifications or indications on.
        case subscribe(preferIndications: Bool)
        /// Turn both off.
        case unsubscribe
    }

    /// The characteristic.
    public let characteristic: GATTCharacteristic
    /// On or off.
    public let change: Change
    /// The effective ATT MTU at the start, octets.
    public let mtu: Int

    // The part running: the CCCD's discovery, then its write.
    private var discovery: DescriptorDiscovery?
    private var write: WriteValue?
    private var configuration: GATTClientConfiguration = []

    /// Changes `characteristic`'s subscription at ATT MTU `mtu`.
    public init(_ change: Change, of characteristic: GATTCharacteristic, mtu: Int) {
        self.characteristic = characteristic
        self.change = change
        self.mtu = mtu
    }

    public mutating func start() -> GATTProcedureStep<GATTClientConfiguration> {
        if case let .subscribe(preferIndications) = change {
            let properties = characteristic.properties
            if properties.contains(.indicate), preferIndications || !properties.contains(.notify) {
                configuration = .indication
            } else if properties.contains(.notify) {
                configuration = .notification
            } else {
                return .finished(.failure(GATTClientError.notSubscribable(valueHandle: characteristic.valueHandle)))
            }
        }
        discovery = DescriptorDiscovery(of: characteristic)
        return descriptorsStep(discovery!.start())
    }

    public mutating func handle(response: ATTPDU) -> GATTProcedureStep<GATTClientConfiguration> {
        if let step = discovery?.handle(response: response) { return descriptorsStep(step) }
        let configuration = configuration
        if let step = write?.handle(response: response) { return step.map { configuration } }
        return .finished(.failure(HostError.malformed("GATT subscription change: a response with no part running")))
    }

    private mutating func descriptorsStep(_ step: GATTProcedureStep<[GATTDescriptor]>) -> GATTProcedureStep<GATTClientConfiguration> {
        switch step {
        case let .send(pdu): return .send(pdu)
        case let .finished(.failure(error)): return .finished(.failure(error))
        case let .finished(.success(descriptors)):
            guard let cccd = descriptors.first(where: { $0.uuid == .clientCharacteristicConfiguration }) else {
                return .finished(.failure(GATTClientError.noClientConfiguration(valueHandle: characteristic.valueHandle)))
            }
            let configuration = configuration
            let bits = configuration.rawValue
            discovery = nil
            write = WriteValue(handle: cccd.handle, value: [UInt8(bits & 0xFF), UInt8(bits >> 8)], mtu: mtu)
            return write!.start().map { configuration }
        }
    }
}
