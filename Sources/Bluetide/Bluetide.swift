// The public face of Bluetide: `import Bluetide` gives the async API (Bluetooth, Central,
// Connection, Peripheral) plus the types it speaks in: addresses, UUIDs and codecs (Core), the
// profile codecs (Profiles), and the GATT / advertising model of the host (Host).
@_exported import BluetideCore
@_exported import BluetideHost
@_exported import BluetideProfiles
import BluetideHCI

/// Why a link closed: the HCI reason code (0x08 connection timeout, 0x13 remote user
/// terminated, 0x16 local host terminated, …).
public typealias DisconnectReason = HCIStatus
