import Foundation
import BluetideBase
import Testing
@testable import BluetideBench
@testable import BluetideCommands

/// The bench scenarios' protocol logic, without I/O: what each side sends and how it counts.
@Suite struct BumbleBenchScenarioTests {
    static func settings(_ scenario: BumbleBenchScenario, count: Int = 3, size: Int = 20, pace: Double = 0) -> BumbleBenchSettings {
        BumbleBenchSettings(scenario: scenario, packetCount: count, packetSize: size, paceMilliseconds: pace, startDelaySeconds: 0)
    }

    @Test func senderMakesResetThenNumberedPacketsWithTheLastFlagged() {
        var sender = BumbleBenchSender(settings: Self.settings(.send, count: 3, size: 20))
        #expect(sender.reset(at: 0) == [0x00])
        let first = sender.nextPacket(at: 0.5)
        // 01 | flags | sequence u32 | timestamp µs u32 (500000) | 10 zero octets
        #expect(first == [0x01, 0x00, 0, 0, 0, 0, 0x20, 0xA1, 0x07, 0x00] + [UInt8](repeating: 0, count: 10))
        _ = sender.nextPacket(at: 0.75)
        #expect(!sender.hasSentAll)
        let last = sender.nextPacket(at: 1)
        #expect(last.count == 20)
        #expect(Array(last.prefix(6)) == [0x01, 0x01, 2, 0, 0, 0])
        #expect(sender.hasSentAll)
        #expect(sender.bytesSent == 60)
    }

    @Test func sendEndsOnTheAckAndMeasuresFromTheReset() {
        var sender = BumbleBenchSender(settings: Self.settings(.send, count: 2, size: 100))
        _ = sender.reset(at: 10)
        _ = sender.nextPacket(at: 10)
        _ = sender.nextPacket(at: 10.1)
        let r1 = sender.receive([0x00], at: 10.2)
        #expect(!r1, "a RESET from the peer does not end the run")
        let r2 = sender.receive([0x07], at: 10.2)
        #expect(!r2, "an undecodable packet does not end the run")
        let r3 = sender.receive(BumbleBenchPacket.ack(number: 1, isLast: true).bytes, at: 10.5)
        #expect(r3)
        let report = sender.report(role: .central, mtu: 247)
        #expect(report.packets == 2 && report.bytes == 200)
        #expect(abs(report.seconds - 0.5) < 1e-9)
        #expect(abs(report.bytesPerSecond - 400) < 1e-6)
        #expect(report.invalid == 1)
        #expect(!report.isClean)
    }

    @Test func pingTimesEachAckAndFlagsOutOfOrderOnes() throws {
        var ping = BumbleBenchSender(settings: Self.settings(.ping, count: 3, size: 10))
        _ = ping.reset(at: 0)
        _ = ping.nextPacket(at: 1.0)
        _ = ping.nextPacket(at: 2.0)
        _ = ping.nextPacket(at: 3.0)
        let r4 = ping.receive(BumbleBenchPacket.ack(number: 0, isLast: false).bytes, at: 1.010)
        #expect(!r4)
        let r5 = ping.receive(BumbleBenchPacket.ack(number: 9, isLast: false).bytes, at: 2.5)
        #expect(!r5, "an ACK for a packet never sent")
        let r6 = ping.receive(BumbleBenchPacket.ack(number: 1, isLast: false).bytes, at: 2.030)
        #expect(!r6)
        let r7 = ping.receive(BumbleBenchPacket.ack(number: 2, isLast: true).bytes, at: 3.020)
        #expect(r7)
        let report = ping.report(role: .peripheral, mtu: 23)
        let rtt = try #require(report.roundTrip)
        #expect(rtt.count == 3)
        #expect(abs(rtt.min - 10) < 1e-6 && abs(rtt.max - 30) < 1e-6 && abs(rtt.mean - 20) < 1e-6)
        #expect(abs(rtt.stdev - 10) < 1e-6, "sample standard deviation")
        #expect(report.unexpected == 1)
    }

