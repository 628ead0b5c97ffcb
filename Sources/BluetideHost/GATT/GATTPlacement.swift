import BluetideBase

/// Where one service's attributes go in a database whose handles the caller chooses
/// (``GATTDatabase/init(placing:)``): a device rebuilt from a capture keeps the captured
/// handles, gaps and all, so a client that cached them (or a script written by handle) works.
public struct GATTServicePlacement: Sendable {
    /// The service, its includes and characteristics (the CCCD is placed only where
    /// ``GATTCharacteristicPlacement/configurationHandle`` says).
    public var definition: GATTServiceDefinition
    /// Handle of the service declaration.
    public var handle: UInt16
    /// Last handle of the service's group: at least its last attribute's, below the next service's.
    public var endHandle: UInt16
    /// Handles of the include declarations, one per ``GATTServiceDefinition/includedServices``.
    public var includeHandles: [UInt16]
    /// Handles of each characteristic, one per ``GATTServiceDefinition/characteristics``, in order.
    public var characteristics: [GATTCharacteristicPlacement]

    /// A service at `handle`…`endHandle`; see the properties.
    public init(definition: GATTServiceDefinition, handle: UInt16, endHandle: UInt16, includeHandles: [UInt16] = [],
                characteristics: [GATTCharacteristicPlacement]) {
        self.definition = definition
        self.handle = handle
        self.endHandle = endHandle
        self.includeHandles = includeHandles
        self.characteristics = characteristics
    }
}

/// The handles of one characteristic of a ``GATTServicePlacement``.
public struct GATTCharacteristicPlacement: Sendable {
    /// Handle of the characteristic declaration.
    public var declarationHandle: UInt16
    /// Handle of the value (after the declaration).
    public var valueHandle: UInt16
    /// Handle of its Client Characteristic Configuration descriptor; nil serves none (a
    /// notifying characteristic without one cannot be subscribed to).
    public var configurationHandle: UInt16?
    /// Handles of the definition's further descriptors, one each, in order.
    public var descriptorHandles: [UInt16]

    /// A characteristic declared at `declarationHandle`; see the properties.
    public init(declarationHandle: UInt16, valueHandle: UInt16, configurationHandle: UInt16? = nil, descriptorHandles: [UInt16] = []) {
        self.declarationHandle = declarationHandle
        self.valueHandle = valueHandle
        self.configurationHandle = configurationHandle
        self.descriptorHandles = descriptorHandles
    }
}

/// Why a placed layout cannot be served: which service or characteristic, and what is wrong.
public struct GATTPlacementError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One line: where, what was expected, what came.
    public let description: String

    /// An error saying `description`.
    public init(description: String) { self.description = description }
}

