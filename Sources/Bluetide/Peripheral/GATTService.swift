/// A GATT service served by a ``Peripheral``, written as a class whose characteristics are
/// ``Characteristic`` properties:
///
/// ```swift
/// final class PunchService: GATTService {
///     static let uuid = PunchUUID.service
///     @Characteristic(PunchUUID.response, [.read, .notify]) var response = PunchResponse(...)
///     @Characteristic(PunchUUID.sequence, [.read, .write]) var targets: [UInt8] = []
/// }
/// ```
///
/// ``Peripheral/add(_:)`` finds the characteristics by reflection (`Mirror`), in declaration
/// order, which is also their handle order. Properties of other types are ignored.
///
/// The protocol is class-bound but does not require `Sendable`: the compiler stores a property
/// wrapper in a synthesized `var`, so a class with `@Characteristic` properties cannot pass the
/// checked `Sendable` conformance. A service that has to cross tasks declares its
/// characteristics as `let` constants instead, and then conforms with the compiler's check:
///
/// ```swift
/// final class PunchService: GATTService, Sendable {
///     static let uuid = PunchUUID.service
///     let response = Characteristic(PunchUUID.response, [.read, .notify], value: PunchResponse(...))
///     let targets = Characteristic(PunchUUID.sequence, [.read, .write], value: [UInt8]())
/// }
/// service.response.value = result       // notifies subscribers
/// for await write in service.targets.writes { … }
/// ```
///
/// Both forms are found the same way and may be mixed. A wrapper-form service can still hand
/// its projected values (`$response`, each a `Sendable` ``Characteristic``) to other tasks.
public protocol GATTService: AnyObject {
    /// The service type UUID.
    static var uuid: BluetoothUUID { get }
    /// The UUID this instance is served under; ``uuid-swift.type.property`` by default.
    var uuid: BluetoothUUID { get }
    /// Primary (discoverable, the default) or secondary (reachable only through includes).
    var isPrimary: Bool { get }
}

extension GATTService {
    /// The type's UUID.
    public var uuid: BluetoothUUID { Self.uuid }
    /// Services are primary unless they say otherwise.
    public var isPrimary: Bool { true }

    /// The ``Characteristic`` properties of this service, in declaration order.
    var characteristicBindings: [any CharacteristicBindable] {
        var found: [any CharacteristicBindable] = []
        var mirror: Mirror? = Mirror(reflecting: self)
        var levels: [Mirror] = []
        while let current = mirror {
            levels.append(current)
            mirror = current.superclassMirror
        }
        // Superclass properties come first in handle order, like in memory layout.
        for level in levels.reversed() {
            for child in level.children {
                if let characteristic = child.value as? any CharacteristicBindable { found.append(characteristic) }
            }
        }
        return found
    }
}
