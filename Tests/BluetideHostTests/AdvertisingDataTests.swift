import BluetideBase
import Testing
@testable import BluetideHost

@Suite struct AdvertisingDataTests {
    static let nus = BluetoothUUID(high: 0x6E40_0001_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)

    /// One AD structure per element, with its bytes (Core Supplement Part A 1.x layouts).
    static let vectors: [(String, AdvertisingDataElement)] = [
        ("02 01 06", .flags([.leGeneralDiscoverable, .brEdrNotSupported])),
        ("05 02 0D 18 0F 18", .serviceUUIDs([BluetoothUUID(0x180D), BluetoothUUID(0x180F)], size: .bits16, complete: false)),
        ("03 03 0D 18", .serviceUUIDs([BluetoothUUID(0x180D)], size: .bits16, complete: true)),
        ("05 04 78 56 34 12", .serviceUUIDs([BluetoothUUID(uuid32: 0x1234_5678)], size: .bits32, complete: false)),
        ("05 05 0D 18 00 00", .serviceUUIDs([BluetoothUUID(0x180D)], size: .bits32, complete: true)),
        ("11 06 9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 01 00 40 6E", .serviceUUIDs([nus], size: .bits128, complete: false)),
        ("11 07 9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 01 00 40 6E", .serviceUUIDs([nus], size: .bits128, complete: true)),
        ("04 08 42 6C 75", .shortenedLocalName("Blu")),
        ("09 09 42 6C 75 65 74 69 64 65", .completeLocalName("Bluetide")),
        ("02 0A F4", .txPowerLevel(-12)),
        ("05 12 06 00 0C 00", .peripheralConnectionIntervalRange(min: 6, max: 12)),
        ("04 16 0F 18 64", .serviceData(BluetoothUUID(0x180F), size: .bits16, data: [100])),
        ("06 20 78 56 34 12 01", .serviceData(BluetoothUUID(uuid32: 0x1234_5678), size: .bits32, data: [1])),
        ("12 21 9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 01 00 40 6E AA", .serviceData(nus, size: .bits128, data: [0xAA])),
        ("03 19 41 03", .appearance(0x0341)),
        ("05 FF 59 00 01 02", .manufacturerSpecificData(companyID: 0x0059, data: [1, 2])),
        ("03 FF 4C 00", .manufacturerSpecificData(companyID: 0x004C, data: [])),
        ("03 2A 01 02", .raw(type: 0x2A, data: [1, 2])),
        ("01 30", .raw(type: 0x30, data: [])),
    ]

    @Test func decodesAndEncodesEveryElement() throws {
        for (text, element) in Self.vectors {
            let bytes = gattHex(text)
            #expect(try AdvertisingData(bytes: bytes) == AdvertisingData([element]), "decode \(text)")
            #expect(AdvertisingData([element]).bytes == bytes, "encode \(text)")
            #expect(AdvertisingData(lenient: bytes) == AdvertisingData([element]))
        }
    }

    @Test func typicalAdvertisementAndAccessors() throws {
        let bytes = gattHex("02 01 06 03 03 0D 18 09 09 42 6C 75 65 74 69 64 65 02 0A F4 05 FF 59 00 01 02 04 16 0F 18 64")
        let ad = try AdvertisingData(bytes: bytes)
        #expect(ad.elements.count == 6)
        #expect(ad.flags == [.leGeneralDiscoverable, .brEdrNotSupported])
        #expect(ad.serviceUUIDs == [BluetoothUUID(0x180D)])
        #expect(ad.localName == "Bluetide")
        #expect(ad.txPowerLevel == -12)
        #expect(ad.manufacturerData.first?.companyID == 0x0059)
        #expect(ad.manufacturerData.first?.data == [1, 2])
        #expect(ad.serviceData[BluetoothUUID(0x180F)] == [100])
        #expect(ad.bytes == bytes)
        #expect(ad.fitsLegacyAdvertising)
        #expect(ad.appearance == nil)
    }

    @Test func zeroLengthEndsTheSignificantPart() throws {
        let ad = try AdvertisingData(bytes: gattHex("02 01 06 00 00 00 00"))
        #expect(ad.elements == [.flags([.leGeneralDiscoverable, .brEdrNotSupported])])
        #expect(try AdvertisingData(bytes: []).elements.isEmpty)
        #expect(try AdvertisingData(bytes: [0]).elements.isEmpty)
    }

