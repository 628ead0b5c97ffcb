import Testing
@testable import BluetideGPIO
import BluetideSupport

@Suite struct AthleteModelTests {
    @Test func reactionTimesFollowTheConfiguredNormalDistribution() {
        let behaviour = AthleteBehaviour(meanReactionMilliseconds: 350, reactionStandardDeviationMilliseconds: 80,
                                         minimumReactionMilliseconds: 0, maximumReactionMilliseconds: 10_000)
        var model = AthleteModel(behaviour: behaviour, targetCount: 6, seed: 42)
        let draws = (0..<20_000).map { _ in model.drawReactionMilliseconds() }
        let mean = draws.reduce(0, +) / Double(draws.count)
        let sd = (draws.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(draws.count - 1)).squareRoot()
        // Standard error of the mean is 80/√20000 ≈ 0.57 ms: ±3 ms is over five of them.
        #expect(abs(mean - 350) < 3, "mean \(mean)")
        #expect(abs(sd - 80) < 3, "sd \(sd)")
    }

    @Test func reactionTimesAreClamped() {
        let behaviour = AthleteBehaviour(meanReactionMilliseconds: 300, reactionStandardDeviationMilliseconds: 400,
                                         minimumReactionMilliseconds: 150, maximumReactionMilliseconds: 600)
        var model = AthleteModel(behaviour: behaviour, targetCount: 6, seed: 1)
        let draws = (0..<5_000).map { _ in model.drawReactionMilliseconds() }
        #expect(draws.allSatisfy { (150...600).contains($0) })
        #expect(draws.contains(150) && draws.contains(600), "a wide distribution hits both clamps")
    }

    @Test func missAndWrongTargetRatesMatchTheProbabilities() {
        let behaviour = AthleteBehaviour(missProbability: 0.1, wrongTargetProbability: 0.2)
        var model = AthleteModel(behaviour: behaviour, targetCount: 6, seed: 2026)
        var misses = 0, wrong = 0, hits = 0
        var wrongCounts = [Int](repeating: 0, count: 6)
        let trials = 20_000
        for trial in 0..<trials {
            let lit = trial % 6
            switch model.respond(toLit: lit) {
            case .miss: misses += 1
            case let .hit(target, after):
                #expect(target == lit)
                #expect((behaviour.minimumReactionMilliseconds...behaviour.maximumReactionMilliseconds).contains(after))
                hits += 1
            case let .wrongTarget(other, _, _):
                #expect(other != lit && (0..<6).contains(other))
                wrongCounts[other] += 1
                wrong += 1
            }
        }
        // Binomial standard deviations: √(n p (1−p)) ≈ 42 misses and 57 wrong hits; allow 4 of them.
        #expect(abs(Double(misses) / Double(trials) - 0.1) < 0.0085, "misses \(misses)")
        #expect(abs(Double(wrong) / Double(trials) - 0.2) < 0.0115, "wrong \(wrong)")
        #expect(hits + misses + wrong == trials)
        // Wrong targets are spread over the other five: each target gets about a sixth of them.
        for count in wrongCounts { #expect(abs(Double(count) / Double(wrong) - 1.0 / 6) < 0.03) }
    }

    @Test func sameSeedSameAthlete() {
        var a = AthleteModel(behaviour: AthleteBehaviour(), targetCount: 6, seed: 9)
        var b = AthleteModel(behaviour: AthleteBehaviour(), targetCount: 6, seed: 9)
        var c = AthleteModel(behaviour: AthleteBehaviour(), targetCount: 6, seed: 10)
        let ra = (0..<50).map { a.respond(toLit: $0 % 6) }
        #expect(ra == (0..<50).map { b.respond(toLit: $0 % 6) })
        #expect(ra != (0..<50).map { c.respond(toLit: $0 % 6) })
    }
}

@Suite struct SimulatedAthleteTests {
    let config = GPIOConfiguration.reflexDefault

    /// A chip with the reflex map requested, an athlete watching it, on a manual clock.
    func rig(_ behaviour: AthleteBehaviour, seed: UInt64 = 3) async throws
        -> (ManualClock, SimulatedGPIOChip, any GPIOLineRequest, SimulatedAthlete<ManualClock>) {
        let clock = ManualClock()
        let chip = SimulatedGPIOChip(clock: clock)
        let lines = try await chip.request(config.lineRequest(consumer: "reflex"))
        let athlete = SimulatedAthlete(chip: chip, targets: config.targets, behaviour: behaviour, seed: seed, clock: clock)
        await athlete.start()
        return (clock, chip, lines, athlete)
    }

