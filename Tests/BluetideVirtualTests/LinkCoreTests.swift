import BluetideBase
import BluetideHCI
import Testing
@testable import BluetideVirtual

/// The link's protocol core on its own: inputs with explicit times in, outputs out, no driver,
/// no tasks, no clock.
@Suite struct LinkCoreTests {
    /// A core with two controllers, `a` advertising from its public address and `b` connected
    /// to it as central (handle 1 on both sides).
    struct Connected {
        var core = LinkCore(seed: 7)
        var now: LinkTime = .seconds(1)
        let a: Int
        let b: Int

        init() {
            a = core.attach(publicAddress: nil, leFeatures: VirtualControllerProfile.leFeatures).id
            b = core.attach(publicAddress: nil, leFeatures: VirtualControllerProfile.leFeatures).id
            for id in [a, b] {
                _ = send(id, HCISetEventMask(mask: 0x3FFF_BFFF_FFFF_FFFF).packet)
                _ = send(id, LESetEventMask(mask: 0x0000_0000_0000_187F).packet)
            }
            _ = send(a, LESetAdvertisingEnable(enable: true).packet)
            _ = send(b, LECreateConnection(peerAddress: BluetoothAddress(value: UInt64(a), type: .public)).packet)
        }

        mutating func send(_ id: Int, _ packet: HCIPacket) -> [LinkOutput] {
            run(.fromHost(controller: id, packet))
        }

        mutating func run(_ input: LinkInput) -> [LinkOutput] {
            var outputs: [LinkOutput] = []
            core.handle(input, now: now, into: &outputs)
            return outputs
        }

        /// Moves time to `time` and feeds the timer.
        mutating func tick(at time: LinkTime) -> [LinkOutput] {
            now = time
            return run(.timer)
        }
    }

    @Test func theHarnessConnects() {
        let link = Connected()
        #expect(link.core.connections.count == 1)
    }

    @Test func aProcedureIsDueOneConnectionIntervalAfterItsCommandStatus() {
        var link = Connected()
        let start = link.now
        let answer = link.send(link.b, LEReadRemoteFeatures(handle: 1).packet)
        #expect(answer == [.packet(controller: link.b, HCIEvent.commandStatus(.init(status: .success, opcode: LEReadRemoteFeatures.opcode)).packet)])
        // The default interval: 24 × 1.25 ms.
        #expect(link.core.nextDeadline == start + .milliseconds(30))
        #expect(link.tick(at: start + .milliseconds(30) - .nanoseconds(1)).isEmpty)
        let done = link.tick(at: start + .milliseconds(30))
        #expect(done == [.packet(controller: link.b, HCIEvent.leMeta(.readRemoteFeaturesComplete(.init(
            handle: 1, features: VirtualControllerProfile.leFeatures))).packet)])
        #expect(link.core.nextDeadline == nil)
    }

    @Test func aSentPacketIsCompletedWhenThePeersHostTookIt() {
        var link = Connected()
        let data = HCIPacket.acl(handle: 1, boundary: .firstNonFlushable, broadcast: 0, data: [1, 0, 4, 0, 9])
        #expect(link.send(link.b, data) == [.packet(controller: link.a, .acl(handle: 1, boundary: .firstFlushable, broadcast: 0, data: [1, 0, 4, 0, 9]))])
        #expect(link.core.controllers[link.b]?.aclInFlightTotal == 1)
        #expect(link.run(.hostTook(controller: link.b, count: 1)).isEmpty, "the sender's own reading completes nothing")
        // A's host has not read its earlier packets (command completions, the connection) yet:
        // taking those completes nothing, taking the data completes B's packet.
        let earlier = link.core.deliveries[link.a].map { Int($0.emitted - $0.taken) } ?? 0
        #expect(link.run(.hostTook(controller: link.a, count: earlier - 1)).isEmpty)
        #expect(link.run(.hostTook(controller: link.a, count: 1)) == [.packet(controller: link.b, HCIEvent.numberOfCompletedPackets(
            .init(entries: [.init(handle: 1, completedPackets: 1)])).packet)])
        #expect(link.core.controllers[link.b]?.aclInFlightTotal == 0)
    }

    @Test func theSameInputsAtTheSameTimesGiveTheSameOutputsUnderLoss() {
        func outputs() -> [LinkOutput] {
            var link = Connected()
            link.core.packetLossRate = 0.5
            link.core.latency = .milliseconds(5)
            var all: [LinkOutput] = []
            for i in 0..<12 {
                link.now += .milliseconds(1)
                all += link.send(link.b, .acl(handle: 1, boundary: .firstFlushable, broadcast: 0, data: [UInt8(i)]))
                all += link.run(.timer)
                all += link.run(.hostTook(controller: link.a, count: 100))
            }
            all += link.tick(at: link.now + .seconds(1))
            all += link.send(link.a, .command(opcode: HCIOpcode(rawValue: 0x2018), parameters: []))
            return all
        }
        let first = outputs()
        #expect(first == outputs())
        let delivered = first.filter { if case .packet(_, .acl) = $0 { true } else { false } }.count
        #expect(delivered > 0 && delivered < 12)
    }

    @Test func detachingEndsTheHostsPacketsAndTimesOutThePeer() {
        var link = Connected()
        let out = link.run(.detach(controller: link.a))
        #expect(out == [
            .packet(controller: link.b, HCIEvent.disconnectionComplete(.init(handle: 1, reason: .connectionTimeout)).packet),
            .finished(controller: link.a),
        ])
        #expect(link.core.controllers[link.a] == nil && link.core.connections.isEmpty)
    }
}
