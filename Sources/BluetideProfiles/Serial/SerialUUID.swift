import BluetideBase

/// GATT identifiers of the two common BLE serial bridges.
public enum SerialUUID {
    /// Nordic UART Service `6E400001-B5A3-F393-E0A9-E50E24DCCA9E`.
    public static let nordicUARTService = BluetoothUUID(high: 0x6E40_0001_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    /// NUS RX `6E400002-…`: the central writes here (bytes go to the peripheral's UART).
    public static let nordicUARTRX = BluetoothUUID(high: 0x6E40_0002_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    /// NUS TX `6E400003-…`: the peripheral notifies here (bytes from its UART).
    public static let nordicUARTTX = BluetoothUUID(high: 0x6E40_0003_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    /// HM-10 service 0xFFE0.
    public static let hm10Service = BluetoothUUID(0xFFE0)
    /// HM-10 data characteristic 0xFFE1 (read, write without response, notify), both directions.
    public static let hm10Data = BluetoothUUID(0xFFE1)
    /// HM-10 default advertised name.
    public static let hm10DefaultName = "HMSoft"
}
