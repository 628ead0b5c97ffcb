import BluetideBase

/// GATT identifiers of the COLMI R02 ring (and QRing-family rings).
///
/// The ring speaks two channels: "V1" (16-byte packets on a Nordic-UART-like service whose
/// service UUID is `…FFF0…`, not the NUS `…0001…`) and "V2" ("big data" frames on a second service).
public enum COLMIUUID {
    /// V1 UART-like service `6E40FFF0-B5A3-F393-E0A9-E50E24DCCA9E`.
    public static let service = BluetoothUUID(high: 0x6E40_FFF0_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    /// V1 write characteristic (host → ring) `6E400002-…`.
    public static let write = BluetoothUUID(high: 0x6E40_0002_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    /// V1 notify characteristic (ring → host) `6E400003-…`.
    public static let notify = BluetoothUUID(high: 0x6E40_0003_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    /// V2 "big data" service `DE5BF728-D711-4E47-AF26-65E3012A5DC7`.
    public static let bigDataService = BluetoothUUID(high: 0xDE5B_F728_D711_4E47, low: 0xAF26_65E3_012A_5DC7)
    /// V2 write characteristic (host → ring) `DE5BF72A-…`.
    public static let bigDataWrite = BluetoothUUID(high: 0xDE5B_F72A_D711_4E47, low: 0xAF26_65E3_012A_5DC7)
    /// V2 notify characteristic (ring → host) `DE5BF729-…`.
    public static let bigDataNotify = BluetoothUUID(high: 0xDE5B_F729_D711_4E47, low: 0xAF26_65E3_012A_5DC7)
    /// Bluetooth company identifier some apps match in the ring's manufacturer data (4660).
    public static let manufacturerCompanyID: UInt16 = 0x1234
}
