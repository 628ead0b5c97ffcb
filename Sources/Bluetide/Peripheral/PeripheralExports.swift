// A service definition needs BluetideCore (BluetoothUUID, GATTCodable) and BluetideHost
// (HostStack, GATTCharacteristicProperties, GATTPermissions, ATTErrorCode): `import Bluetide`
// brings them along (re-exported in Bluetide.swift).
