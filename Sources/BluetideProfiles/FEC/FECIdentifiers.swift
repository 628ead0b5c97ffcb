import BluetideBase

extension BluetoothUUID {
    /// Tacx FE-C over BLE service, `6E40FEC1-B5A3-F393-E0A9-E50E24DCCA9E`.
    public static let tacxFECService = BluetoothUUID(high: 0x6E40_FEC1_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    /// Tacx FE-C trainer → app characteristic (notify), `6E40FEC2-…`.
    public static let tacxFECNotify = BluetoothUUID(high: 0x6E40_FEC2_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    /// Tacx FE-C app → trainer characteristic (write), `6E40FEC3-…`.
    public static let tacxFECWrite = BluetoothUUID(high: 0x6E40_FEC3_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
}

extension BluetoothUUID {
    /// Service some older Tacx Vortex Smart trainers advertise, `669AA305-0C08-969E-E211-86AD5062675F`.
    public static let tacxVortexService = BluetoothUUID(high: 0x669A_A305_0C08_969E, low: 0xE211_86AD_5062_675F)
}
