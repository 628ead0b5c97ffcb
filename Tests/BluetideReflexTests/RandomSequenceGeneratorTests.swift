import BluetideProfiles
import Testing
@testable import BluetideReflex

@Suite("RandomSequenceGenerator")
struct RandomSequenceGeneratorTests {
    @Test func sameSeedSameProgramDifferentSeedDifferentProgram() throws {
        let generator = RandomSequenceGenerator(stepCount: 40)
        let a = try generator.generate(seed: 42)
        let b = try generator.generate(seed: 42)
        let c = try generator.generate(seed: 43)
        #expect(a == b)
        #expect(a != c)
        #expect(a.sequence.count == 40)
        #expect(a.timeSequence.count == 40)
    }

    @Test func pinnedOutputForSeedOne() throws {
        // SplitMix64 is fully specified, so this pin holds on every platform.
        var rng = SeededGenerator(seed: 1)
        #expect(rng.next() == 0x910A_2DEC_8902_5CC1)
    }

    @Test func noImmediateRepeatsAndValuesInRange() throws {
        let generator = RandomSequenceGenerator(stepCount: 256, targets: [1, 3, 4], times: .uniform(300...900))
        for seed in UInt64(0)..<50 {
            let program = try generator.generate(seed: seed)
            let targets = program.sequence.targets
            #expect(targets.count == 256)
            #expect(zip(targets, targets.dropFirst()).allSatisfy { $0 != $1 })
            #expect(Set(targets).isSubset(of: [1, 3, 4]))
            #expect(program.timeSequence.milliseconds.allSatisfy { (300...900).contains($0) })
        }
        // Over many steps every allowed target appears.
        let big = try generator.generate(seed: 7)
        #expect(Set(big.sequence.targets) == [1, 3, 4])
    }

    /// More steps than a trainer holds (`PunchSequence.maxSteps`, 256) are refused before any
    /// sequence is made, so no program the trainer would refuse is ever saved.
    @Test func stepCountsBeyondWhatATrainerHoldsAreRefused() throws {
        #expect(throws: SequenceGeneratorError.stepCount(257)) { try RandomSequenceGenerator(stepCount: 257).generate(seed: 1) }
        #expect(throws: SequenceGeneratorError.stepCount(300)) { try RandomSequenceGenerator(stepCount: 300).generate(seed: 1) }
        #expect(SequenceGeneratorError.stepCount(300).description == "step count 300 is outside 1...256")
        #expect(try RandomSequenceGenerator(stepCount: 256).generate(seed: 1).sequence.count == 256)
    }

    @Test func repeatsAllowedWhenConfigured() throws {
        let program = try RandomSequenceGenerator(stepCount: 200, targets: [0, 1], avoidImmediateRepeats: false).generate(seed: 9)
        let targets = program.sequence.targets
        #expect(zip(targets, targets.dropFirst()).contains { $0 == $1 })
        let single = try RandomSequenceGenerator(stepCount: 5, targets: [2], avoidImmediateRepeats: false).generate(seed: 1)
        #expect(single.sequence.targets == [2, 2, 2, 2, 2])
    }

    @Test func normalTimesStayInRangeAroundTheMean() throws {
        let generator = RandomSequenceGenerator(stepCount: 256, times: .normal(mean: 1000, standardDeviation: 150, range: 600...1400))
        let ms = try generator.generate(seed: 2026).timeSequence.milliseconds
        #expect(ms.allSatisfy { (600...1400).contains($0) })
        let mean = Double(ms.reduce(0) { $0 + Int($1) }) / Double(ms.count)
        #expect(abs(mean - 1000) < 40)
        #expect(Set(ms).count > 50)
        let fixed = try RandomSequenceGenerator(stepCount: 3, times: .normal(mean: 700, standardDeviation: 0, range: 1...60_000)).generate(seed: 1)
        #expect(fixed.timeSequence.milliseconds == [700, 700, 700])
    }

    @Test func invalidSettingsAreRefused() {
        #expect(throws: SequenceGeneratorError.stepCount(0)) { try RandomSequenceGenerator(stepCount: 0).generate(seed: 1) }
        #expect(throws: SequenceGeneratorError.stepCount(513)) { try RandomSequenceGenerator(stepCount: 513).generate(seed: 1) }
        #expect(throws: SequenceGeneratorError.targets([])) { try RandomSequenceGenerator(stepCount: 3, targets: []).generate(seed: 1) }
        #expect(throws: SequenceGeneratorError.targets([0, 6])) { try RandomSequenceGenerator(stepCount: 3, targets: [0, 6]).generate(seed: 1) }
        #expect(throws: SequenceGeneratorError.repeatsUnavoidable(4)) { try RandomSequenceGenerator(stepCount: 3, targets: [4, 4]).generate(seed: 1) }
        #expect(throws: SequenceGeneratorError.self) { try RandomSequenceGenerator(stepCount: 3, times: .uniform(0...100)).generate(seed: 1) }
        #expect(throws: SequenceGeneratorError.self) {
            try RandomSequenceGenerator(stepCount: 3, times: .normal(mean: .nan, standardDeviation: 1, range: 1...100)).generate(seed: 1)
        }
        #expect(SequenceGeneratorError.repeatsUnavoidable(4).description == "only target 4 is allowed, so immediate repeats cannot be avoided")
    }

    @Test func boundedDrawsAreUnbiasedEnough() {
        var rng = SeededGenerator(seed: 5)
        var counts = [Int](repeating: 0, count: 6)
        for _ in 0..<6000 { counts[Int(rng.below(6))] += 1 }
        #expect(counts.allSatisfy { (850...1150).contains($0) })
        #expect(rng.below(0) == 0)
        #expect(rng.below(1) == 0)
        for _ in 0..<1000 { #expect((0..<1).contains(rng.unit())) }
    }
}
