import BluetideBase
import Testing
@testable import BluetideProfiles

/// Random and truncated inputs through the Punch decoders: values or DecodingError, never a trap.
@Suite struct PunchRobustnessTests {
    @Test func punchDecodersNeverTrap() {
        var decoded = 0
        for bytes in COLMIRobustnessTests.randomInputs(count: 4000, seed: 7) {
            if (try? PunchResponse(bytes: bytes)) != nil { decoded += 1 }
            if (try? PunchSequence(bytes: bytes)) != nil { decoded += 1 }
            if (try? PunchTimeSequence(bytes: bytes)) != nil { decoded += 1 }
            if (try? PunchControlMessage(bytes: bytes)) != nil { decoded += 1 }
        }
        #expect(decoded > 100)
    }
}