    @Test func athleteHitsTheLitTargetAfterTheReactionTime() async throws {
        let behaviour = AthleteBehaviour(missProbability: 0, wrongTargetProbability: 0, holdMilliseconds: 150)
        let (clock, _, lines, athlete) = try await rig(behaviour)
        var decisions = athlete.decisions.makeAsyncIterator()
        var edges = lines.edges.makeAsyncIterator()
        for lit in [3, 0, 5] {
            let led = config.targets[lit].ledLine
            try await lines.setValue(true, for: led)
            let decision = try #require(await decisions.next())
            guard case let .hit(target, after) = decision.response else {
                Issue.record("expected a hit, got \(decision.response)"); return
            }
            #expect(target == lit && decision.litTarget == lit)
            await clock.waitForSleepers(1)
            let litAt = clock.now
            clock.advance(by: .nanoseconds(Int64(after * 1_000_000)))
            let press = try #require(await edges.next())
            // Active-low sensor pulled low: reported as the line becoming active (rising).
            #expect(press.offset == config.targets[lit].sensorLine && press.kind == .rising)
            #expect(press.timestampNanoseconds == litAt.offset.wholeNanoseconds + UInt64(after * 1_000_000))
            try await lines.setValue(false, for: led)
            await clock.waitForSleepers(1)
            clock.advance(by: .milliseconds(150))
            let letGo = try #require(await edges.next())
            #expect(letGo.offset == press.offset && letGo.kind == .falling)
            #expect(letGo.timestampNanoseconds - press.timestampNanoseconds == 150_000_000)
        }
        await athlete.stop()
    }

    @Test func aMissProducesNoEdge() async throws {
        let behaviour = AthleteBehaviour(missProbability: 1, wrongTargetProbability: 0)
        let (clock, chip, lines, athlete) = try await rig(behaviour)
        var decisions = athlete.decisions.makeAsyncIterator()
        try await lines.setValue(true, for: config.targets[2].ledLine)
        #expect(await decisions.next()?.response == .miss)
        #expect(clock.sleeperCount == 0)
        // Nothing pending; an edge made by the test itself is the first one the stream delivers.
        try await chip.drive(config.targets[4].sensorLine, level: false)
        var edges = lines.edges.makeAsyncIterator()
        #expect(await edges.next()?.offset == config.targets[4].sensorLine)
        await athlete.stop()
    }

