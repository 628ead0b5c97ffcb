import BluetideBase
import Testing
@testable import BluetideProfiles

@Suite struct PunchTests {
    @Test func uuids() {
        #expect(PunchUUID.service.uuidString == "6D5E850D-C8C0-4EA9-BDA3-B7D10001D22A")
        #expect(PunchUUID.response.uuidString == "6D5E850D-C8C0-4EA9-BDA3-B7D10002D22A")
        #expect(PunchUUID.timeSequence.uuidString == "6D5E850D-C8C0-4EA9-BDA3-B7D10003D22A")
        #expect(PunchUUID.sequence.uuidString == "6D5E850D-C8C0-4EA9-BDA3-B7D10004D22A")
        #expect(PunchUUID.control.uuidString == "6D5E850D-C8C0-4EA9-BDA3-B7D10005D22A")
    }

    @Test func responseVectors() throws {
        let hitBytes = try Hex.parse("9C 01 00 00 03 01 07 00")
        let hit = try PunchResponse(exactly: hitBytes)
        #expect(hit == PunchResponse(reactionTimeMilliseconds: 412, target: 3, hit: true, step: 7))
        #expect(hit.reactionTimeSeconds == 0.412 && !hit.isLegacyFormat)
        #expect(hit.bytes == hitBytes)
        #expect(hit.summary == "step 7: hit target 3 after 0.412 s")

        let missBytes = try Hex.parse("DC 05 00 00 00 00 02 00")
        let miss = try PunchResponse(exactly: missBytes)
        #expect(miss == PunchResponse(reactionTimeMilliseconds: 1500, target: 0, hit: false, step: 2))
        #expect(miss.bytes == missBytes)

        let wrong = PunchResponse(reactionTimeMilliseconds: 700, target: 5, hit: true, wrongTargetFirst: true, step: 513)
        #expect(wrong.bytes == [0xBC, 0x02, 0, 0, 5, 0x03, 0x01, 0x02])
        #expect(try PunchResponse(exactly: wrong.bytes) == wrong)
    }

    @Test func legacyFiveByteForm() throws {
        let legacy = try PunchResponse(exactly: [0x9C, 0x01, 0x00, 0x00, 0x03])
        #expect(legacy.hit && legacy.step == nil && legacy.isLegacyFormat && legacy.reactionTimeMilliseconds == 412)
        #expect(legacy.bytes == [0x9C, 0x01, 0x00, 0x00, 0x03])
        let legacyMiss = try PunchResponse(exactly: [0, 0, 0, 0, 2])
        #expect(!legacyMiss.hit)
        #expect(legacyMiss.summary == "step ?: missed target 2 (0.0 s)")
    }

