import BluetideBase
import Testing
@testable import BluetideProfiles

@Suite struct COLMIAssemblerTests {
    /// The 24-packet HR log from tahnok's test_hr.py: header, timestamp packet, four packets from
    /// the spec with hourly values, the rest zeros (checksums computed for those).
    static func heartRateLogPackets() throws -> [[UInt8]] {
        var packets: [[UInt8]] = [
            try COLMIVector.v1("15 00 18 05", checksum: 0x32),
            try COLMIVector.v1("15 01 80 ad b6 66", checksum: 0x5F),
        ]
        let given: [Int: [UInt8]] = [
            15: try COLMIVector.v1("15 0f 00 00 59", checksum: 0x7D),
            16: try COLMIVector.v1("15 10 00 6b", checksum: 0x90),
            17: try COLMIVector.v1("15 11 60 00 00 00 00 00 00 00 00 00 00 00 6b", checksum: 0xF1),
            19: try COLMIVector.v1("15 13 00 00 00 00 00 00 00 00 00 00 50", checksum: 0x78),
            20: try COLMIVector.v1("15 14 00 00 00 00 00 00 00 00 00 46", checksum: 0x6F),
        ]
        for k in 2..<24 {
            packets.append(try given[k] ?? COLMIPacket(opcode: 0x15, payload: [UInt8(k)]).bytes)
        }
        return packets
    }

    @Test func heartRateLogWithUnsolicitedPacketsInBetween() throws {
        var assembler = COLMIHeartRateLogAssembler()
        let packets = try Self.heartRateLogPackets()
        var result: COLMIHeartRateLog?
        for (i, bytes) in packets.enumerated() {
            if i == 12 {
                // The ring pushes a battery update and a packet-size indicator mid-sequence.
                #expect(try assembler.feed(COLMIPacket(bytes: try COLMIVector.v1("73 0c 15", checksum: 0x94))) == .ignored)
                #expect(try assembler.feed(COLMIPacket(bytes: try COLMIVector.v1("2f f1", checksum: 0x20))) == .ignored)
            }
            let progress = try assembler.feed(try COLMIPacket(bytes: bytes))
            if i < 23 {
                #expect(progress == .inProgress(received: i + 1, total: 24))
            } else if case let .complete(log) = progress {
                result = log
            }
        }
        let log = try #require(result)
        #expect(log.bpmBySlot.count == 288)
        #expect(log.packetCount == 24 && log.slotMinutes == 5 && log.receivedValueCount == 295)
        #expect(log.requestTimestamp == 0x66B6_AD80 && log.dayStartTimestamp == 1_723_248_000)
        let expected: [Int: UInt8] = [180: 89, 192: 107, 204: 96, 216: 107, 240: 80, 252: 70]
        for (slot, bpm) in log.bpmBySlot.enumerated() {
            #expect(bpm == (expected[slot] ?? 0), "slot \(slot)")
        }
        let measured = log.measurements
        #expect(measured.map(\.minuteOfDay) == [900, 960, 1020, 1080, 1200, 1260])
        let firstTimestamp: Int64 = try #require(measured.first).timestamp
        #expect(firstTimestamp == Int64(1_723_248_000 + 15 * 3600))
        // The emulator side: the log encodes back to the same 24 packets.
        #expect(log.packets.map(\.bytes) == packets)
    }

    @Test func captureTimestampPacketAlignsSlotsToRingMidnight() throws {
        let bytes = try COLMIVector.full("15 01 c0 00 23 67 00 00 00 00 00 00 68 00 00 c8")
        #expect(try COLMIResponse(bytes: bytes) == .heartRateLog(.first(timestamp: 1_730_347_200, bpm: [0, 0, 0, 0, 0, 0, 104, 0, 0])))
        var assembler = COLMIHeartRateLogAssembler()
        _ = try assembler.feed(try COLMIPacket(bytes: try COLMIVector.v1("15 00 03 05", checksum: 0x1D)))
        _ = try assembler.feed(try COLMIPacket(bytes: bytes))
        guard case let .complete(log) = try assembler.feed(try COLMIPacket(opcode: 0x15, payload: [2])) else {
            Issue.record("not complete")
            return
        }
        #expect(log.dayStartTimestamp == 1_730_332_800, "2024-10-31 00:00Z although the request said 04:00Z")
        #expect(log.bpmBySlot[6] == 104 && log.slots[6].minuteOfDay == 30)
    }

