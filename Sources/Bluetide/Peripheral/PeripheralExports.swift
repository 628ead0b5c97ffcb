// A service definition needs BluetideCore (BluetoothUUID, GATTCodable) and BluetideHost
// (HostStack, GATTCharacteristicProperties, GATTPermissions, ATTErrorCode): `import Bluetide`
// brings them along. Bluetide's own `GATTService` protocol shadows BluetideHost's struct of the
// same name for code that imports only Bluetide; code importing both writes `Bluetide.GATTService`.
@_exported import BluetideCore
@_exported import BluetideHost
