import BluetideBase
import BluetideHost
import Foundation

/// A device seen while scanning: its advertisement merged with its scan response.
///
/// Values are snapshots; a scan reports a new one when the device's data changes (or on every
/// report with ``ScanFilter/allowDuplicates``).
public struct Advertisement: Sendable, Hashable, Identifiable, CustomStringConvertible {
    /// The advertiser's address with its type (public or random).
    public var address: BluetoothAddress
    /// The local name (complete, else shortened), from the advertisement or the scan response.
    public var name: String?
    /// Signal strength of the latest report, dBm (−127 when the controller could not measure it).
    public var rssi: Int
    /// Service UUIDs the device lists (16-, 32- and 128-bit lists merged, in order seen).
    public var serviceUUIDs: [BluetoothUUID]
    /// Manufacturer specific data by company identifier (Bluetooth SIG assigned), bytes after it.
    public var manufacturerData: [UInt16: [UInt8]]
    /// Service data by service UUID.
    public var serviceData: [BluetoothUUID: [UInt8]]
    /// Transmit power the device advertises (or the controller reports), dBm.
    public var txPower: Int?
    /// Whether the device accepts connections.
    public var isConnectable: Bool
    /// When this scan first saw the device.
    public var firstSeen: Date
    /// When this scan last heard from the device.
    public var lastSeen: Date
    /// The merged advertising data (advertisement first, then scan response elements).
    public var data: AdvertisingData

    /// The device's address: one advertisement per device.
    public var id: BluetoothAddress { address }

    /// An advertisement built from its parts (tests, replays, remembered devices).
    public init(
        address: BluetoothAddress, name: String? = nil, rssi: Int = -127, serviceUUIDs: [BluetoothUUID] = [],
        manufacturerData: [UInt16: [UInt8]] = [:], serviceData: [BluetoothUUID: [UInt8]] = [:], txPower: Int? = nil,
        isConnectable: Bool = true, firstSeen: Date = Date(), lastSeen: Date? = nil, data: AdvertisingData = AdvertisingData()
    ) {
        self.address = address
        self.name = name
        self.rssi = rssi
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.txPower = txPower
        self.isConnectable = isConnectable
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen ?? firstSeen
        self.data = data
    }

    /// One line: address, RSSI, name and services.
    public var description: String {
        var text = "\(address) \(rssi) dBm"
        if let name { text += " \"\(name)\"" }
        if !serviceUUIDs.isEmpty { text += " services " + serviceUUIDs.map(\.description).joined(separator: ",") }
        if !manufacturerData.isEmpty {
            text += " manufacturer " + manufacturerData.keys.sorted().map { String(format: "0x%04X", $0) }.joined(separator: ",")
        }
        return text
    }

    /// The content that makes an update worth reporting when duplicates are filtered: all but
    /// RSSI and times.
    var content: Advertisement {
        var copy = self
        copy.rssi = 0
        copy.firstSeen = Date(timeIntervalSince1970: 0)
        copy.lastSeen = copy.firstSeen
        return copy
    }
}

/// Merges the reports of one scan into one ``Advertisement`` per address: a scan response
/// completes the advertisement of the same address, a new advertisement replaces the old one's
/// data (the scan response is kept until a new one arrives). Pure logic: the time is passed in.
struct AdvertisementMerger {
    private struct Entry {
        var advertising = AdvertisingData()
        var scanResponse = AdvertisingData()
        var isConnectable = false
        var firstSeen: Date
        var advertisingTxPower: Int8?
    }

    private var entries: [BluetoothAddress: Entry] = [:]
    private var reported: [BluetoothAddress: Advertisement] = [:]

    /// Folds a report in and returns the device's merged advertisement.
    mutating func receive(_ report: AdvertisementReport, at time: Date) -> Advertisement {
        var entry = entries[report.address] ?? Entry(firstSeen: time)
        if report.isScanResponse {
            entry.scanResponse = report.data
        } else {
            entry.advertising = report.data
            entry.isConnectable = report.isConnectable
            if let tx = report.txPower { entry.advertisingTxPower = tx }
        }
        entries[report.address] = entry
        let data = entry.advertising.merged(withScanResponse: entry.scanResponse)
        var manufacturer: [UInt16: [UInt8]] = [:]
        for (company, bytes) in data.manufacturerData where manufacturer[company] == nil { manufacturer[company] = bytes }
        var uuids: [BluetoothUUID] = []
        for uuid in data.serviceUUIDs where !uuids.contains(uuid) { uuids.append(uuid) }
        let tx = data.txPowerLevel ?? entry.advertisingTxPower
        return Advertisement(
            address: report.address, name: data.localName, rssi: report.rssi == 127 ? -127 : Int(report.rssi),
            serviceUUIDs: uuids, manufacturerData: manufacturer, serviceData: data.serviceData,
            txPower: tx.map { Int($0) }, isConnectable: entry.isConnectable, firstSeen: entry.firstSeen, lastSeen: time,
            data: data)
    }

    /// Whether `advertisement` should be handed to the consumer: always with duplicates allowed,
    /// else the first time its address passes the filter and whenever its content (anything but
    /// RSSI and times) changed since it was last reported.
    mutating func shouldReport(_ advertisement: Advertisement, allowDuplicates: Bool) -> Bool {
        defer { reported[advertisement.address] = advertisement.content }
        if allowDuplicates { return true }
        return reported[advertisement.address] != advertisement.content
    }
}
