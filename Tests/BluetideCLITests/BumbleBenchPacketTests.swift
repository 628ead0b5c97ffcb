import BluetideBase
import Testing
@testable import BluetideBench
@testable import BluetideCommands

@Suite struct BumbleBenchPacketTests {
    @Test func bytesMatchBumbleBenchFormat() throws {
        #expect(BumbleBenchPacket.reset.bytes == [0x00])
        let sequence = BumbleBenchPacket.sequence(number: 0x0403_0201, isLast: true, timestampMicroseconds: 0x0807_0605, packetSize: 14)
        #expect(sequence.bytes == [0x01, 0x01, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0, 0, 0, 0])
        #expect(try BumbleBenchPacket(bytes: sequence.bytes) == sequence)
        let notLast = BumbleBenchPacket.sequence(number: 7, isLast: false, timestampMicroseconds: 1, packetSize: 10)
        #expect(notLast.bytes == [0x01, 0x00, 0x07, 0, 0, 0, 0x01, 0, 0, 0])
        let ack = BumbleBenchPacket.ack(number: 299, isLast: true)
        #expect(ack.bytes == [0x02, 0x01, 0x2B, 0x01, 0x00, 0x00])
        #expect(try BumbleBenchPacket(bytes: ack.bytes) == ack)
        #expect(try BumbleBenchPacket(bytes: [0x00]) == .reset)
    }

    @Test func truncatedOrUnknownPacketsNameTheField() {
        let sequence = BumbleBenchPacket.sequence(number: 1, isLast: false, timestampMicroseconds: 2, packetSize: 10).bytes
        for length in 0..<sequence.count {
            #expect(throws: DecodingError.self) { try BumbleBenchPacket(bytes: Array(sequence.prefix(length))) }
        }
        let ack = BumbleBenchPacket.ack(number: 1, isLast: false).bytes
        for length in 1..<ack.count {
            #expect(throws: DecodingError.self) { try BumbleBenchPacket(bytes: Array(ack.prefix(length))) }
        }
        do {
            _ = try BumbleBenchPacket(bytes: [0x03])
            Issue.record("type 03 decoded")
        } catch {
            #expect("\(error)".contains("bench packet.type"))
        }
    }

    @Test func randomInputNeverTraps() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5000 {
            let length = Int.random(in: 0...24, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if !bytes.isEmpty { bytes[0] = bytes[0] % 4 }
            _ = try? BumbleBenchPacket(bytes: bytes)
        }
    }
}
