import BluetideBase
import BluetideHCI

/// One advertising or scan-response PDU seen while scanning, from a legacy (0x02) or an
/// extended (0x0D) LE Advertising Report.
public struct AdvertisementReport: Sendable, Equatable {
    /// The advertiser's address with its type.
    public var address: BluetoothAddress
    /// Received signal strength, dBm (127 when the controller could not measure it).
    public var rssi: Int8
    /// Whether the advertiser accepts connections.
    public var isConnectable: Bool
    /// Whether this PDU is a scan response (its data complements the advertisement).
    public var isScanResponse: Bool
    /// The advertising data, decoded leniently: malformed structures are kept as raw elements.
    public var data: AdvertisingData
    /// The advertising data bytes as received.
    public var rawData: [UInt8]
    /// TX power from the extended report header, dBm, when the controller gives one.
    public var txPower: Int8?

    public init(
        address: BluetoothAddress, rssi: Int8, isConnectable: Bool, isScanResponse: Bool, rawData: [UInt8],
        txPower: Int8? = nil
    ) {
        self.address = address
        self.rssi = rssi
        self.isConnectable = isConnectable
        self.isScanResponse = isScanResponse
        self.rawData = rawData
        self.data = AdvertisingData(lenient: rawData)
        self.txPower = txPower
    }

    /// Reports carried by one LE Meta event (none for other events).
    static func reports(in event: LEMetaEvent) -> [AdvertisementReport] {
        switch event {
        case let .advertisingReport(legacy):
            return legacy.reports.map { report in
                let type = report.eventType.rawValue
                return AdvertisementReport(
                    address: report.address, rssi: report.rssi,
                    isConnectable: type == 0 || type == 1, isScanResponse: type == 4, rawData: report.data)
            }
        case let .extendedAdvertisingReport(extended):
            return extended.reports.map { report in
                AdvertisementReport(
                    address: report.address, rssi: report.rssi,
                    isConnectable: report.eventType.contains(.connectable),
                    isScanResponse: report.eventType.contains(.scanResponse), rawData: report.data,
                    txPower: report.txPower == 127 ? nil : report.txPower)
            }
        default:
            return []
        }
    }
}
