import BluetideHost

// The host's value types that users of the public API meet, under their own names. This is the
// whole list: everything else of the host (HostStack, HCI commands and events, L2CAP, ATT
// bearers, the GATT client actor) stays below `Bluetide`, reached only through `Bluetooth`.
//
// They are aliases rather than copies because they are plain values (no behaviour that reaches
// the host) whose definitions, codecs and tests live with the host; copying them would give two
// types for one thing on the wire.

// MARK: Declaring services (Peripheral, @Characteristic)

/// What a characteristic lets centrals do: read, write, notify… (the declaration's properties).
public typealias GATTCharacteristicProperties = BluetideHost.GATTCharacteristicProperties
/// Access rules of a served value (readable, writable, encrypted, authenticated).
public typealias GATTPermissions = BluetideHost.GATTPermissions
/// An ATT error code: the answer that refuses a read or write (0x80…0x9F for applications).
public typealias ATTErrorCode = BluetideHost.ATTErrorCode
/// A subscription's Client Characteristic Configuration bits (notify, indicate).
public typealias GATTClientConfiguration = BluetideHost.GATTClientConfiguration
/// A served service given as a definition with read and write handlers, for devices whose
/// values are computed rather than stored (see ``Peripheral/add(definitions:)``).
public typealias GATTServiceDefinition = BluetideHost.GATTServiceDefinition
/// A characteristic of a ``GATTServiceDefinition``.
public typealias GATTCharacteristicDefinition = BluetideHost.GATTCharacteristicDefinition
/// A descriptor of a ``GATTCharacteristicDefinition``.
public typealias GATTDescriptorDefinition = BluetideHost.GATTDescriptorDefinition
/// What a read handler is told (connection, offset).
public typealias GATTReadContext = BluetideHost.GATTReadContext
/// What a write validator is told (connection, value).
public typealias GATTWriteContext = BluetideHost.GATTWriteContext
/// A service served at handles chosen by the caller (see ``Peripheral/serve(placed:)``).
public typealias GATTServicePlacement = BluetideHost.GATTServicePlacement
/// The handles of one characteristic of a ``GATTServicePlacement``.
public typealias GATTCharacteristicPlacement = BluetideHost.GATTCharacteristicPlacement

// MARK: Discovered services (Connection/services())

/// A service found on a device, with its characteristics and their descriptors.
public typealias GATTRemoteService = BluetideHost.GATTRemoteService
/// A characteristic found on a device, with its descriptors.
public typealias GATTRemoteCharacteristic = BluetideHost.GATTRemoteCharacteristic
/// A service's UUID and handle range.
public typealias GATTServiceRange = BluetideHost.GATTServiceRange
/// A characteristic's declaration: UUID, properties, value handle.
public typealias GATTCharacteristic = BluetideHost.GATTCharacteristic
/// A descriptor's UUID and handle.
public typealias GATTDescriptor = BluetideHost.GATTDescriptor

// MARK: Advertising

/// Advertising data or a scan response: a list of AD structures.
public typealias AdvertisingData = BluetideHost.AdvertisingData
/// One AD structure (name, service UUIDs, manufacturer data…).
public typealias AdvertisingDataElement = BluetideHost.AdvertisingDataElement
/// The AD flags field's bits.
public typealias AdvertisingFlags = BluetideHost.AdvertisingFlags
/// 16-, 32- or 128-bit UUIDs in a service UUID list.
public typealias AdvertisingUUIDSize = BluetideHost.AdvertisingUUIDSize

// MARK: Links

/// A link's connection interval (ms), peripheral latency (events) and supervision timeout (ms).
public typealias ConnectionParameters = BluetideHost.HostConnection.Parameters

// MARK: Security

/// A link's LE security level: not encrypted, encrypted, authenticated (MITM), authenticated
/// with LE Secure Connections; ordered, so `level >= .encrypted` reads naturally.
public typealias SecurityLevel = BluetideHost.SMPSecurityLevel
/// What a device can show and type, which decides the pairing method (Core Vol 3 Part H 2.3.2).
public typealias IOCapability = BluetideHost.SMPIOCapability
/// Why pairing failed; its `description` is one line for a user (wrong passkey, timeout, refused).
public typealias PairingError = BluetideHost.SMPPairingError

// MARK: Reproducible runs (Bluetooth.Configuration/randomness)

/// Where a host's random numbers come from: `.system` (secure, the default) or `.seeded(N)`
/// (the same run byte for byte, pairing included; tests and replays only).
public typealias HostRandomness = BluetideHost.HostRandomness