    @Test func responseTruncationAndRange() {
        let bytes: [UInt8] = [0x9C, 0x01, 0x00, 0x00, 0x03, 0x01, 0x07, 0x00]
        let fieldAt: [Int: String] = [0: "reaction time", 1: "reaction time", 2: "reaction time", 3: "reaction time", 4: "target", 6: "step", 7: "step"]
        for (n, field) in fieldAt {
            do {
                _ = try PunchResponse(bytes: Array(bytes.prefix(n)))
                Issue.record("\(n) bytes accepted")
            } catch {
                #expect(error.field == "PunchResponse.\(field)", "cut at \(n)")
            }
        }
        #expect(throws: DecodingError.invalid("PunchResponse.target", expected: "0...5", found: "6", at: 4)) {
            try PunchResponse(bytes: [1, 0, 0, 0, 6, 1, 0, 0])
        }
        #expect(throws: DecodingError.self) { try PunchResponse(exactly: bytes + [0]) }
    }

    @Test func sequenceValidation() throws {
        let sequence = try PunchSequence(targets: [0, 3, 5, 1])
        #expect(sequence.bytes == [0, 3, 5, 1])
        #expect(try PunchSequence(bytes: [0, 3, 5, 1]) == sequence)
        #expect(throws: PunchValidationError(step: 2, problem: "target 6 is outside 0...5", controlErrorCode: .targetOutOfRange)) {
            try PunchSequence(targets: [0, 1, 6])
        }
        #expect(throws: PunchValidationError.self) { try PunchSequence(targets: []) }
        // One limit for both sequences: 256 steps (a time sequence of 256 fills ATT's 512 octets).
        #expect((try? PunchSequence(targets: Array(repeating: 2, count: 256))) != nil)
        #expect(throws: PunchValidationError.self) { try PunchSequence(targets: Array(repeating: 2, count: 257)) }
        #expect((try? PunchTimeSequence(milliseconds: Array(repeating: 900, count: 256))) != nil)
        #expect(throws: PunchValidationError.self) { try PunchTimeSequence(milliseconds: Array(repeating: 900, count: 257)) }
        #expect(throws: DecodingError.invalid("Punch sequence.step 2", expected: "target 0...5", found: "target 9 is outside 0...5", at: 2)) {
            try PunchSequence(bytes: [1, 2, 9])
        }
        let error = PunchValidationError(step: 2, problem: "target 6 is outside 0...5", controlErrorCode: .targetOutOfRange)
        #expect(error.description == "step 2: target 6 is outside 0...5")
    }

    @Test func timeSequenceValidation() throws {
        let times = try PunchTimeSequence(milliseconds: [1500, 1, 60_000])
        #expect(times.bytes == [0xDC, 0x05, 0x01, 0x00, 0x60, 0xEA])
        #expect(try PunchTimeSequence(bytes: times.bytes) == times)
        #expect(throws: PunchValidationError(step: 1, problem: "time 0 ms is outside 1...60000 ms", controlErrorCode: .timeOutOfRange)) {
            try PunchTimeSequence(milliseconds: [10, 0])
        }
        #expect(throws: PunchValidationError(step: 0, problem: "time 60001 ms is outside 1...60000 ms", controlErrorCode: .timeOutOfRange)) {
            try PunchTimeSequence(milliseconds: [60_001])
        }
        #expect(throws: DecodingError.truncated("Punch time sequence.step 1", needed: 2, present: 1, at: 2)) {
            try PunchTimeSequence(bytes: [0xDC, 0x05, 0x01])
        }
        #expect(throws: PunchValidationError.self) { try PunchTimeSequence(milliseconds: Array(repeating: 100, count: 513)) }
    }

    @Test func programRequiresEqualLengths() throws {
        let sequence = try PunchSequence(targets: [0, 1, 2])
        let times = try PunchTimeSequence(milliseconds: [1000, 1000])
        #expect(throws: PunchValidationError(step: 2, problem: "sequence has 3 steps but time sequence has 2", controlErrorCode: .sequencesMissing)) {
            try PunchProgram(sequence: sequence, timeSequence: times)
        }
        let program = try PunchProgram(steps: [PunchStep(target: 4, milliseconds: 800), PunchStep(target: 0, milliseconds: 1200)])
        #expect(program.sequence.targets == [4, 0] && program.timeSequence.milliseconds == [800, 1200])
        #expect(program.steps.count == 2)
    }

    @Test func controlCommandsAndStatuses() throws {
        let commands: [(PunchControlCommand, [UInt8])] = [(.start, [0x01]), (.stop, [0x02]), (.countdownStart(seconds: 3), [0x03, 0x03])]
        for (command, bytes) in commands {
            #expect(command.bytes == bytes)
            #expect(try PunchControlCommand(exactly: bytes) == command)
            #expect(try PunchControlMessage(exactly: bytes) == .command(command))
        }
        let statuses: [(PunchControlStatus, [UInt8])] = [
            (.armed, [0x10]), (.running, [0x11]), (.finished(stepsDone: 20), [0x12, 0x14, 0x00]), (.stopped, [0x13]),
            (.error(.sequencesMissing), [0xE0, 0x01]), (.error(.targetOutOfRange), [0xE0, 0x02]), (.error(.timeOutOfRange), [0xE0, 0x03]),
        ]
        for (status, bytes) in statuses {
            #expect(status.bytes == bytes)
            #expect(try PunchControlStatus(exactly: bytes) == status)
            #expect(try PunchControlMessage(exactly: bytes) == .status(status))
        }
        #expect(PunchControlStatus.finished(stepsDone: 20).summary == "finished after 20 steps")
        #expect(PunchControlStatus.error(.timeOutOfRange).summary == "error 3: step time is 0 or above 60000 ms")
        #expect(throws: DecodingError.truncated("Punch control.countdown seconds", needed: 1, present: 0, at: 1)) {
            try PunchControlCommand(bytes: [0x03])
        }
        #expect(throws: DecodingError.truncated("Punch control.steps done", needed: 2, present: 1, at: 1)) {
            try PunchControlStatus(bytes: [0x12, 0x14])
        }
        #expect(throws: DecodingError.self) { try PunchControlCommand(bytes: [0x04]) }
        #expect(throws: DecodingError.self) { try PunchControlStatus(bytes: [0x14]) }
        #expect(throws: DecodingError.self) { try PunchControlMessage(bytes: []) }
    }

    @Test func catalogEntries() throws {
        func decode(_ name: String, _ bytes: [UInt8]) throws -> DecodedPacket {
            let descriptor = try #require(ProfileCatalog.deviceProfiles.first { $0.name == name })
            var decoder = descriptor.makeDecoder(ProfileOptions())
            return try decoder.decode(bytes, at: 0)
        }
        #expect(try decode("punch-response", try Hex.parse("9C 01 00 00 03 01 07 00")).summary == "step 7: hit target 3 after 0.412 s")
        #expect(try decode("punch-sequence", [0, 3, 5]).summary == "3 steps: targets 0 3 5")
        #expect(try decode("punch-time-sequence", [0xDC, 0x05, 0xE8, 0x03]).summary == "2 steps: 1500 1000 ms (total 2.5 s)")
        #expect(try decode("punch-control", [0x03, 0x03]).summary == "command: start after 3 s countdown")
        #expect(try decode("punch-control", [0xE0, 0x02]).summary == "status: error 2: target index out of range")
        let byUUID = ProfileCatalog.deviceProfiles.first { $0.characteristic == PunchUUID.control }
        #expect(byUUID?.name == "punch-control")
    }
}
