import BluetideBase
import Foundation
import Testing
@testable import BluetideProfiles

@Suite struct COLMIJSONTests {
    static func json(_ value: any Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(COLMIAnyEncodable(value)), as: UTF8.self)
    }

    @Test func valuesEncodeWithReadableNames() throws {
        #expect(try Self.json(COLMIResponse.battery(COLMIBattery(levelPercent: 64, isCharging: false)))
            == #"{"kind":"battery","value":{"isCharging":false,"levelPercent":64}}"#)
        let log = COLMIHeartRateLog(requestTimestamp: 1_723_248_000, bpmBySlot: [0, 72] + Array(repeating: 0, count: 286))
        let text = try Self.json(log)
        #expect(text.contains(#""dayStart":"2024-08-10 00:00:00""#))
        #expect(text.contains(#""measurements":[{"bpm":72,"index":1,"minuteOfDay":5,"timestamp":1723248300}]"#))
        #expect(try Self.json(COLMIAssemblyProgress<COLMIHeartRateLog>.inProgress(received: 3, total: 24))
            == #"{"kind":"inProgress","value":{"received":3,"total":24}}"#)
        #expect(try Self.json(PunchControlStatus.finished(stepsDone: 20)) == #"{"status":"finished","stepsDone":20}"#)
        #expect(try Self.json(SerialLine(bytes: Array("hi".utf8))) == #"{"overflowed":false,"text":"hi"}"#)
        #expect(try Self.json(COLMIRequest.battery).contains(#""packetHex":"03000000000000000000000000000003""#))
    }

    @Test func clearingFutureSlots() {
        let log = COLMIHeartRateLog(requestTimestamp: 1_723_248_000, bpmBySlot: Array(repeating: 60, count: 288))
        let cleared = log.clearingSlots(after: 1_723_248_000 + 3600)
        #expect(cleared.measurements.count == 13, "slots 00:00 through 01:00")
        #expect(log.packets.count == 24 && log.receivedValueCount == 295)
    }
}