    @Test func pacedPacketsAreDueAtTheirSlot() {
        var sender = BumbleBenchSender(settings: Self.settings(.send, pace: 20))
        _ = sender.reset(at: 5)
        #expect(sender.dueTime(of: 0) == 5)
        #expect(abs(sender.dueTime(of: 3)! - 5.06) < 1e-9)
        let unpaced = BumbleBenchSender(settings: Self.settings(.send))
        #expect(unpaced.dueTime(of: 3) == nil)
    }

    @Test func receiverAcksOnlyTheLastPacketAndCountsFromTheReset() {
        var receiver = BumbleBenchReceiver(scenario: .receive, at: 0)
        let r8 = receiver.receive([0x00], at: 1)
        #expect(r8.wasReset)
        let p0 = BumbleBenchPacket.sequence(number: 0, isLast: false, timestampMicroseconds: 0, packetSize: 30).bytes
        let p1 = BumbleBenchPacket.sequence(number: 1, isLast: true, timestampMicroseconds: 100_000, packetSize: 30).bytes
        let r9 = receiver.receive(p0, at: 1.5)
        #expect(r9 == .init())
        let outcome = receiver.receive(p1, at: 1.6)
        #expect(outcome.runEnded)
        #expect(outcome.reply == [0x02, 0x01, 0x01, 0, 0, 0])
        let report = receiver.report(role: .peripheral, mtu: 517)
        #expect(report.packets == 2 && report.bytes == 60 && report.packetSize == 30)
        #expect(abs(report.seconds - 0.6) < 1e-9)
        #expect(report.isClean)
    }

    @Test func receiverCountsMissingReorderedAndGarbledPackets() {
        var receiver = BumbleBenchReceiver(scenario: .receive, at: 0)
        func packet(_ n: UInt32, last: Bool = false) -> [UInt8] {
            BumbleBenchPacket.sequence(number: n, isLast: last, timestampMicroseconds: n * 1000, packetSize: 10).bytes
        }
        _ = receiver.receive(packet(0), at: 0.1)
        _ = receiver.receive(packet(3), at: 0.2)  // 1 and 2 skipped
        _ = receiver.receive(packet(1), at: 0.3)  // late
        _ = receiver.receive([0x01, 0x00, 0x05], at: 0.35)  // truncated
        let end = receiver.receive(packet(4, last: true), at: 0.4)
        #expect(end.runEnded)
        let report = receiver.report(role: .central, mtu: 23)
        #expect(report.missing == 2)
        #expect(report.outOfOrder == 1)
        #expect(report.invalid == 1)
        #expect(report.packets == 4)
        #expect(!report.isClean)
        #expect(report.line.contains("2 missing") && report.line.contains("1 out of order") && report.line.contains("1 undecodable"))
    }

    @Test func pongAnswersEveryPacketWithItsNumberAndFlags() {
        var pong = BumbleBenchReceiver(scenario: .pong, at: 0)
        let middle = pong.receive(BumbleBenchPacket.sequence(number: 7, isLast: false, timestampMicroseconds: 0, packetSize: 10).bytes, at: 1)
        #expect(middle.reply == BumbleBenchPacket.ack(number: 7, isLast: false).bytes)
        #expect(!middle.runEnded)
        let last = pong.receive(BumbleBenchPacket.sequence(number: 8, isLast: true, timestampMicroseconds: 0, packetSize: 10).bytes, at: 2)
        #expect(last.reply == BumbleBenchPacket.ack(number: 8, isLast: true).bytes)
        #expect(last.runEnded)
        let r10 = pong.receive([0x02, 0x00, 0, 0, 0, 0], at: 3)
        #expect(r10 == .init(), "an ACK is ignored")
    }

