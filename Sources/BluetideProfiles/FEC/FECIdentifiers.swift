import BluetideCore

extension BluetoothUUID {
    /// Tacx FE-C over BLE service, `6E40FEC1-B5A3-F393-E0A9-E50E24DCCA9E`.
    public static let tacxFECService = BluetoothUUID(high: 0x6E40_FEC1_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    /// Tacx FE-C trainer → app characteristic (notify), `6E40FEC2-…`.
    public static let tacxFECNotify = BluetoothUUID(high: 0x6E40_FEC2_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    /// Tacx FE-C app → trainer characteristic (write), `6E40FEC3-…`.
    public static let tacxFECWrite = BluetoothUUID(high: 0x6E40_FEC3_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
}
