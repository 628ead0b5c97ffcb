import BluetideSupport
import BluetideTestSupport
import Foundation
import Synchronization
import Testing
@testable import BluetideBench
@testable import BluetideCommands

/// Both sides of the Bumble-compatible bench on one in-process virtual link, each scenario;
/// and the inbox that carries packets between the stack and a scenario.
@Suite struct BumbleBenchLoopbackTests {
    static func options(_ arguments: [String] = []) throws -> BumbleBenchOptions {
        try BumbleBenchOptions.parse(["--quiet", "--start-delay", "0", "--timeout", "20"] + arguments)
    }

    @Test(arguments: BumbleBenchScenario.allCases)
    func everyScenarioRunsAgainstItsPeer(_ scenario: BumbleBenchScenario) async throws {
        try await benchTimeLimit(60) {
            let options = try Self.options(["--scenario", scenario.rawValue, "--packet-count", "40", "--packet-size", "200"])
            let central = try options.settings(for: .central)
            var peripheral = central
            peripheral.scenario = scenario.peer
            let reports = try await BumbleBenchLoopback.run(central: central, peripheral: peripheral, options: options)
            #expect(reports.map(\.role) == [.central, .peripheral])
            #expect(reports.map(\.scenario) == [scenario, scenario.peer])
            for report in reports {
                #expect(report.isClean, "\(report.line)")
                #expect(report.packets == 40, "\(report.line)")
                #expect(report.mtu == 517)
            }
            let sender = try #require(reports.first { $0.scenario.originatesPackets })
            let receiver = try #require(reports.first { !$0.scenario.originatesPackets })
            #expect(sender.bytes == 40 * 200)
            #expect(receiver.bytes == 40 * 200)
            if scenario == .ping || scenario == .pong {
                #expect(sender.roundTrip?.count == 40)
            }
        }
    }

    @Test(arguments: [BumbleBenchScenario.send, .ping])
    func repeatedRunsAreEachReportedAndSummed(_ scenario: BumbleBenchScenario) async throws {
        try await benchTimeLimit(60) {
            let options = try Self.options(["--scenario", scenario.rawValue, "--packet-count", "10", "--packet-size", "50",
                                            "--repeat", "2", "--repeat-delay", "0", "--linger"])
            let central = try options.settings(for: .central)
            #expect(central.repeatCount == 2)
            var peripheral = central
            peripheral.scenario = scenario.peer
            let reports = try await BumbleBenchLoopback.run(central: central, peripheral: peripheral, options: options)
            #expect(reports.filter { $0.role == .central }.count == 3, "\(reports.map(\.line))")
            #expect(reports.filter { $0.role == .peripheral }.count == 3, "\(reports.map(\.line))")
            #expect(reports.allSatisfy { $0.isClean && $0.packets == 10 })
            let summary = try #require(BumbleBenchReport.summary(of: reports.filter { $0.role == .central }))
            #expect(summary.hasPrefix("central \(scenario.rawValue), 3 runs: " + (scenario == .ping ? "average RTT ms min=" : "B/s min=")), "\(summary)")
            #expect(BumbleBenchReport.summary(of: Array(reports.prefix(1))) == nil)
        }
    }

