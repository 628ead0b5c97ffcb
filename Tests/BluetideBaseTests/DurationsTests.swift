import BluetideSupport
import Testing

/// The one set of Duration conversions and the one elapsed-time clock (issue 22 item 4).
@Suite struct DurationsTests {
    @Test func conversionsKeepTheFraction() {
        #expect(Duration.milliseconds(1500).inSeconds == 1.5)
        #expect(Duration.microseconds(-250).inSeconds == -0.00025)
        #expect(Duration.microseconds(2500).inMilliseconds == 2.5)
        #expect(Duration.seconds(0).inSeconds == 0)
    }

    @Test func wholeNanosecondsRoundDownAndSaturate() {
        #expect(Duration.nanoseconds(1_234_567_891).wholeNanoseconds == 1_234_567_891)
        #expect((Duration.nanoseconds(5) + .init(secondsComponent: 0, attosecondsComponent: 999_999_999)).wholeNanoseconds == 5)
        #expect(Duration.milliseconds(-1).wholeNanoseconds == 0, "negative: 0")
        #expect(Duration.seconds(Int64.max).wholeNanoseconds == .max, "saturates")
    }

    @Test func elapsedTimeIsCountedOnTheInjectedClock() {
        let clock = ManualClock()
        clock.advance(by: .seconds(10))
        let elapsed = ElapsedClock(clock: clock)
        #expect(elapsed.seconds == 0)
        clock.advance(by: .milliseconds(2250))
        #expect(elapsed.elapsed == .milliseconds(2250))
        #expect(elapsed.seconds == 2.25)
        let earlier = ManualClock.Instant(offset: .seconds(9))
        #expect(elapsed.seconds(at: earlier) == -1)
        #expect(clock.now.seconds(since: earlier) == 3.25)
    }
}