    @Test func heartRateLogNoDataAndSequenceErrors() throws {
        var assembler = COLMIHeartRateLogAssembler()
        #expect(try assembler.feed(try COLMIPacket(bytes: try COLMIVector.v1("15 ff", checksum: 0x14))) == .noData)
        // A values packet before any header.
        #expect(throws: DecodingError.self) { try assembler.feed(try COLMIPacket(opcode: 0x15, payload: [3])) }
        // A packet number past the header's count.
        _ = try assembler.feed(try COLMIPacket(opcode: 0x15, payload: [0, 4, 5]))
        #expect(throws: DecodingError.invalid("COLMI HR log.sequence", expected: "below the packet count", found: "9", at: 1)) {
            try assembler.feed(try COLMIPacket(opcode: 0x15, payload: [9]))
        }
        // The last packet with earlier ones missing names them.
        _ = try assembler.feed(try COLMIPacket(opcode: 0x15, payload: [0, 4, 5]))
        _ = try assembler.feed(try COLMIPacket(opcode: 0x15, payload: [1]))
        #expect(throws: DecodingError.invalid("COLMI HR log.sequence", expected: "packets 1...2 before packet 3", found: "missing 2")) {
            try assembler.feed(try COLMIPacket(opcode: 0x15, payload: [3]))
        }
        // A zero slot width is refused.
        #expect(throws: DecodingError.self) { try assembler.feed(try COLMIPacket(opcode: 0x15, payload: [0, 24, 0])) }
    }

    static let stepRecords = [
        "43 23 08 13 10 00 05 c8 00 30 00 1b 00 00 00 a9",
        "43 23 08 13 14 01 05 b6 18 aa 04 69 03 00 00 83",
        "43 23 08 13 18 02 05 38 04 e1 00 95 00 00 00 52",
        "43 23 08 13 1c 03 05 05 02 6c 00 48 00 00 00 60",
        "43 23 08 13 4c 04 05 ef 01 63 00 44 00 00 00 6d",
    ]

    @Test func stepsMultiPacketWithUnsolicitedInBetween() throws {
        var assembler = COLMISportDetailAssembler()
        let header = try COLMIVector.v1("43 f0 05 01", checksum: 0x39)
        #expect(try assembler.feed(try COLMIPacket(bytes: header)) == .inProgress(received: 0, total: 5))
        var day: COLMISportDetail?
        for (i, hex) in Self.stepRecords.enumerated() {
            if i == 2 {
                #expect(try assembler.feed(try COLMIPacket(bytes: try COLMIVector.v1("73 0c 2b 01", checksum: 0xAB))) == .ignored)
            }
            if case let .complete(d) = try assembler.feed(try COLMIPacket(bytes: try COLMIVector.full(hex))) {
                #expect(i == 4, "completes at the last packet only")
                day = d
            }
        }
        let d = try #require(day)
        #expect(d.newCalorieProtocol)
        #expect(d.records.map(\.quarterHourIndex) == [16, 20, 24, 28, 76])
        #expect(d.records.map { d.calories(of: $0) } == [2000, 63260, 10800, 5170, 4950])
        #expect(d.records.map(\.steps) == [48, 1194, 225, 108, 99])
        #expect(d.records.map(\.distanceMeters) == [27, 873, 149, 72, 68])
        #expect(d.records.last?.minuteOfDay == 19 * 60)
        #expect(d.records.allSatisfy { $0.date == COLMIDate(year: 2023, month: 8, day: 13) })
        #expect(d.packets.map(\.bytes) == [header] + (try Self.stepRecords.map(COLMIVector.full)))
    }

    @Test func stepsSingleRecordAndNoData() throws {
        var assembler = COLMISportDetailAssembler()
        _ = try assembler.feed(try COLMIPacket(bytes: try COLMIVector.v1("43 f0 01 01", checksum: 0x35)))
        let progress = try assembler.feed(try COLMIPacket(bytes: try COLMIVector.full("43 24 10 15 5c 00 01 79 00 15 00 10 00 00 00 87")))
        guard case let .complete(day) = progress, let r = day.records.first else {
            Issue.record("not complete")
            return
        }
        #expect(r.date.description == "2024-10-15" && r.minuteOfDay == 23 * 60)
        #expect(day.calories(of: r) == 1210 && r.steps == 21 && r.distanceMeters == 16)
        #expect(try assembler.feed(try COLMIPacket(bytes: try COLMIVector.v1("43 ff", checksum: 0x42))) == .noData)
        #expect(throws: DecodingError.self) {
            try assembler.feed(try COLMIPacket(bytes: try COLMIVector.full("43 24 10 15 5c 00 01 79 00 15 00 10 00 00 00 87")))
        }
    }

    @Test func stressHistoryReassembles() throws {
        let history = COLMIHalfHourHistory(kind: "stress", valuesBySlot: (0..<48).map { UInt8($0 % 7) })
        var assembler = COLMIHalfHourHistoryAssembler(opcode: COLMIOpcode.stressHistory)
        var result: COLMIHalfHourHistory?
        for (i, packet) in history.packets(opcode: COLMIOpcode.stressHistory).enumerated() {
            if i == 2 { #expect(try assembler.feed(try COLMIPacket(opcode: 0x2F, payload: [0xF1])) == .ignored) }
            if case let .complete(h) = try assembler.feed(packet) { result = h }
        }
        #expect(result == history)
        var hrv = COLMIHalfHourHistoryAssembler(opcode: COLMIOpcode.hrvHistory)
        #expect(try hrv.feed(try COLMIPacket(opcode: 0x39, payload: [0xFF])) == .noData)
        #expect(try hrv.feed(try COLMIPacket(opcode: 0x37, payload: [0])) == .ignored)
    }
}
