import BluetideBase
import Testing
@testable import Bluetide
import BluetideTestSupport

/// The connection's decisions without I/O: inputs and a time in, actions out.
@Suite struct ConnectionMachineTests {
    typealias Instant = BluetideClock.Instant
    static let address = BluetoothAddress.randomStatic(0xC0DE)
    static func at(_ milliseconds: Int64) -> Instant { Instant(offset: .milliseconds(milliseconds)) }

    @Test func retriesAfterTheDelayThenGivesUpWithTheLastError() {
        let policy = ConnectionPolicy(retry: .init(attempts: 3, delay: .milliseconds(500)))
        var machine = ConnectionMachine(address: Self.address, policy: policy, attemptTimeout: .seconds(2))
        #expect(machine.handle(.connect, now: Self.at(0)) == [.attempt(timeout: .seconds(2))])
        #expect(machine.phase == .connecting(attempt: 1))
        let refused = BluetideError.connectFailed(Self.address, reason: "refused")
        #expect(machine.handle(.attemptFailed(refused), now: Self.at(100)) == [.wait(until: Self.at(600))])
        #expect(machine.phase == .waitingToConnect(attempt: 2))
        #expect(machine.handle(.waitOver, now: Self.at(600)) == [.attempt(timeout: .seconds(2))])
        let timedOut = BluetideError.connectTimedOut(Self.address, seconds: 2)
        #expect(machine.handle(.attemptFailed(timedOut), now: Self.at(2600)) == [.wait(until: Self.at(3100))])
        #expect(machine.handle(.waitOver, now: Self.at(3100)) == [.attempt(timeout: .seconds(2))])
        #expect(machine.handle(.attemptFailed(refused), now: Self.at(3200)) == [.failConnect(refused)])
        #expect(machine.isClosed)
        // Nothing more happens once closed; a link made late is dropped.
        #expect(machine.handle(.waitOver, now: Self.at(4000)) == [])
        #expect(machine.handle(.linkUp, now: Self.at(4000)) == [.dropLink])
    }

    @Test func theWholeConnectStaysWithinItsLimit() {
        let policy = ConnectionPolicy(retry: .init(attempts: 10, delay: .milliseconds(300)), setupTimeout: .seconds(10))
        var machine = ConnectionMachine(address: Self.address, policy: policy, attemptTimeout: .seconds(1), within: .milliseconds(1500))
        #expect(machine.handle(.connect, now: Self.at(0)) == [.attempt(timeout: .seconds(1))])
        let timedOut = BluetideError.connectTimedOut(Self.address, seconds: 1)
        #expect(machine.handle(.attemptFailed(timedOut), now: Self.at(1000)) == [.wait(until: Self.at(1300))])
        // The second attempt gets what is left (0.2 s), and its time-out names the whole limit.
        #expect(machine.handle(.waitOver, now: Self.at(1300)) == [.attempt(timeout: .milliseconds(200))])
        let short = BluetideError.connectTimedOut(Self.address, seconds: 0.2)
        #expect(machine.handle(.attemptFailed(short), now: Self.at(1500)) == [.failConnect(.connectTimedOut(Self.address, seconds: 1.5))])

        // A link made in time is set up within what is left, not the policy's 10 s.
        var quick = ConnectionMachine(address: Self.address, policy: policy, attemptTimeout: .seconds(1), within: .seconds(2))
        _ = quick.handle(.connect, now: Self.at(0))
        #expect(quick.handle(.linkUp, now: Self.at(500)) == [.setUp(within: .milliseconds(1500))])
        #expect(quick.handle(.setUpDone, now: Self.at(900)) == [.emit(.connected), .connected])
        #expect(quick.isConnected)
    }

    @Test func aFailedSetUpDropsTheLinkAndFailsTheConnect() {
        var machine = ConnectionMachine(address: Self.address, policy: .default, attemptTimeout: .seconds(1))
        _ = machine.handle(.connect, now: Self.at(0))
        #expect(machine.handle(.linkUp, now: Self.at(10)) == [.setUp(within: .seconds(10))])
        let failure = BluetideError.timedOut(operation: "MTU exchange and service discovery", seconds: 10)
        #expect(machine.handle(.setUpFailed(failure), now: Self.at(10_010)) == [.dropLink, .failConnect(failure)])
        #expect(machine.isClosed)
    }

    /// A machine connected at 0 with `policy`.
    static func connected(_ policy: ConnectionPolicy) -> ConnectionMachine {
        var machine = ConnectionMachine(address: address, policy: policy, attemptTimeout: .seconds(1))
        _ = machine.handle(.connect, now: at(0))
        _ = machine.handle(.linkUp, now: at(0))
        _ = machine.handle(.setUpDone, now: at(0))
        return machine
    }