extension GATTDatabase {
    /// A database with exactly the handles `services` give, in handle order, nothing added (no
    /// GAP or GATT service of the host's: include them among `services` to serve them).
    ///
    /// Every handle must be non-zero and used once; services must come in increasing,
    /// non-overlapping ranges; inside one, the include declarations follow the service
    /// declaration, each characteristic's value follows its declaration, and its descriptors
    /// follow the value and come before the next characteristic's declaration.
    /// - Throws: ``GATTPlacementError`` saying which handle breaks which rule.
    public init(placing services: [GATTServicePlacement]) throws(GATTPlacementError) {
        func hex(_ h: UInt16) -> String { GATTDatabase.hex4(h) }
        func fail(_ service: GATTServicePlacement, _ problem: String) -> GATTPlacementError {
            GATTPlacementError(description: "service \(service.definition.uuid.shortString) at \(hex(service.handle)): \(problem)")
        }
        var previousEnd: UInt16 = 0
        for service in services {
            guard service.handle > previousEnd else {
                throw fail(service, previousEnd == 0
                    ? "handle 0x0000 is not a valid handle"
                    : "starts at or before the end of the service before it (\(hex(previousEnd))); services must come in increasing, separate ranges")
            }
            guard service.includeHandles.count == service.definition.includedServices.count else {
                throw fail(service, "\(service.definition.includedServices.count) included service(s) but \(service.includeHandles.count) include handle(s)")
            }
            guard service.characteristics.count == service.definition.characteristics.count else {
                throw fail(service, "\(service.definition.characteristics.count) characteristic(s) but \(service.characteristics.count) placement(s)")
            }
            var last = service.handle
            func next(_ handle: UInt16, _ what: String) throws(GATTPlacementError) {
                guard handle > last else {
                    throw fail(service, "\(what) at \(hex(handle)) is not after the attribute before it (\(hex(last)))")
                }
                last = handle
            }
            for handle in service.includeHandles { try next(handle, "an include declaration") }
            for (definition, placement) in zip(service.definition.characteristics, service.characteristics) {
                let name = definition.uuid.shortString
                guard placement.descriptorHandles.count == definition.descriptors.count else {
                    throw fail(service, "characteristic \(name) has \(definition.descriptors.count) descriptor(s) but \(placement.descriptorHandles.count) descriptor handle(s)")
                }
                try next(placement.declarationHandle, "the declaration of \(name)")
                try next(placement.valueHandle, "the value of \(name)")
                let descriptors = (placement.descriptorHandles + (placement.configurationHandle.map { [$0] } ?? [])).sorted()
                for handle in descriptors { try next(handle, "a descriptor of \(name)") }
            }
            guard service.endHandle >= last else {
                throw fail(service, "its end handle \(hex(service.endHandle)) is before its last attribute (\(hex(last)))")
            }
            previousEnd = service.endHandle
        }

        for service in services {
            let definition = service.definition
            append(type: definition.isPrimary ? .primaryService : .secondaryService, role: .serviceDeclaration,
                   permissions: .readable, value: definition.uuid.littleEndianBytes, groupEnd: service.endHandle, at: service.handle)
            for (included, handle) in zip(definition.includedServices, service.includeHandles) {
                guard let target = services.first(where: { $0.definition.uuid == included }) else { continue }
                var w = ByteWriter()
                w.write(target.handle); w.write(target.endHandle)
                if let short = included.uuid16 { w.write(short) }
                append(type: .include, role: .includeDeclaration, permissions: .readable, value: w.bytes, at: handle)
            }
            for (c, placement) in zip(definition.characteristics, service.characteristics) {
                var w = ByteWriter()
                w.write(c.properties.rawValue); w.write(placement.valueHandle); w.write(bytes: c.uuid.littleEndianBytes)
                append(type: .characteristicDeclaration, role: .characteristicDeclaration, permissions: .readable, value: w.bytes,
                       at: placement.declarationHandle)
                append(type: c.uuid, role: .characteristicValue(properties: c.properties, cccd: placement.configurationHandle),
                       permissions: c.permissions, value: c.value, maximumLength: c.maximumLength, at: placement.valueHandle,
                       onRead: c.onRead, validateWrite: c.validateWrite)
                // The CCCD and the other descriptors, in handle order.
                var descriptors = zip(c.descriptors, placement.descriptorHandles).map { (handle: $0.1, descriptor: Optional($0.0)) }
                if let cccd = placement.configurationHandle { descriptors.append((cccd, nil)) }
                for (handle, descriptor) in descriptors.sorted(by: { $0.handle < $1.handle }) {
                    if let d = descriptor {
                        append(type: d.uuid, role: .descriptor, permissions: d.permissions, value: d.value,
                               maximumLength: d.maximumLength, at: handle, onRead: d.onRead, validateWrite: d.validateWrite)
                    } else {
                        append(type: .clientCharacteristicConfiguration,
                               role: .clientConfiguration(valueHandle: placement.valueHandle, properties: c.properties),
                               permissions: [.readable, .writable], value: [0, 0], maximumLength: 2, at: handle)
                    }
                }
            }
        }
    }

    /// `0x000C`-style handle.
    static func hex4(_ handle: UInt16) -> String {
        let digits = String(handle, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
