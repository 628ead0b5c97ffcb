import BluetideCore

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

    private enum Phase: Sendable {
        case findingDescriptor(DescriptorDiscovery)
        case writing(WriteValue)
    }

    private var phase: Phase
    private var configuration: GATTClientConfiguration = []

    /// Changes `characteristic`'s subscription at ATT MTU `mtu`.
    public init(_ change: Change, of characteristic: GATTCharacteristic, mtu: Int) {
        self.characteristic = characteristic
        self.change = change
        self.mtu = mtu
        phase = .findingDescriptor(DescriptorDiscovery(of: characteristic))
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
        var discovery = DescriptorDiscovery(of: characteristic)
        let step = discovery.start()
        phase = .findingDescriptor(discovery)
        return descriptorsStep(step)
    }

    public mutating func handle(response: ATTPDU) -> GATTProcedureStep<GATTClientConfiguration> {
        switch phase {
        case var .findingDescriptor(discovery):
            let step = discovery.handle(response: response)
            phase = .findingDescriptor(discovery)
            return descriptorsStep(step)
        case var .writing(write):
            let step = write.handle(response: response)
            phase = .writing(write)
            return step.map { [configuration] in configuration }
        }
    }

    private mutating func descriptorsStep(_ step: GATTProcedureStep<[GATTDescriptor]>) -> GATTProcedureStep<GATTClientConfiguration> {
        switch step {
        case let .send(pdu): return .send(pdu)
        case let .finished(.failure(error)): return .finished(.failure(error))
        case let .finished(.success(descriptors)):
            guard let cccd = descriptors.first(where: { $0.uuid == .clientCharacteristicConfiguration }) else {
                return .finished(.failure(GATTClientError.noClientConfiguration(valueHandle: characteristic.valueHandle)))
            }
            let bits = configuration.rawValue
            var write = WriteValue(handle: cccd.handle, value: [UInt8(bits & 0xFF), UInt8(bits >> 8)], mtu: mtu)
            let step = write.start()
            phase = .writing(write)
            return step.map { [configuration] in configuration }
        }
    }
}
