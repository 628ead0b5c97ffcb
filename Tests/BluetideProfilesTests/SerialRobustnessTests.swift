import BluetideBase
import Testing
@testable import BluetideProfiles

/// Random chunk sizes and bytes through the chunker and line assembler: bounded lines, no trap,
/// and no byte lost or invented under the split policy.
@Suite struct SerialRobustnessTests {
    @Test func chunkerAndLineAssemblerNeverTrap() {
        var lines = LineAssembler(maxLineLength: 16)
        for bytes in COLMIRobustnessTests.randomInputs(count: 4000, seed: 11) {
            let chunks = SerialChunker(maxChunkSize: bytes.count % 25).chunks(bytes)
            #expect(chunks.flatMap { $0 } == bytes)
            for chunk in chunks {
                for line in lines.feed(chunk) { #expect(line.bytes.count <= 16) }
            }
            #expect(lines.pending.count <= 17)
        }
    }

    @Test func splitPolicyKeepsEveryNonTerminatorByte() {
        var rng = COLMIRobustnessTests.SplitMix(state: 3)
        for _ in 0..<500 {
            let alphabet: [UInt8] = [0x41, 0x42, 0x0A, 0x0D]
            let bytes = (0..<Int.random(in: 0...60, using: &rng)).map { _ in alphabet.randomElement(using: &rng) ?? 0x41 }
            var assembler = LineAssembler(terminator: .lineFeed, maxLineLength: 5)
            var out: [UInt8] = []
            for chunk in SerialChunker(maxChunkSize: Int.random(in: 1...7, using: &rng)).chunks(bytes) {
                for line in assembler.feed(chunk) { out += line.bytes }
            }
            out += assembler.flush()?.bytes ?? []
            #expect(out == bytes.filter { $0 != 0x0A })
        }
    }
}
