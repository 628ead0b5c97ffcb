// The public face of Bluetide: `import Bluetide` gives the async API (Bluetooth, Central,
// Connection, Peripheral, VirtualWorld in BluetideEmulation) plus the types it speaks in:
// addresses, UUIDs and codecs (Core) and the profile codecs (Profiles). The host itself
// (`HostStack`, HCI, L2CAP, ATT bearers) is not part of it: `Bluetooth.open(transport:)` is the
// one way to make a host. The few host value types users need are listed in HostTypes.swift.
@_exported import BluetideBase
@_exported import BluetideProfiles
