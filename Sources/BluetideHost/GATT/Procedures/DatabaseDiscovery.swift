import BluetideBase

/// The whole database: every primary service (``PrimaryServiceDiscovery``), the
/// characteristics of each (``CharacteristicDiscovery``) and the descriptors of each
/// characteristic (``DescriptorDiscovery``), in handle order, one request at a time.
public struct DatabaseDiscovery: GATTProcedure {

    /// What a finished part found.
    private enum Found {
        case services([GATTServiceRange])
        case characteristics([GATTCharacteristic])
        case descriptors([GATTDescriptor])
    }

    /// A part's step: passed on (a request, a failure), or what it found.
    private enum Outcome {
        case pass(GATTProcedureStep<[GATTRemoteService]>)
        case found(Found)
    }

    // The part running: one of the three at a time (kept apart, each is changed in place).
    private var servicesPart: PrimaryServiceDiscovery?
    private var characteristicsPart: CharacteristicDiscovery?
    private var descriptorsPart: DescriptorDiscovery?
    private var services: ArraySlice<GATTServiceRange> = []
    private var characteristics: ArraySlice<GATTCharacteristic> = []
    /// The service and characteristic whose parts are being discovered.
    private var service = GATTServiceRange(uuid: .primaryService, startHandle: 0, endHandle: 0)
    private var characteristic = GATTCharacteristic(
        uuid: .characteristicDeclaration, declarationHandle: 0, valueHandle: 0, endHandle: 0, properties: [])
    private var found: [GATTRemoteCharacteristic] = []
    private var database: [GATTRemoteService] = []

    /// Discovers everything.
    public init() {}

    public mutating func start() -> GATTProcedureStep<[GATTRemoteService]> {
        servicesPart = PrimaryServiceDiscovery()
        return settle(Self.outcome(servicesPart!.start(), Found.services))
    }

    public mutating func handle(response: ATTPDU) -> GATTProcedureStep<[GATTRemoteService]> {
        let outcome: Outcome
        if let step = servicesPart?.handle(response: response) {
            outcome = Self.outcome(step, Found.services)
        } else if let step = characteristicsPart?.handle(response: response) {
            outcome = Self.outcome(step, Found.characteristics)
        } else if let step = descriptorsPart?.handle(response: response) {
            outcome = Self.outcome(step, Found.descriptors)
        } else {
            return .finished(.failure(HostError.malformed("GATT database discovery: a response with no part running")))
        }
        return settle(outcome)
    }

    private static func outcome<T>(_ step: GATTProcedureStep<T>, _ wrap: (T) -> Found) -> Outcome {
        switch step {
        case let .send(pdu): .pass(.send(pdu))
        case let .finished(.failure(error)): .pass(.finished(.failure(error)))
        case let .finished(.success(value)): .found(wrap(value))
        }
    }

    /// Takes what a part found and starts the next part, in a loop (parts that need no request,
    /// such as a characteristic without room for descriptors, end at once), until one sends a
    /// request or everything is found.
    private mutating func settle(_ first: Outcome) -> GATTProcedureStep<[GATTRemoteService]> {
        var outcome = first
        while true {
            let finished: Found
            switch outcome {
            case let .pass(step): return step
            case let .found(found): finished = found
            }
            servicesPart = nil
            characteristicsPart = nil
            descriptorsPart = nil
            switch finished {
            case let .services(all): services = all[...]
            case let .characteristics(all):
                characteristics = all[...]
                found = []
            case let .descriptors(descriptors):
                found.append(GATTRemoteCharacteristic(characteristic: characteristic, descriptors: descriptors))
            }
            if let next = characteristics.popFirst() {
                characteristic = next
                descriptorsPart = DescriptorDiscovery(of: next)
                outcome = Self.outcome(descriptorsPart!.start(), Found.descriptors)
                continue
            }
            if case .services = finished {} else {
                database.append(GATTRemoteService(service: service, characteristics: found))
            }
            guard let next = services.popFirst() else { return .finished(.success(database)) }
            service = next
            characteristicsPart = CharacteristicDiscovery(in: next)
            outcome = Self.outcome(characteristicsPart!.start(), Found.characteristics)
        }
    }
}
