import BluetideBase
import Foundation
import Testing
@testable import BluetideProfiles

@Suite struct COLMICatalogTests {
    static func colmiDecoder() throws -> any PacketDecoder {
        let descriptor = try #require(ProfileCatalog.deviceProfiles.first { $0.name == "colmi" })
        #expect(descriptor.isStateful && descriptor.characteristic == COLMIUUID.notify)
        return descriptor.makeDecoder(ProfileOptions())
    }

    @Test func decodesSingleV1Packets() throws {
        var decoder = try Self.colmiDecoder()
        let battery = try decoder.decode(try COLMIVector.v1("03 40", checksum: 0x43), at: 0)
        #expect(battery.summary == "battery 64 %, not charging")
        #expect(battery.derived == nil)
        let hr = try decoder.decode(try COLMIVector.v1("69 01 00 4e", checksum: 0xB8), at: 1)
        #expect(hr.summary == "real-time HR 78 bpm")
        let json = String(decoding: try JSONEncoder().encode(COLMIAnyEncodable(hr.value)), as: UTF8.self)
        #expect(json.contains("\"kind\":\"realTimeReading\"") && json.contains("\"value\":78"))
        #expect(throws: DecodingError.self) { try decoder.decode(try COLMIVector.v1("03 40", checksum: 0x44), at: 2) }
        #expect(throws: DecodingError.self) { try decoder.decode([0x03, 0x40], at: 3) }
    }

    @Test func reassemblesTheHeartRateLogAcrossCalls() throws {
        var decoder = try Self.colmiDecoder()
        let packets = try COLMIAssemblerTests.heartRateLogPackets()
        var derived: (any Encodable & Sendable)?
        for (i, bytes) in packets.enumerated() {
            if i == 5 { _ = try decoder.decode(try COLMIVector.v1("73 0c 15", checksum: 0x94), at: Double(i)) }
            let decoded = try decoder.decode(bytes, at: Double(i))
            if i < 23 { #expect(decoded.derived == nil) } else { derived = decoded.derived }
            if i == 23 { #expect(decoded.summary.contains("HR log of 2024-08-10 complete, 6 measurements")) }
        }
        let history = try #require(derived as? COLMIAssembledHistory)
        guard case let .heartRateLog(log) = history else {
            Issue.record("not an HR log")
            return
        }
        #expect(log.measurements.count == 6)
    }

    @Test func decodesBigDataSplitAcrossNotifications() throws {
        var decoder = try Self.colmiDecoder()
        let bytes = try Hex.parse(COLMIBigDataTests.sleepFrameHex)
        let first = try decoder.decode(Array(bytes[0..<20]), at: 0)
        #expect(first.summary == "big data: 20 of 57 bytes received")
        // Continuation chunks do not start with 0xBC; the decoder knows a frame is in progress.
        _ = try decoder.decode(Array(bytes[20..<40]), at: 1)
        let last = try decoder.decode(Array(bytes[40...]), at: 2)
        #expect(last.summary.hasPrefix("sleep: 0 days ago 22:23-09:02, 639 min"))
        // Then V1 packets decode again.
        #expect(try decoder.decode(try COLMIVector.v1("2f f1", checksum: 0x20), at: 3).summary == "packet size 241")
    }

    @Test func stepsCompleteThroughTheCatalog() throws {
        var decoder = try Self.colmiDecoder()
        _ = try decoder.decode(try COLMIVector.v1("43 f0 05 01", checksum: 0x39), at: 0)
        var last: DecodedPacket?
        for hex in COLMIAssemblerTests.stepRecords { last = try decoder.decode(try COLMIVector.full(hex), at: 1) }
        #expect(last?.summary.contains("sport detail complete: 1674 steps, 1189 m") == true)
    }
}

/// Lets a test JSON-encode an `any Encodable`.
struct COLMIAnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

@Suite struct COLMICatalogSequenceTests {
    @Test func sequenceProblemsAreReportedNotThrown() throws {
        var decoder = try COLMICatalogTests.colmiDecoder()
        // A capture that starts in the middle of an HR log reply.
        let midway = try decoder.decode(try COLMIPacket(opcode: 0x15, payload: [5]).bytes, at: 0)
        #expect(midway.summary.hasPrefix("HR log 5: slots 48-60, 0 measured"))
        #expect(midway.summary.contains("[not reassembled: COLMI HR log.sequence"))
        #expect(midway.derived == nil)
    }
}