    @Test func jitterIsMeasuredAgainstTheSendersTimestamps() throws {
        var receiver = BumbleBenchReceiver(scenario: .receive, at: 0)
        // Sent every 10 ms; arrivals 0, +10, +25 (5 ms late), +30 ms.
        let arrivals: [(UInt32, Double)] = [(0, 1.000), (1, 1.010), (2, 1.025), (3, 1.030)]
        for (n, t) in arrivals {
            _ = receiver.receive(BumbleBenchPacket.sequence(number: n, isLast: n == 3, timestampMicroseconds: n * 10_000, packetSize: 10).bytes, at: t)
        }
        #expect(receiver.jitter.count == 4)
        #expect(abs(receiver.jitter[2] - 0.005) < 1e-9)
        let jitter = try #require(receiver.report(role: .central, mtu: 23).jitter)
        // Around the mean (1.25 ms): 1.25, 1.25, 3.75, 1.25 ms.
        #expect(abs(jitter.max - 3.75) < 1e-6)
        #expect(abs(jitter.mean - 1.875) < 1e-6)
    }

    @Test func scenariosPairAndSettingsNameTheBadOption() {
        #expect(BumbleBenchScenario.send.peer == .receive && BumbleBenchScenario.ping.peer == .pong)
        #expect(BumbleBenchScenario.allCases.allSatisfy { $0.peer.peer == $0 })
        #expect(BumbleBenchRole.central.defaultScenario == .send && BumbleBenchRole.peripheral.defaultScenario == .receive)
        func failure(_ change: (inout BumbleBenchSettings) -> Void) -> String {
            var settings = Self.settings(.send)
            change(&settings)
            do { try settings.validate() } catch { return "\(error)" }
            return ""
        }
        let size = failure { $0.packetSize = 9 }
        let count = failure { $0.packetCount = 0 }
        let ping = failure { $0.scenario = .ping; $0.packetCount = 1 }
        let pace = failure { $0.paceMilliseconds = -1 }
        let stall = failure { $0.stallSeconds = 0 }
        let fine = failure { _ in }
        #expect(size.hasPrefix("--packet-size 9: expected 10 to 8192"))
        #expect(count.hasPrefix("--packet-count 0"))
        #expect(ping.contains("ping needs at least 2"))
        #expect(pace.hasPrefix("--pace -1.0"))
        #expect(stall.hasPrefix("--stall-timeout"))
        #expect(fine == "")
    }

    @Test func reportJSONCarriesTheFigures() throws {
        let report = BumbleBenchReport(
            role: .central, scenario: .ping, packets: 2, packetSize: 10, bytes: 20, seconds: 0.5, mtu: 23,
            roundTrip: BenchStatistics([1, 3]))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any])
        #expect(object["role"] as? String == "central")
        #expect(object["scenario"] as? String == "ping")
        #expect(object["type"] as? String == "bench-result")
        #expect(object["bytesPerSecond"] as? Double == 40)
        let rtt = try #require(object["roundTripMilliseconds"] as? [String: Any])
        #expect(rtt["mean"] as? Double == 2)
        #expect(object["jitterMilliseconds"] == nil)
    }
}

@Suite struct DescriptorMeaningTests {
    @Test func commonDescriptorsAreExplained() {
        #expect(DescriptorMeaning.describe(BluetoothUUID(0x2902), [0x00, 0x00]) == "not subscribed")
        #expect(DescriptorMeaning.describe(BluetoothUUID(0x2902), [0x01, 0x00]) == "notifications on")
        #expect(DescriptorMeaning.describe(BluetoothUUID(0x2902), [0x03, 0x00]) == "notifications and indications on")
        #expect(DescriptorMeaning.describe(BluetoothUUID(0x2902), [0x01]) == "(expected 2 octets, got 1)")
        #expect(DescriptorMeaning.describe(BluetoothUUID(0x2901), Array("Left pedal".utf8)) == "\"Left pedal\"")
        #expect(DescriptorMeaning.describe(BluetoothUUID(0x2901), [0xFF, 0xFE]) == nil, "not UTF-8: hex only")
        #expect(DescriptorMeaning.describe(BluetoothUUID(0x2900), [0x01, 0x00]) == "reliable write")
        #expect(DescriptorMeaning.describe(BluetoothUUID(0x2904), [0x04]) == nil)
    }
}