    @Test func aLostLinkBacksOffReconnectsAndRestores() {
        let reconnect = ConnectionPolicy.Reconnect(
            maximumAttempts: 4, delay: .milliseconds(100), backoffMultiplier: 2, maximumDelay: .seconds(1), jitter: 0.25,
            attemptTimeout: .milliseconds(700), jitterSeed: 7)
        var machine = Self.connected(ConnectionPolicy(reconnect: reconnect, setupTimeout: .seconds(3)))
        // Seed 7: waits of 94, 152, 480, 833 ms (see PolicyReconnectTests); the seed in the
        // input is ignored when the policy has its own.
        #expect(machine.handle(.linkLost(.connectionTimeout, jitterSeed: 99), now: Self.at(1000)) == [
            .emit(.disconnected(reason: .connectionTimeout)), .emit(.reconnecting(attempt: 1)), .wait(until: Self.at(1094)),
        ])
        #expect(!machine.isConnected)
        #expect(machine.handle(.waitOver, now: Self.at(1094)) == [.attempt(timeout: .milliseconds(700))])
        let timedOut = BluetideError.connectTimedOut(Self.address, seconds: 0.7)
        #expect(machine.handle(.attemptFailed(timedOut), now: Self.at(1794)) == [.emit(.reconnecting(attempt: 2)), .wait(until: Self.at(1946))])
        #expect(machine.handle(.waitOver, now: Self.at(1946)) == [.attempt(timeout: .milliseconds(700))])
        // The link is made but its set-up fails: it is dropped and counts as a failed attempt.
        #expect(machine.handle(.linkUp, now: Self.at(1960)) == [.setUp(within: .seconds(3))])
        let refused = BluetideError.timedOut(operation: "MTU exchange and service discovery", seconds: 3)
        #expect(machine.handle(.setUpFailed(refused), now: Self.at(4960)) == [
            .dropLink, .emit(.reconnecting(attempt: 3)), .wait(until: Self.at(5440)),
        ])
        #expect(machine.handle(.waitOver, now: Self.at(5440)) == [.attempt(timeout: .milliseconds(700))])
        #expect(machine.handle(.linkUp, now: Self.at(5450)) == [.setUp(within: .seconds(3))])
        #expect(machine.handle(.setUpDone, now: Self.at(5460)) == [.emit(.reconnected)])
        #expect(machine.isConnected)
        // A stale outcome changes nothing.
        #expect(machine.handle(.waitOver, now: Self.at(6000)) == [])
    }

    @Test func reconnectGivesUpAfterTheLastAttempt() {
        var policy = ConnectionPolicy(reconnect: .init(maximumAttempts: 2, delay: .milliseconds(50), jitter: 0, attemptTimeout: .seconds(1)))
        policy.setupTimeout = .seconds(5)
        var machine = Self.connected(policy)
        _ = machine.handle(.linkLost(.connectionTimeout, jitterSeed: 1), now: Self.at(0))
        _ = machine.handle(.waitOver, now: Self.at(50))
        let timedOut = BluetideError.connectTimedOut(Self.address, seconds: 1)
        #expect(machine.handle(.attemptFailed(timedOut), now: Self.at(1050)) == [.emit(.reconnecting(attempt: 2)), .wait(until: Self.at(1150))])
        _ = machine.handle(.waitOver, now: Self.at(1150))
        let failure = BluetideError.reconnectFailed(attempts: 2, lastError: "\(timedOut)")
        #expect(machine.handle(.attemptFailed(timedOut), now: Self.at(2150)) == [.emit(.failed(failure)), .close(failure)])
        #expect(machine.isClosed)
    }

    @Test func withoutReconnectOrAfterTheUsersDisconnectALostLinkCloses() {
        var plain = Self.connected(.default)
        #expect(plain.handle(.linkLost(.remoteUserTerminated, jitterSeed: 0), now: Self.at(10)) == [
            .emit(.disconnected(reason: .remoteUserTerminated)), .close(.disconnected(reason: .remoteUserTerminated)),
        ])

        // The user disconnects; the link's loss is seen first: no reconnection, a clean close.
        var resilient = Self.connected(.resilient)
        #expect(resilient.handle(.disconnectRequested, now: Self.at(10)) == [])
        #expect(resilient.handle(.linkLost(.localHostTerminated, jitterSeed: 0), now: Self.at(20)) == [
            .emit(.disconnected(reason: .localHostTerminated)), .close(nil),
        ])
        #expect(resilient.handle(.disconnectDone(.localHostTerminated), now: Self.at(20)) == [])

        // Or the disconnect's answer comes first.
        var other = Self.connected(.resilient)
        _ = other.handle(.disconnectRequested, now: Self.at(10))
        #expect(other.handle(.disconnectDone(.localHostTerminated), now: Self.at(20)) == [
            .emit(.disconnected(reason: .localHostTerminated)), .close(nil),
        ])

        // While reconnecting, a disconnect closes at once; the attempt's late link is dropped.
        var reconnecting = Self.connected(.resilient)
        _ = reconnecting.handle(.linkLost(.connectionTimeout, jitterSeed: 3), now: Self.at(0))
        _ = reconnecting.handle(.waitOver, now: Self.at(300))
        #expect(reconnecting.handle(.disconnectRequested, now: Self.at(310)) == [.close(nil)])
        #expect(reconnecting.handle(.linkUp, now: Self.at(320)) == [.dropLink])
    }
}
