import Foundation
import Testing
@testable import Bluetide

/// The remembered-devices store and the RSSI helpers.
@Suite struct RememberedDevicesTests {
    static func temporaryStore() -> RememberedDevices {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluetide-test-\(UUID().uuidString)")
        return RememberedDevices(url: directory.appendingPathComponent("devices.json"))
    }

    @Test func defaultLocationFollowsXDG() {
        #expect(RememberedDevices.defaultURL(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"]).path
            == "/data/bluetide/devices.json")
        #expect(RememberedDevices.defaultURL(environment: ["HOME": "/home/u"]).path
            == "/home/u/.local/share/bluetide/devices.json")
        #expect(RememberedDevices.defaultURL(environment: ["XDG_DATA_HOME": "relative", "HOME": "/home/u"]).path
            == "/home/u/.local/share/bluetide/devices.json")
    }

    @Test func rememberUpdatesAndForgets() throws {
        let store = Self.temporaryStore()
        #expect(try store.load().isEmpty)
        let ring = try BluetoothAddress("C6:C5:C4:C3:C2:C1", type: .random)
        let strap = try BluetoothAddress("00:11:22:33:44:55", type: .public)
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        try store.remember(RememberedDevice(address: ring, name: "R02", kind: "ring", lastSeen: t))
        try store.remember(RememberedDevice(address: strap, name: "HRM", kind: "heart-rate", lastSeen: t + 10))
        try store.remember(RememberedDevice(address: ring, name: "R02 new", kind: "ring", lastSeen: t + 20))
        let devices = try store.load()
        #expect(devices.map(\.address) == [ring, strap])
        #expect(devices[0].name == "R02 new" && devices[0].address.type == .random)
        #expect(devices[1].address.type == .public && devices[1].kind == "heart-rate" && devices[1].lastSeen == t + 10)
        #expect(try store.forget(ring))
        #expect(try !store.forget(ring))
        #expect(try store.load().map(\.address) == [strap])
    }

    @Test func corruptFilesNameTheLineAndField() throws {
        let store = Self.temporaryStore()
        try FileManager.default.createDirectory(at: store.url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let badAddress = """
        {
          "version": 1,
          "devices": [
            { "address": "C6:C5:C4:C3:C2:C1", "addressType": "random", "lastSeen": "2026-01-01T00:00:00Z" },
            { "address": "not-an-address", "addressType": "random", "lastSeen": "2026-01-01T00:00:00Z" }
          ]
        }
        """
        try Data(badAddress.utf8).write(to: store.url)
        do {
            _ = try store.load()
            Issue.record("a corrupt file loaded")
        } catch let error as RememberedDevicesError {
            #expect(error.field == "devices[1].address")
            #expect(error.line == 5)
            #expect("\(error)".contains("not-an-address"))
        }
        let badType = badAddress.replacingOccurrences(of: "\"addressType\": \"random\", \"lastSeen\": \"2026-01-01T00:00:00Z\" }\n  ]", with: "\"addressType\": \"weird\", \"lastSeen\": \"2026-01-01T00:00:00Z\" }\n  ]")
        try Data(badType.utf8).write(to: store.url)
        #expect(throws: RememberedDevicesError.self) { _ = try store.load() }
        try Data("{ \"version\": 1, \"devices\": [ { \"address\": \"C6:C5:C4:C3:C2:C1\" } ] }".utf8).write(to: store.url)
        do {
            _ = try store.load()
            Issue.record("a device without addressType loaded")
        } catch let error as RememberedDevicesError {
            #expect(error.field == "devices[0].addressType")
            #expect(error.reason.contains("missing"))
        }
        try Data("{ \"version\": 1, \"devices\": [ ".utf8).write(to: store.url)
        do {
            _ = try store.load()
            Issue.record("truncated JSON loaded")
        } catch let error as RememberedDevicesError {
            #expect(error.reason.contains("not valid JSON"))
        }
    }
}

@Suite struct RememberedRSSITests {
    @Test func colourRunsFromRedToGreen() {
        let weak = RSSIColor(rssi: -127)
        #expect(weak.red == 255 && weak.green == 0 && weak.blue == 0)
        #expect(RSSIColor(rssi: -200) == weak)
        let strong = RSSIColor(rssi: -20)
        #expect(strong.red == 0 && strong.green == 255)
        #expect(RSSIColor(rssi: 0) == strong)
        let middle = RSSIColor(rssi: -73)  // close to the middle of −127…−20
        #expect(middle.red > 200 && middle.green > 200)
        #expect(weak.ansi256 == 196 && strong.ansi256 == 46)
        #expect(strong.hex == "#00FF00")
        #expect(weak.colorize("x") == "\u{1B}[38;5;196mx\u{1B}[0m")
        // Greener as the signal gets stronger.
        var previous = Int.min
        for rssi in stride(from: -127, through: -20, by: 1) {
            let green = Int(RSSIColor(rssi: rssi).green) - Int(RSSIColor(rssi: rssi).red)
            #expect(green >= previous)
            previous = green
        }
    }

    @Test func rankingIsStrongestFirstThenEarliest() {
        let t = Date(timeIntervalSince1970: 0)
        let a = Advertisement(address: .randomStatic(1), rssi: -70, firstSeen: t)
        let b = Advertisement(address: .randomStatic(2), rssi: -40, firstSeen: t + 5)
        let c = Advertisement(address: .randomStatic(3), rssi: -70, firstSeen: t - 5)
        #expect(RSSIRanking.ranked([a, b, c]).map(\.address) == [b.address, c.address, a.address])
    }
}