    @Test func aWrongTargetIsHitFirstThenTheLitOne() async throws {
        let behaviour = AthleteBehaviour(missProbability: 0, wrongTargetProbability: 1, holdMilliseconds: 100)
        let (clock, _, lines, athlete) = try await rig(behaviour)
        var decisions = athlete.decisions.makeAsyncIterator()
        var edges = lines.edges.makeAsyncIterator()
        try await lines.setValue(true, for: config.targets[1].ledLine)
        let decision = try #require(await decisions.next())
        guard case let .wrongTarget(wrong, after, correction) = decision.response else {
            Issue.record("expected a wrong target, got \(decision.response)"); return
        }
        #expect(wrong != 1)
        await clock.waitForSleepers(1)
        clock.advance(by: .nanoseconds(Int64(after * 1_000_000)))
        let first = try #require(await edges.next())
        #expect(first.offset == config.targets[wrong].sensorLine && first.kind == .rising)
        // Now two sleeps run: letting go of the wrong sensor, and the correction. Step from
        // deadline to deadline; each produces one edge, and the correct hit adds its own let-go.
        let right = config.targets[1].sensorLine
        await clock.waitForSleepers(2)
        var seen: [GPIOEdge] = []
        clock.advanceToNextDeadline()
        seen.append(try #require(await edges.next()))
        await clock.waitForSleepers(seen[0].offset == right ? 2 : 1)
        clock.advanceToNextDeadline()
        seen.append(try #require(await edges.next()))
        await clock.waitForSleepers(1)
        clock.advanceToNextDeadline()
        seen.append(try #require(await edges.next()))
        #expect(seen.contains { $0.offset == config.targets[wrong].sensorLine && $0.kind == .falling })
        #expect(seen.contains { $0.offset == right && $0.kind == .rising })
        #expect(seen.contains { $0.offset == right && $0.kind == .falling })
        let hit = try #require(seen.first { $0.offset == right && $0.kind == .rising })
        #expect(hit.timestampNanoseconds - first.timestampNanoseconds == UInt64(correction * 1_000_000))
        await athlete.stop()
    }

    @Test func aTargetSwitchedOffBeforeTheReactionIsNotHit() async throws {
        let behaviour = AthleteBehaviour(missProbability: 0, wrongTargetProbability: 0)
        let (clock, chip, lines, athlete) = try await rig(behaviour)
        var decisions = athlete.decisions.makeAsyncIterator()
        let led = config.targets[0].ledLine
        try await lines.setValue(true, for: led)
        _ = await decisions.next()
        await clock.waitForSleepers(1)
        try await lines.setValue(false, for: led)
        clock.advance(by: .seconds(5))
        // The athlete's task ends without pressing: its sensor stays inactive.
        await athlete.waitUntilIdle()
        #expect(clock.sleeperCount == 0, "no hold started")
        #expect(try await lines.value(of: config.targets[0].sensorLine) == false)
        #expect(try await chip.level(of: config.targets[0].sensorLine) == true)
        await athlete.stop()
    }
}

@Suite struct GPIOBackendFactoryTests {
    @Test func simBackendGivesAChipWithARunningAthlete() async throws {
        var config = GPIOConfiguration.reflexDefault
        config.backend = .sim
        config.simulationSeed = 5
        config.athlete = AthleteBehaviour(missProbability: 0, wrongTargetProbability: 0)
        let clock = ManualClock()
        let opened = try await config.openGPIO(clock: clock)
        let athlete = try #require(opened.athlete)
        #expect(opened.chip.chipDescription == "sim:/dev/gpiochip0")
        let lines = try await opened.chip.request(config.lineRequest(consumer: "reflex"))
        var decisions = athlete.decisions.makeAsyncIterator()
        try await lines.setValue(true, for: 24)
        #expect(await decisions.next()?.litTarget == 4)
        await clock.waitForSleepers(1)
        clock.advanceToNextDeadline()
        var edges = lines.edges.makeAsyncIterator()
        let edge = try #require(await edges.next())
        #expect(edge.offset == 26 && edge.kind == .rising)
        await athlete.stop()
        await lines.release()
    }

    /// On the real clock with time scaled down a thousandfold, a sequence runs in milliseconds.
    @Test func scaledRealTimeRunsASequenceQuickly() async throws {
        let config = GPIOConfiguration.reflexDefault
        let clock = ContinuousClock()
        let chip = SimulatedGPIOChip(clock: clock)
        let athlete = SimulatedAthlete(chip: chip, targets: config.targets,
            behaviour: AthleteBehaviour(missProbability: 0, wrongTargetProbability: 0), seed: 8, clock: clock, timeScale: 0.001)
        await athlete.start()
        let lines = try await chip.request(config.lineRequest(consumer: "reflex"))
        var edges = lines.edges.makeAsyncIterator()
        for lit in [2, 5, 1] {
            try await lines.setValue(true, for: config.targets[lit].ledLine)
            let press = try #require(await edges.next())
            #expect(press.offset == config.targets[lit].sensorLine && press.kind == .rising)
            let letGo = try #require(await edges.next())
            #expect(letGo.offset == press.offset && letGo.kind == .falling)
            try await lines.setValue(false, for: config.targets[lit].ledLine)
        }
        await athlete.stop()
        await lines.release()
    }

    #if os(Linux)
    @Test(.enabled(if: LinuxGPIOChip.availableChips().isEmpty))
    func linuxBackendWithoutHardwareSaysSo() async {
        let error = await #expect(throws: GPIOError.self) {
            try await GPIOConfiguration.reflexDefault.openGPIO(clock: ContinuousClock())
        }
        #expect(error?.description == "GPIO chip /dev/gpiochip0 does not exist: no GPIO chips exist on this machine "
            + "(is this a Raspberry Pi? use --gpio sim to simulate)")
    }
    #endif
}