    @Test func aPacketLargerThanTheLinkCarriesIsRefusedBeforeSending() async throws {
        try await benchTimeLimit(60) {
            let options = try Self.options(["--att-mtu", "23", "--packet-size", "100", "--stall-timeout", "5", "--timeout", "30"])
            let central = try options.settings(for: .central)
            var peripheral = central
            peripheral.scenario = .receive
            await #expect {
                try await BumbleBenchLoopback.run(central: central, peripheral: peripheral, options: options)
            } throws: { error in
                "\(error)".contains("--packet-size 100: the link carries at most 20 octets per packet (ATT MTU 23 − 3)")
            }
        }
    }

    @Test func lingeringReceiverServesSeveralRuns() async throws {
        try await benchTimeLimit(60) {
            // Two sends on one link, as Bumble's `--repeat`: the receiver reports each run.
            let options = try Self.options(["--packet-count", "5", "--packet-size", "50", "--linger"])
            let settings = try options.settings(for: .peripheral)
            let inbox = BumbleBenchInbox()
            let link = ScriptedLink(inbox: inbox)
            for _ in 0..<2 {
                inbox.push([0x00])
                for n in 0..<5 {
                    inbox.push(BumbleBenchPacket.sequence(number: UInt32(n), isLast: n == 4, timestampMicroseconds: 0, packetSize: 50).bytes)
                }
            }
            inbox.end("peer disconnected")
            let reports = try await BumbleBenchRunner(role: .peripheral, settings: settings).run(on: link)
            #expect(reports.count == 2)
            #expect(reports.allSatisfy { $0.packets == 5 && $0.isClean })
            #expect(link.sent == [BumbleBenchPacket.ack(number: 4, isLast: true).bytes, BumbleBenchPacket.ack(number: 4, isLast: true).bytes])
        }
    }

    @Test func linkLostMidRunIsAClearFailure() async throws {
        try await benchTimeLimit(30) {
            let settings = try Self.options().settings(for: .peripheral)
            let inbox = BumbleBenchInbox()
            inbox.push([0x00])
            inbox.push(BumbleBenchPacket.sequence(number: 0, isLast: false, timestampMicroseconds: 0, packetSize: 50).bytes)
            inbox.end("disconnected: connection timeout")
            await #expect {
                try await BumbleBenchRunner(role: .peripheral, settings: settings).run(on: ScriptedLink(inbox: inbox))
            } throws: { error in
                "\(error)" == "receive: the link ended while waiting for more packets (1 came, the last one never did): disconnected: connection timeout"
            }
        }
    }

    @Test func silentPeerStallsWithTheOptionToChange() async throws {
        try await benchTimeLimit(30) {
            let settings = try Self.options(["--stall-timeout", "0.2"]).settings(for: .central)
            let link = ScriptedLink(inbox: BumbleBenchInbox())
            await #expect {
                try await BumbleBenchRunner(role: .central, settings: settings).run(on: link)
            } throws: { error in
                "\(error)".hasPrefix("send: waited 0.2 s for the ACK of the last packet in vain (--stall-timeout SECONDS")
            }
            #expect(link.sent.count == 11, "RESET and 10 packets went out")
        }
    }

    @Test func inboxKeepsArrivalTimesAndOrder() async throws {
        try await benchTimeLimit(30) {
            // Time moves only when the test moves it: no real sleep, the same result on a busy machine.
            let clock = ManualClock()
            let inbox = BumbleBenchInbox(time: .manual(clock))
            clock.advance(by: .seconds(1))
            inbox.push([1])
            clock.advance(by: .milliseconds(10))
            inbox.push([2])
            clock.advance(by: .milliseconds(50))
            let first = try await inbox.next(timeout: 1)
            let second = try await inbox.next(timeout: 1)
            #expect(first.bytes == [1] && second.bytes == [2])
            #expect(first.time == 1.0 && abs(second.time - 1.01) < 1e-9, "the time is the push, not the take (\(first.time), \(second.time))")
            // A wait fails once its timeout has passed on the inbox's clock, not before.
            let stalled = Task { try await inbox.next(timeout: 0.05) }
            await clock.waitForSleepers(1)
            clock.advance(by: .milliseconds(49))
            #expect(inbox.hasWaiter, "still waiting 49 ms into a 50 ms timeout")
            clock.advance(by: .milliseconds(2))
            await #expect(throws: BumbleBenchInbox.Failure.stalled(seconds: 0.05)) { try await stalled.value }
            inbox.push([3])
            inbox.end("gone")
            #expect(try await inbox.next(timeout: 1).bytes == [3], "queued packets outlive the end")
            await #expect(throws: BumbleBenchInbox.Failure.linkLost("gone")) { try await inbox.next(timeout: 1) }
        }
    }

    @Test func inboxWaitsStartNoTimerTaskPerPacket() async throws {
        try await benchTimeLimit(60) {
            // Ping-pong through two inboxes, so the takes really wait: every wait has a
            // timeout, yet the watchdogs are started once per inbox, not once per packet (a
            // task per wait held its sleep's memory for the whole timeout: 60 MB at full rate).
            let ping = BumbleBenchInbox()
            let pong = BumbleBenchInbox()
            let rounds = 500
            let echo = Task {
                for _ in 0..<rounds { pong.push(try await ping.next(timeout: 60).bytes) }
            }
            for round in 0..<rounds {
                ping.push([UInt8(truncatingIfNeeded: round)])
                let echoed = try await pong.next(timeout: 60)
                #expect(echoed.bytes == [UInt8(truncatingIfNeeded: round)])
            }
            try await echo.value
            #expect(ping.watchdogsStarted + pong.watchdogsStarted <= 4, "watchdog tasks: \(ping.watchdogsStarted) + \(pong.watchdogsStarted) for \(2 * rounds) waits")
            #expect(ping.queuedCount == 0 && pong.queuedCount == 0)
        }
    }

    @Test func inboxStallFailsOnlyTheWaitThatStalled() async throws {
        try await benchTimeLimit(30) {
            let inbox = BumbleBenchInbox()
            // A long timeout armed first does not delay a shorter one that follows.
            let long = Task { try await inbox.next(timeout: 30) }
            inbox.push([1])
            let first = try await long.value
            #expect(first.bytes == [1])
            await #expect(throws: BumbleBenchInbox.Failure.stalled(seconds: 0.05)) { try await inbox.next(timeout: 0.05) }
            inbox.push([2])
            let second = try await inbox.next(timeout: 0)
            #expect(second.bytes == [2], "a queued packet is taken even with no time to wait")
            await #expect(throws: BumbleBenchInbox.Failure.stalled(seconds: 0)) { try await inbox.next(timeout: 0) }
        }
    }

    @Test func inboxWaitEndsOnCancellation() async throws {
        try await benchTimeLimit(30) {
            let inbox = BumbleBenchInbox()
            let waiter = Task { try await inbox.next(timeout: nil) }
            // Cancel a reader that really waits (one cancelled before it waits is another path).
            while !inbox.hasWaiter { await Task.yield() }
            waiter.cancel()
            await #expect(throws: CancellationError.self) { try await waiter.value }
            #expect(!inbox.hasWaiter)
        }
    }
}

/// A link whose inbox the test fills; records what the runner sends.
final class ScriptedLink: BumbleBenchLink {
    let inbox: BumbleBenchInbox
    private let sentPackets = Mutex<[[UInt8]]>([])
    init(inbox: BumbleBenchInbox) { self.inbox = inbox }
    var sent: [[UInt8]] { sentPackets.withLock { $0 } }
    func mtu() async -> Int { 517 }
    func send(_ packet: [UInt8]) async throws { sentPackets.withLock { $0.append(packet) } }
    func close() async { inbox.end("closed") }
}

/// A bench test that hung.
struct BenchTestTimedOut: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "the bench test did not finish within \(seconds) s of run time" }
}

/// Runs `body` under a run-time limit (a hang guard, not a timing assertion).
func benchTimeLimit(_ seconds: Double, _ body: @escaping @Sendable () async throws -> Void) async throws {
    try await withRunTimeLimit(seconds, onTimeout: { BenchTestTimedOut(seconds: seconds) }, body)
}
