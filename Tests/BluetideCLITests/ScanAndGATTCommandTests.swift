import BluetideSupport
import Foundation
import Testing
@testable import BluetideCommands

@Suite struct ScanAndGATTCommandTests {
    @Test func scanListsTheEmulatedDevicesStrongestFirst() async throws {
        let collector = LineCollector()
        let command = try ScanCommand.parse(
            ["--transport", privateLink(), "--emulate", "heart-rate@-70,csc@-45", "--scan-time", "30"])
        // The 5 s scan passes in virtual time: every emulated device is heard however busy the machine.
        try await inVirtualTime { try await command.execute(collector.output, clock: $0) }
        let lines = collector.lines
        #expect(lines.count == 3, "lines: \(lines)")
        #expect(lines.first?.hasPrefix("ADDRESS") == true)
        let csc = try #require(lines.firstIndex { $0.contains("Bluetide CSC") }, "lines: \(lines)")
        let hrm = try #require(lines.firstIndex { $0.contains("Bluetide HRM") }, "lines: \(lines)")
        #expect(csc < hrm)
        #expect(lines[csc].contains("-45") && lines[hrm].contains("-70"))
        #expect(lines[hrm].contains("Heart Rate"), "services by name: \(lines[hrm])")
        #expect(!lines.joined().contains("\u{1B}["), "no escape codes when not a terminal")
    }

    @Test func scanJSONGivesOneObjectPerDeviceAndAppliesFilters() async throws {
        let collector = LineCollector()
        let command = try ScanCommand.parse(
            ["--transport", privateLink(), "--emulate", "heart-rate@-60,csc@-50,hm10@-80", "--scan-time", "30",
             "--json", "--service", "180D"])
        try await inVirtualTime { try await command.execute(collector.output, clock: $0) }
        let objects = collector.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == 1, "lines: \(collector.lines)")
        let device = objects.first?["device"] as? [String: Any]
        #expect(device?["name"] as? String == "Bluetide HRM")
        #expect(objects.first?["rssiDbm"] as? Int == -60)

        let weak = LineCollector()
        let strongOnly = try ScanCommand.parse(
            ["--transport", privateLink(), "--emulate", "heart-rate@-60,csc@-50,hm10@-80", "--timeout", "30",
             "--json", "--min-rssi", "-65", "--name-prefix", "Bluetide"])
        try await inVirtualTime { try await strongOnly.execute(weak.output, clock: $0) }
        let names = weak.lines.compactMap { ((try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["device"] as? [String: Any])?["name"] as? String }
        #expect(names == ["Bluetide CSC", "Bluetide HRM"])
    }

    /// Runs `body` with a fresh manual clock, driven in virtual time.
    @Test func gattFailsWhenEveryReadFailed() throws {
        var tally = ReadTally()
        try tally.check("Strap")  // nothing to read: success
        tally.attempted = 3
        tally.failed = 2
        try tally.check("Strap")  // one read worked: success
        tally.failed = 3
        let failure = #expect(throws: CommandFailure.self) { try tally.check("Strap") }
        #expect(failure?.message.contains("all 3 reads failed") == true)
    }

    @Test func gattDumpsTheHeartRateServiceWithDecodedValues() async throws {
        let collector = LineCollector()
        let command = try GATTCommand.parse(["Bluetide HRM", "--transport", privateLink(), "--emulate", "heart-rate"])
        try await inVirtualTime { try await command.execute(collector.output, clock: $0) }
        let text = collector.lines.joined(separator: "\n")
        #expect(text.contains("service 180D Heart Rate"), "\(text)")
        let location = try #require(collector.lines.first { $0.contains("2A38") }, "\(text)")
        #expect(location.contains("read") && location.contains("01"), "\(location)")
        #expect(location.lowercased().contains("chest"), "decoded body sensor location: \(location)")
        let measurement = try #require(collector.lines.first { $0.contains("2A37") })
        #expect(measurement.contains("notify"))
        #expect(text.contains("descriptor 2902"), "CCCD listed: \(text)")
        let cccd = try #require(collector.lines.first { $0.contains("descriptor 2902") })
        #expect(cccd.contains("= 00 00") && cccd.contains("not subscribed"), "CCCD value read and explained: \(cccd)")
        #expect(collector.lines.contains { $0.contains("2A19") && $0.contains("%") }, "battery decoded: \(text)")

        let json = LineCollector()
        let jsonCommand = try GATTCommand.parse(["Bluetide HRM", "--transport", privateLink(), "--emulate", "heart-rate", "--json"])
        try await inVirtualTime { try await jsonCommand.execute(json.output, clock: $0) }
        #expect(json.lines.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data((json.lines.first ?? "").utf8)) as? [String: Any])
        let services = try #require(object["services"] as? [[String: Any]])
        let heartRate = try #require(services.first { $0["uuid"] as? String == "180D" })
        let characteristics = try #require(heartRate["characteristics"] as? [[String: Any]])
        let sensor = try #require(characteristics.first { $0["uuid"] as? String == "2A38" })
        // One schema (docs/json-output.md): a characteristic's value is an object with hex and decoded.
        let sensorValue = try #require(sensor["value"] as? [String: Any])
        #expect(sensorValue["hex"] as? String == "01")
        #expect(sensorValue["decoded"] != nil)
        let measurementEntry = try #require(characteristics.first { $0["uuid"] as? String == "2A37" })
        let descriptors = try #require(measurementEntry["descriptors"] as? [[String: Any]])
        let cccdEntry = try #require(descriptors.first { $0["uuid"] as? String == "2902" })
        let cccdValue = try #require(cccdEntry["value"] as? [String: Any])
        #expect(cccdValue["hex"] as? String == "0000")
        #expect(cccdValue["summary"] as? String == "not subscribed")
    }
}
