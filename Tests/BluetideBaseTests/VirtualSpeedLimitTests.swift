@testable import BluetideSupport
import Testing

/// The bound on how fast `ManualClock.advancing` lets virtual time run (real instants are given,
/// not read: nothing here waits).
@Suite struct VirtualSpeedLimitTests {
    @Test func aBurstPassesAtOnceThenVirtualTimeFollowsRealTimeTimesTheSpeed() {
        var limit = VirtualSpeedLimit(speed: 100, burst: .seconds(1))
        let start = ContinuousClock.now
        // The burst: 100 steps of 10 ms at the same real instant.
        for _ in 0..<100 { #expect(limit.wait(before: .milliseconds(10), at: start) == nil) }
        // Spent: the next step waits for 10 ms / 100 = 100 µs of real time.
        #expect(limit.wait(before: .milliseconds(10), at: start) == .microseconds(100))
        // 1 ms of real time later, 100 ms of virtual time may pass, and no more.
        let later = start.advanced(by: .milliseconds(1))
        for _ in 0..<10 { #expect(limit.wait(before: .milliseconds(10), at: later) == nil) }
        #expect(limit.wait(before: .milliseconds(10), at: later) != nil)
    }

    @Test func theAllowanceNeverGrowsPastTheBurst() {
        var limit = VirtualSpeedLimit(speed: 100, burst: .seconds(1))
        let start = ContinuousClock.now
        #expect(limit.wait(before: .zero, at: start) == nil)
        // An hour of real time idle still allows only the burst.
        let idle = start.advanced(by: .seconds(3600))
        for _ in 0..<100 { #expect(limit.wait(before: .milliseconds(10), at: idle) == nil) }
        #expect(limit.wait(before: .milliseconds(10), at: idle) != nil)
    }

    @Test func waitsAreShortAndAnAmountAboveTheBurstStillPasses() {
        var slow = VirtualSpeedLimit(speed: 0.001, burst: .zero)
        let start = ContinuousClock.now
        #expect(slow.wait(before: .seconds(1), at: start) == nil, "a full (empty) allowance lets one amount pass")
        #expect(slow.wait(before: .seconds(1), at: start) == .milliseconds(5), "a wait is at most 5 ms, then the driver looks again")
        var fast = VirtualSpeedLimit(speed: 1_000_000, burst: .zero)
        _ = fast.wait(before: .seconds(1), at: start)
        #expect(fast.wait(before: .milliseconds(1), at: start) == .microseconds(100), "at least 100 µs")
        #expect(VirtualSpeedLimit(speed: .nan, burst: .seconds(1)).speed == 1)
    }
}
