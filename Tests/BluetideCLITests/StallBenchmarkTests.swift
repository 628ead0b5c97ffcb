import Testing
@testable import BluetideBench
import BluetideHost

/// The stalled-subscriber bench, by counts (no clock): a central that never reads keeps at most
/// `HostStack.subscriptionBuffer` values, the newest, and every other value is counted as dropped.
@Suite struct StallBenchmarkTests {
    @Test func aSubscriberThatNeverReadsHoldsAtMostTheBufferAndEveryValueIsAccountedFor() async throws {
        try await benchTimeLimit(60) {
            let extra = 1_000
            let count = HostStack.subscriptionBuffer + extra
            let result = try await StallBenchmark.run(count: count, valueSize: 200)
            #expect(result.sent == count)
            #expect(result.held == HostStack.subscriptionBuffer)
            #expect(result.dropped == extra)
            #expect(result.newestHeld == count - 1)
            #expect(result.accountedFor)
            #expect(result.problem == nil)
        }
    }

    @Test func aRunAboveItsLimitOrWithValuesUnaccountedForIsAProblem() {
        let sample = StallBenchResult.Sample(seconds: 1, residentMegabytes: 41)
        let tooBig = StallBenchResult(
            valueSize: 500, offeredBytesPerSecond: 1_000_000, seconds: 60, sent: 10, dropped: 2, held: 8, newestHeld: 9,
            samples: [sample], limitMegabytes: 40)
        #expect(tooBig.problem?.contains("41.0 MB") == true)
        #expect(!tooBig.isWithinLimit)
        let lost = StallBenchResult(
            valueSize: 500, offeredBytesPerSecond: 1_000_000, seconds: 60, sent: 10, dropped: 1, held: 8, newestHeld: 9,
            samples: [], limitMegabytes: 40)
        #expect(lost.problem == "10 values sent, but 8 held + 1 dropped = 9")
        #expect(tooBig.json.contains("\"type\":\"stall-benchmark\""))
    }
}
