import BluetideBase

/// A GATT client procedure to run on a link, as data: what ``HostInput/gattProcedure(_:handle:_:)``
/// carries to the core, which builds the procedure with the link's MTU when its turn comes.
public enum GATTProcedureRequest: Sendable, Equatable {
    /// ``ExchangeMTU``: offer a receive MTU (octets); gives ``GATTProcedureResult/mtu(_:)``.
    case exchangeMTU(clientMTU: Int)
    /// ``PrimaryServiceDiscovery``: all primary services, or those with a UUID; gives
    /// ``GATTProcedureResult/services(_:)``.
    case discoverPrimaryServices(uuid: BluetoothUUID?)
    /// ``IncludedServiceDiscovery``; gives ``GATTProcedureResult/includedServices(_:)``.
    case findIncludedServices(GATTServiceRange)
    /// ``CharacteristicDiscovery``; gives ``GATTProcedureResult/characteristics(_:)``.
    case discoverCharacteristics(GATTServiceRange)
    /// ``DescriptorDiscovery``; gives ``GATTProcedureResult/descriptors(_:)``.
    case discoverDescriptors(GATTCharacteristic)
    /// ``DatabaseDiscovery``; gives ``GATTProcedureResult/database(_:)``.
    case discoverDatabase
    /// ``ReadValue`` (long when it fills the MTU); gives ``GATTProcedureResult/value(_:)``.
    case read(handle: UInt16)
    /// ``ReadMultiple``; gives ``GATTProcedureResult/value(_:)``.
    case readMultiple(handles: [UInt16])
    /// ``ReadMultipleVariable``; gives ``GATTProcedureResult/values(_:)``.
    case readMultipleVariable(handles: [UInt16])
    /// ``WriteValue`` (long beyond MTU − 3 octets); gives ``GATTProcedureResult/written``.
    case write(handle: UInt16, value: [UInt8])
    /// ``LongWrite`` from an offset; gives ``GATTProcedureResult/written``.
    case writeLong(handle: UInt16, value: [UInt8], offset: UInt16)
    /// ``SubscriptionChange``; gives ``GATTProcedureResult/configured(_:)``.
    case changeSubscription(SubscriptionChange.Change, of: GATTCharacteristic)

    /// The procedure, at ATT MTU `mtu` (octets).
    public func procedure(mtu: Int) -> AnyGATTProcedure {
        switch self {
        case let .exchangeMTU(clientMTU): AnyGATTProcedure(ExchangeMTU(clientMTU: clientMTU), GATTProcedureResult.mtu)
        case let .discoverPrimaryServices(uuid): AnyGATTProcedure(PrimaryServiceDiscovery(uuid: uuid), GATTProcedureResult.services)
        case let .findIncludedServices(service):
            AnyGATTProcedure(IncludedServiceDiscovery(in: service, mtu: mtu), GATTProcedureResult.includedServices)
        case let .discoverCharacteristics(service):
            AnyGATTProcedure(CharacteristicDiscovery(in: service), GATTProcedureResult.characteristics)
        case let .discoverDescriptors(characteristic):
            AnyGATTProcedure(DescriptorDiscovery(of: characteristic), GATTProcedureResult.descriptors)
        case .discoverDatabase: AnyGATTProcedure(DatabaseDiscovery(), GATTProcedureResult.database)
        case let .read(handle): AnyGATTProcedure(ReadValue(handle: handle, mtu: mtu), GATTProcedureResult.value)
        case let .readMultiple(handles): AnyGATTProcedure(ReadMultiple(handles: handles), GATTProcedureResult.value)
        case let .readMultipleVariable(handles): AnyGATTProcedure(ReadMultipleVariable(handles: handles), GATTProcedureResult.values)
        case let .write(handle, value): AnyGATTProcedure(WriteValue(handle: handle, value: value, mtu: mtu)) { .written }
        case let .writeLong(handle, value, offset):
            AnyGATTProcedure(LongWrite(handle: handle, value: value, offset: offset, mtu: mtu)) { .written }
        case let .changeSubscription(change, characteristic):
            AnyGATTProcedure(SubscriptionChange(change, of: characteristic, mtu: mtu), GATTProcedureResult.configured)
        }
    }
}

/// What a ``GATTProcedureRequest`` produced.
public enum GATTProcedureResult: Sendable, Equatable {
    /// The server's receive MTU, octets.
    case mtu(Int)
    /// Services found.
    case services([GATTServiceRange])
    /// Include declarations found.
    case includedServices([GATTIncludedService])
    /// Characteristics found.
    case characteristics([GATTCharacteristic])
    /// Descriptors found.
    case descriptors([GATTDescriptor])
    /// The whole database.
    case database([GATTRemoteService])
    /// A value read (or several, concatenated).
    case value([UInt8])
    /// Values read one by one.
    case values([[UInt8]])
    /// The write was acknowledged.
    case written
    /// The Client Characteristic Configuration value written.
    case configured(GATTClientConfiguration)
}

/// Any ``GATTProcedure``, its result wrapped in a ``GATTProcedureResult``: what a driver keeps
/// when it runs procedures of every kind (one queue per link in the host core).
public struct AnyGATTProcedure: GATTProcedure {
    private var base: any ErasedGATTProcedure

    /// Wraps `procedure`, whose output `wrap` turns into a result.
    public init<P: GATTProcedure>(_ procedure: P, _ wrap: @escaping @Sendable (P.Output) -> GATTProcedureResult) {
        base = Wrapped(procedure: procedure, wrap: wrap)
    }

    public mutating func start() -> GATTProcedureStep<GATTProcedureResult> { base.start() }
    public mutating func handle(response: ATTPDU) -> GATTProcedureStep<GATTProcedureResult> { base.handle(response: response) }
    public mutating func handle(failure: any Error) -> GATTProcedureStep<GATTProcedureResult> { base.handle(failure: failure) }

    private struct Wrapped<P: GATTProcedure>: ErasedGATTProcedure {
        var procedure: P
        let wrap: @Sendable (P.Output) -> GATTProcedureResult
        mutating func start() -> GATTProcedureStep<GATTProcedureResult> { procedure.start().map(wrap) }
        mutating func handle(response: ATTPDU) -> GATTProcedureStep<GATTProcedureResult> { procedure.handle(response: response).map(wrap) }
        mutating func handle(failure: any Error) -> GATTProcedureStep<GATTProcedureResult> { procedure.handle(failure: failure).map(wrap) }
    }
}

/// A procedure whose output is already a ``GATTProcedureResult``.
private protocol ErasedGATTProcedure: Sendable {
    mutating func start() -> GATTProcedureStep<GATTProcedureResult>
    mutating func handle(response: ATTPDU) -> GATTProcedureStep<GATTProcedureResult>
    mutating func handle(failure: any Error) -> GATTProcedureStep<GATTProcedureResult>
}
