import BluetideCore

/// The whole database: every primary service (``PrimaryServiceDiscovery``), the
/// characteristics of each (``CharacteristicDiscovery``) and the descriptors of each
/// characteristic (``DescriptorDiscovery``), in handle order, one request at a time.
public struct DatabaseDiscovery: GATTProcedure {
    private enum Phase: Sendable {
        case services(PrimaryServiceDiscovery)
        case characteristics(CharacteristicDiscovery)
        case descriptors(DescriptorDiscovery)
    }

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

    private var phase = Phase.services(PrimaryServiceDiscovery())
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
        var discovery = PrimaryServiceDiscovery()
        let step = discovery.start()
        phase = .services(discovery)
        return settle(Self.outcome(step, Found.services))
    }

    public mutating func handle(response: ATTPDU) -> GATTProcedureStep<[GATTRemoteService]> {
        let outcome: Outcome
        switch phase {
        case var .services(discovery):
            outcome = Self.outcome(discovery.handle(response: response), Found.services)
            phase = .services(discovery)
        case var .characteristics(discovery):
            outcome = Self.outcome(discovery.handle(response: response), Found.characteristics)
            phase = .characteristics(discovery)
        case var .descriptors(discovery):
            outcome = Self.outcome(discovery.handle(response: response), Found.descriptors)
            phase = .descriptors(discovery)
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
                var discovery = DescriptorDiscovery(of: next)
                outcome = Self.outcome(discovery.start(), Found.descriptors)
                phase = .descriptors(discovery)
                continue
            }
            if case .services = finished {} else {
                database.append(GATTRemoteService(service: service, characteristics: found))
            }
            guard let next = services.popFirst() else { return .finished(.success(database)) }
            service = next
            var discovery = CharacteristicDiscovery(in: next)
            outcome = Self.outcome(discovery.start(), Found.characteristics)
            phase = .characteristics(discovery)
        }
    }
}