    @Test func truncatedStructures() throws {
        let bytes = gattHex("02 01 06 05 09 41")
        #expect(throws: DecodingError.truncated("AD data", needed: 4, present: 1, at: 5)) { try AdvertisingData(bytes: bytes) }
        let lenient = AdvertisingData(lenient: bytes)
        #expect(lenient.elements == [.flags([.leGeneralDiscoverable, .brEdrNotSupported])])
        #expect(lenient.truncatedTail == gattHex("05 09 41"))
        // A length octet with no type after it.
        #expect(throws: DecodingError.self) { try AdvertisingData(bytes: gattHex("02 01 06 01")) }
        #expect(AdvertisingData(lenient: gattHex("02 01 06 01")).truncatedTail == [1])
    }

    @Test func malformedKnownTypesAreKeptLeniently() {
        for text in ["01 01", "03 01 06 00", "02 03 0D", "04 05 01 02 03", "01 0A", "03 12 06 00", "02 16 0F", "02 FF 59", "02 19 41", "10 07 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"] {
            let bytes = gattHex(text)
            #expect(throws: DecodingError.self, "\(text)") { try AdvertisingData(bytes: bytes) }
            let lenient = AdvertisingData(lenient: bytes)
            #expect(lenient.elements == [.raw(type: bytes[1], data: Array(bytes.dropFirst(2)))], "\(text)")
            #expect(lenient.bytes == bytes, "kept byte for byte")
        }
    }

    @Test func mergingAScanResponse() throws {
        let adv = try AdvertisingData(bytes: gattHex("02 01 06 03 02 0D 18"))
        let rsp = try AdvertisingData(bytes: gattHex("05 08 42 6C 75 65 05 03 0D 18 0F 18"))
        let merged = adv.merged(withScanResponse: rsp)
        #expect(merged.flags == [.leGeneralDiscoverable, .brEdrNotSupported])
        #expect(merged.localName == "Blue")
        #expect(merged.serviceUUIDs == [BluetoothUUID(0x180D), BluetoothUUID(0x180F)], "union without duplicates")
        #expect(merged.elements.count == 4)
        #expect(merged.connectionIntervalRange == nil)
        // A complete name wins over a shortened one wherever it appears.
        let named = merged.merged(withScanResponse: AdvertisingData([.completeLocalName("Bluetide")]))
        #expect(named.localName == "Bluetide")
    }

    @Test func buildersPickTheShortestUUIDForm() {
        let lists = AdvertisingDataElement.serviceUUIDLists([BluetoothUUID(0x180D), Self.nus, BluetoothUUID(uuid32: 0x1234_5678), BluetoothUUID(0x180F)], complete: true)
        #expect(AdvertisingData(lists).bytes == gattHex("05 03 0D 18 0F 18 05 05 78 56 34 12 11 07 9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 01 00 40 6E"))
        #expect(AdvertisingData([.serviceData(BluetoothUUID(0x180F), [100])]).bytes == gattHex("04 16 0F 18 64"))
        #expect(AdvertisingData([.serviceData(Self.nus, [])]).bytes.count == 18)
    }

    @Test func legacyLengthCheck() {
        let long = AdvertisingData([.completeLocalName(String(repeating: "x", count: 30))])
        #expect(!long.fitsLegacyAdvertising)
        #expect(long.bytes.count == 32)
    }

    @Test func randomizedRobustness() throws {
        var rng = GATTSeededRandom(seed: 0xAD)
        let seeds = Self.vectors.map { gattHex($0.0) }
        for i in 0..<20_000 {
            var input: [UInt8]
            if i % 2 == 0 {
                input = rng.bytes(upTo: 40)
            } else {
                input = (0..<3).flatMap { _ in seeds[Int.random(in: 0..<seeds.count, using: &rng)] }
                if !input.isEmpty, Bool.random(using: &rng) { input[Int.random(in: 0..<input.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
                input = Array(input.prefix(Int.random(in: 0...input.count, using: &rng)))
            }
            let lenient = AdvertisingData(lenient: input)
            #expect(lenient.elements.count <= input.count)
            if let strict = try? AdvertisingData(bytes: input) {
                #expect(strict.elements == lenient.elements)
                #expect(try AdvertisingData(bytes: strict.bytes) == strict)
            }
        }
    }
}
