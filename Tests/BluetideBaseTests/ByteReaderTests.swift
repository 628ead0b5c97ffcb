import Testing
@testable import BluetideBase

@Suite struct ByteReaderTests {
    @Test func readsLittleAndBigEndianIntegers() throws {
        var r = ByteReader([0x34, 0x12, 0x12, 0x34, 0x01, 0x02, 0x03, 0xFF, 0xFF, 0xFF])
        #expect(try r.read(UInt16.self, "a") == 0x1234)
        #expect(try r.read(UInt16.self, "b", .big) == 0x1234)
        #expect(try r.readUInt24("c") == 0x030201)
        #expect(try r.readInt24("d") == -1)
        #expect(r.isAtEnd)
    }

    @Test func fortyEightBitAndSigned() throws {
        var r = ByteReader([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFB, 0xFF])
        #expect(try r.readUInt48("a") == 0x060504030201)
        #expect(try r.readInt48("b") == -2)
        #expect(try r.read(Int16.self, "power") == -5)
    }

    @Test func truncationNamesFieldNeededAndPresent() {
        var r = ByteReader([0x01, 0x02, 0x03])
        _ = try? r.readUInt8("flags")
        #expect(throws: DecodingError.truncated("wheel revolutions", needed: 4, present: 2, at: 1)) {
            try r.read(UInt32.self, "wheel revolutions")
        }
        let error = DecodingError.truncated("wheel revolutions", needed: 4, present: 2, at: 1)
        #expect(error.description == "wheel revolutions at byte 1: needs 4 bytes, 2 present")
        #expect(r.offset == 1, "a failed read consumes nothing")
    }

    @Test func writerRoundTripsEveryWidth() throws {
        var w = ByteWriter()
        w.write(UInt8(0xAB)); w.write(Int16(-2)); w.writeUInt24(0x123456); w.writeInt24(-3)
        w.write(UInt32(0xDEADBEEF), .big); w.writeUInt48(0x0102_0304_0506); w.writeInt48(-7); w.write(Int64.min)
        var r = ByteReader(w.bytes)
        #expect(try r.readUInt8("a") == 0xAB)
        #expect(try r.read(Int16.self, "b") == -2)
        #expect(try r.readUInt24("c") == 0x123456)
        #expect(try r.readInt24("d") == -3)
        #expect(try r.read(UInt32.self, "e", .big) == 0xDEADBEEF)
        #expect(try r.readUInt48("f") == 0x0102_0304_0506)
        #expect(try r.readInt48("g") == -7)
        #expect(try r.read(Int64.self, "h") == .min)
        #expect(r.isAtEnd)
    }

    @Test func deviceStringsTrimPaddingAndFallBackToLatin1() throws {
        #expect(String(deviceBytes: Array("R02_V3.0".utf8) + [0, 0]) == "R02_V3.0")
        #expect(String(deviceBytes: [0x43, 0x61, 0x66, 0xE9, 0x20]) == "Café")
        var r = ByteReader([0xFF, 0xFE])
        #expect(throws: DecodingError.self) { try r.readString(nil, "name") }
    }

    @Test func hexParsing() throws {
        #expect(try Hex.parse("16 4E 1C") == [0x16, 0x4E, 0x1C])
        #expect(try Hex.parse("0x16,0x4e") == [0x16, 0x4E])
        #expect(try Hex.parse("a4:09") == [0xA4, 0x09])
        #expect(throws: Hex.ParseError.self) { try Hex.parse("1G") }
        #expect(throws: Hex.ParseError.self) { try Hex.parse("123") }
        #expect(throws: Hex.ParseError.self) { try Hex.parse("\u{FF10}\u{FF12}") }
        #expect([0x16, 0x4E].hexString == "164e")
    }

    @Test func gattPayloadAssemblesAndSplits() throws {
        let bytes = GATTPayload.encode(UInt8(1), UInt16(0x0203), true)
        #expect(bytes == [1, 3, 2, 1])
        let (a, b, c) = try GATTPayload.decode(bytes, as: UInt8.self, UInt16.self, Bool.self)
        #expect(a == 1 && b == 0x0203 && c)
        #expect(throws: DecodingError.self) { try GATTPayload.decode([1, 2], as: UInt8.self, UInt16.self) }
        #expect(try [UInt16](bytes: [1, 0, 2, 0]) == [1, 2])
        #expect(throws: DecodingError.self) { try [UInt16](bytes: [1, 0, 2]) }
    }
}

@Suite struct IdentifierTests {
    @Test func uuidFormsAreEqual() throws {
        let short = BluetoothUUID(0x180D)
        #expect(try BluetoothUUID("180D") == short)
        #expect(try BluetoothUUID("0x180d") == short)
        #expect(try BluetoothUUID("0000180D-0000-1000-8000-00805F9B34FB") == short)
        #expect(try BluetoothUUID("0000180d00001000800000805f9b34fb") == short)
        #expect(short.uuid16 == 0x180D)
        #expect(short.littleEndianBytes == [0x0D, 0x18])
        #expect(short.uuidString == "0000180D-0000-1000-8000-00805F9B34FB")
        #expect(short.description == "180D (Heart Rate)")
        #expect(try BluetoothUUID(littleEndian: [0x0D, 0x18]) == short)
        #expect(try BluetoothUUID(littleEndian: [0x0D, 0x18, 0, 0]) == short)
    }

    @Test func vendorUUIDs() throws {
        let nus = try BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(nus.uuid16 == nil)
        #expect(nus.littleEndianBytes.count == 16)
        #expect(nus.littleEndianBytes.first == 0x9E)
        #expect(try BluetoothUUID(littleEndian: nus.littleEndianBytes) == nus)
        #expect(nus.name == "Nordic UART")
        #expect(throws: BluetoothUUID.ParseError.self) { try BluetoothUUID("18D") }
        #expect(throws: BluetoothUUID.ParseError.self) { try BluetoothUUID("\u{FF10}\u{FF12}A3") }
        #expect(throws: BluetoothUUID.ParseError.self) { try BluetoothUUID("6E400001-B5A3F393-E0A9-E50E24DCCA9E") }
        #expect(throws: DecodingError.self) { try BluetoothUUID(littleEndian: [1, 2, 3]) }
    }

    @Test func addresses() throws {
        let a = try BluetoothAddress("C6:C5:C4:C3:C2:C1", type: .random)
        #expect(a.littleEndianBytes == [0xC1, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6])
        #expect(a.randomKind == .static)
        #expect(a.description == "C6:C5:C4:C3:C2:C1/R")
        #expect(try BluetoothAddress("70:CB:0D:D0:34:1C/P").randomKind == nil)
        #expect(try BluetoothAddress("40:00:00:00:00:01/R").randomKind == .resolvablePrivate)
        #expect(try BluetoothAddress("00:00:00:00:00:01/R").randomKind == .nonResolvablePrivate)
        #expect(try BluetoothAddress(littleEndian: a.littleEndianBytes, type: .random) == a)
        #expect(throws: BluetoothAddress.ParseError.self) { try BluetoothAddress("C6:C5:C4") }
        #expect(throws: BluetoothAddress.ParseError.self) { try BluetoothAddress("C6:C5:C4:C3:C2:ZZ") }
        #expect(BluetoothAddress.randomStatic(1).randomKind == .static)
    }
}
