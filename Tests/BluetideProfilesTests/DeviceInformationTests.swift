import BluetideBase
import Testing
@testable import BluetideProfiles

@Suite struct DeviceInformationTests {
    @Test func batteryLevel() throws {
        let level = try BatteryLevel(exactly: [0x5A])
        #expect(level.percent == 90)
        #expect(level.bytes == [0x5A])
        #expect(level.summary == "90 %")
        #expect(try BatteryLevel(bytes: [0xC8]).summary == "200 % (out of range)")
        #expect(throws: DecodingError.truncated("Battery Level", needed: 1, present: 0, at: 0)) {
            try BatteryLevel(bytes: [])
        }
    }

    @Test func strings() throws {
        #expect(try DeviceInformationString(bytes: Array("Wahoo Fitness".utf8) + [0, 0]).text == "Wahoo Fitness")
        #expect(try DeviceInformationString(bytes: Array("KICKR  \n".utf8)).text == "KICKR")
        #expect(try DeviceInformationString(bytes: [0x43, 0x61, 0x66, 0xE9]).text == "Café", "Latin-1 fallback")
        #expect(try DeviceInformationString(bytes: Array("Café".utf8)).text == "Café")
        #expect(try DeviceInformationString(bytes: []).text == "")
        #expect(DeviceInformationString("1.2.3").bytes == Array("1.2.3".utf8))
    }

    @Test func systemID() throws {
        let bytes = fitnessHex("DE BC 9A FE FF 56 34 12")
        let id = try SystemID(exactly: bytes)
        #expect(id.organizationallyUniqueIdentifier == 0x123456)
        #expect(id.manufacturerIdentifier == 0xFF_FE9A_BCDE)
        #expect(id.rawValue == 0x1234_56FF_FE9A_BCDE)
        #expect(id.bytes == bytes)
        #expect(SystemID(manufacturerIdentifier: 0xFF_FE9A_BCDE, organizationallyUniqueIdentifier: 0x123456).bytes == bytes)
        #expect(id.summary == "OUI 12:34:56, identifier FF:FE:9A:BC:DE")
        #expect(throws: DecodingError.truncated("System ID", needed: 8, present: 7, at: 0)) {
            try SystemID(bytes: Array(bytes.prefix(7)))
        }
    }

    @Test func pnpID() throws {
        let bytes = fitnessHex("02 6B 1D 46 02 10 01")
        let id = try PnPID(exactly: bytes)
        #expect(id.vendorIDSource == .usbImplementersForum)
        #expect(id.vendorID == 0x1D6B)
        #expect(id.productID == 0x0246)
        #expect(id.productVersion == 0x0110)
        #expect(id.versionText == "1.1.0")
        #expect(id.bytes == bytes)
        #expect(id.summary == "USB-IF vendor 0x1D6B, product 0x0246, version 1.1.0")
        fitnessExpectTruncations(PnPID.self, bytes, fields: [
            (0, "PnP ID.vendor ID source"), (1, "PnP ID.vendor ID"), (2, "PnP ID.vendor ID"),
            (3, "PnP ID.product ID"), (4, "PnP ID.product ID"), (5, "PnP ID.product version"),
            (6, "PnP ID.product version"),
        ])
    }
}
