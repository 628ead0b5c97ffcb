import BluetideBase
import Foundation
import Testing
@testable import BluetideProfiles

/// Thousands of random and truncated inputs through every decoder and catalog entry of this family:
/// each must give a value or a DecodingError, never trap.
@Suite struct COLMIRobustnessTests {
    /// A small deterministic generator so failures reproduce.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func randomInputs(count: Int, seed: UInt64) -> [[UInt8]] {
        var rng = SplitMix(state: seed)
        var out: [[UInt8]] = []
        let opcodes: [UInt8] = [0x01, 0x02, 0x03, 0x15, 0x16, 0x1E, 0x21, 0x2C, 0x2F, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x3C, 0x43, 0x69, 0x73, 0xA1, 0xBC, 0xFF]
        for i in 0..<count {
            let length = Int.random(in: 0...70, using: &rng)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if i % 2 == 0 {
                // Valid-checksum V1 packets with interesting opcodes and sub-bytes reach the field decoders.
                var packet = [opcodes.randomElement(using: &rng) ?? 0] + (0..<14).map { _ in
                    Bool.random(using: &rng) ? UInt8.random(in: 0...5, using: &rng) : UInt8.random(in: 0...255, using: &rng)
                }
                packet.append(COLMIPacket.checksum(of: packet))
                bytes = i % 6 == 0 ? Array(packet.prefix(Int.random(in: 0...16, using: &rng))) : packet
            }
            out.append(bytes)
        }
        return out
    }

    @Test func colmiDecodersNeverTrap() throws {
        var hr = COLMIHeartRateLogAssembler()
        var steps = COLMISportDetailAssembler()
        var stress = COLMIHalfHourHistoryAssembler(opcode: 0x37)
        var big = COLMIBigDataReassembler()
        var values = 0, errors = 0
        for bytes in COLMIRobustnessTests.randomInputs(count: 6000, seed: 42) {
            func tally<T>(_ body: () throws(DecodingError) -> T) {
                do { _ = try body(); values += 1 } catch { errors += 1 }
            }
            tally { () throws(DecodingError) in try COLMIResponse(bytes: bytes) }
            tally { () throws(DecodingError) in try COLMIRequest(bytes: bytes) }
            tally { () throws(DecodingError) in try COLMIBigDataFrame(bytes: bytes) }
            tally { () throws(DecodingError) in try COLMIBigDataPayload(frame: COLMIBigDataFrame(dataID: bytes.first ?? 0x27, truncating: bytes)) }
            tally { () throws(DecodingError) in try COLMISleepHistory(bytes: bytes) }
            tally { () throws(DecodingError) in try COLMISpO2History(bytes: bytes) }
            tally { () throws(DecodingError) in try COLMITemperatureHistory(bytes: bytes) }
            tally { () throws(DecodingError) in try COLMIRawSensorSample(payload: bytes) }
            tally { () throws(DecodingError) in try COLMIDeviceNotification(payload: bytes) }
            tally { () throws(DecodingError) in try big.feed(bytes) }
            if let packet = try? COLMIPacket(exactly: bytes) {
                tally { () throws(DecodingError) in try hr.feed(packet) }
                tally { () throws(DecodingError) in try steps.feed(packet) }
                tally { () throws(DecodingError) in try stress.feed(packet) }
                // Whatever decodes re-encodes to the same packet.
                if let response = try? COLMIResponse(packet: packet) {
                    #expect(try COLMIResponse(packet: response.packet) == response)
                }
            }
        }
        #expect(values > 1000 && errors > 1000, "the inputs exercise both outcomes")
    }

    @Test func everyCatalogEntryNeverTraps() {
        for descriptor in ProfileCatalog.deviceProfiles {
            var decoder = descriptor.makeDecoder(ProfileOptions())
            var ok = 0
            let valid: [[UInt8]] = [
                [0x03, 0x40] + Array(repeating: 0, count: 13) + [0x43], [0x9C, 0x01, 0, 0, 0x03, 0x01, 0x07, 0], [3, 1, 5],
                [0xDC, 0x05, 0xE8, 0x03], [0x12, 0x14, 0x00],
            ]
            let inputs = valid + COLMIRobustnessTests.randomInputs(count: 3000, seed: UInt64(descriptor.name.utf8.count))
            for (i, bytes) in inputs.enumerated() {
                if let decoded = try? decoder.decode(bytes, at: Double(i)) {
                    ok += 1
                    #expect(!decoded.summary.isEmpty)
                    #expect((try? JSONEncoder().encode(COLMIAnyEncodable(decoded.value))) != nil, "\(descriptor.name) value encodes to JSON")
                }
            }
            #expect(ok > 0, "\(descriptor.name) decodes something")
        }
        #expect(Set(ProfileCatalog.deviceProfiles.map(\.name)) == ["colmi", "punch-response", "punch-sequence", "punch-time-sequence", "punch-control"])
    }
}
