import BluetideBase
import BluetideDeviceModels
import BluetideHost

/// Advertising data and scan response for an emulated device, packed from its
/// ``AdvertisingHints`` into the 31-octet legacy limit of each.
///
/// Fields are placed in priority order: flags, complete local name, 16-bit then 128-bit service
/// UUID lists, service data, manufacturer data, appearance. Each goes into the advertising data
/// when it still fits, else into the scan response, else it is left out (listed in ``omitted``),
/// so a long 128-bit UUID never pushes the name out of both. A UUID list too long for either is
/// split into single-UUID (incomplete) lists placed the same way.
public struct AdvertisingPlan: Hashable, Sendable {
    /// The advertising data (always starts with the flags field).
    public var advertisingData: AdvertisingData
    /// The scan response, nil when everything fitted in the advertising data.
    public var scanResponse: AdvertisingData?
    /// Fields that fitted in neither.
    public var omitted: [AdvertisingDataElement]

    /// Packs `hints`, advertising `name` instead of the hinted local name when given.
    public init(hints: AdvertisingHints, name: String? = nil) {
        let limit = AdvertisingData.legacyMaximumLength
        var fields: [AdvertisingDataElement] = [.completeLocalName(name ?? hints.localName)]
        let short = hints.serviceUUIDs.filter { $0.uuid16 != nil }
        let long = hints.serviceUUIDs.filter { $0.uuid16 == nil }
        if !short.isEmpty { fields.append(.serviceUUIDs(short, size: .bits16, complete: true)) }
        if !long.isEmpty { fields.append(.serviceUUIDs(long, size: .bits128, complete: true)) }
        for field in hints.serviceData {
            fields.append(.serviceData(field.uuid, size: field.uuid.uuid16 == nil ? .bits128 : .bits16, data: field.data))
        }
        if let m = hints.manufacturerData { fields.append(.manufacturerSpecificData(companyID: m.companyID, data: m.data)) }
        if let a = hints.appearance { fields.append(.appearance(a)) }

        var primary: [AdvertisingDataElement] = [.flags([.leGeneralDiscoverable, .brEdrNotSupported])]
        var response: [AdvertisingDataElement] = []
        var omitted: [AdvertisingDataElement] = []
        func size(_ elements: [AdvertisingDataElement]) -> Int { AdvertisingData(elements).bytes.count }
        for field in fields {
            if size(primary + [field]) <= limit {
                primary.append(field)
            } else if size(response + [field]) <= limit {
                response.append(field)
            } else if case let .serviceUUIDs(uuids, uuidSize, _) = field, uuids.count > 1 {
                // A list too long for either half: each UUID on its own, as an incomplete list.
                for uuid in uuids {
                    let single = AdvertisingDataElement.serviceUUIDs([uuid], size: uuidSize, complete: false)
                    if size(primary + [single]) <= limit {
                        primary.append(single)
                    } else if size(response + [single]) <= limit {
                        response.append(single)
                    } else {
                        omitted.append(single)
                    }
                }
            } else if case let .completeLocalName(text) = field {
                // A name too long for either: advertise it shortened (2 octets of header).
                let room = max(0, limit - size(response) - 2)
                let cut = String(decoding: Array(text.utf8.prefix(room)), as: UTF8.self)
                if !cut.isEmpty { response.append(.shortenedLocalName(cut)) } else { omitted.append(field) }
            } else {
                omitted.append(field)
            }
        }
        advertisingData = AdvertisingData(primary)
        scanResponse = response.isEmpty ? nil : AdvertisingData(response)
        self.omitted = omitted
    }

    /// Hints of several devices served by one stack, merged: the first one's name, appearance and
    /// manufacturer data, every device's service UUIDs and service data (duplicates dropped).
    public static func merged(_ hints: [AdvertisingHints]) -> AdvertisingHints {
        guard var result = hints.first else { return AdvertisingHints(localName: "Bluetide", serviceUUIDs: []) }
        for other in hints.dropFirst() {
            for uuid in other.serviceUUIDs where !result.serviceUUIDs.contains(uuid) { result.serviceUUIDs.append(uuid) }
            for data in other.serviceData where !result.serviceData.contains(data) { result.serviceData.append(data) }
            if result.manufacturerData == nil { result.manufacturerData = other.manufacturerData }
            if result.appearance == nil { result.appearance = other.appearance }
        }
        return result
    }
}
