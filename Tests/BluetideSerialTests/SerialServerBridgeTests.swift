import Bluetide
import BluetideSerial
import BluetideSupport
import BluetideTestSupport
import Foundation
import Synchronization
import Testing

/// `SerialServerBridge` (what `bluetide uart serve` runs), without the command: a pipe between
/// an endpoint and a central's link on a private virtual link, its idle end on a manual clock.
@Suite struct SerialServerBridgeTests {
    /// An endpoint fed by the test: what it is fed is the input; `finish` ends it.
    final class ScriptedInput: SerialEndpoint {
        struct Queue: Sendable {
            var chunks: [[UInt8]] = []
            var ended = false
        }
        let queue = Observed(Queue())
        func feed(_ bytes: [UInt8]) { queue.update { $0.chunks.append(bytes) } }
        func finish() { queue.update { $0.ended = true } }
        func nextBytes() async -> [UInt8]? {
            _ = try? await queue.wait { !$0.chunks.isEmpty || $0.ended }
            return queue.update { $0.chunks.isEmpty ? nil : $0.chunks.removeFirst() }
        }
        func deliver(_ bytes: [UInt8]) async throws {}
        func stop() { finish() }
    }

    /// What the bridge wrote out and reported.
    final class Collected: Sendable {
        struct Log: Sendable {
            var output: [UInt8] = []
            var sent: [UInt8] = []
            var received: [UInt8] = []
        }
        let log = Observed(Log())
    }

    @Test(arguments: [SerialPermission.rw, .ro])
    func aPipeCarriesBothWaysAndEndsAfterTheIdleTimeOnItsClock(permission: SerialPermission) async throws {
        let rig = try await SerialServerTests.Rig.start(.nordicUART, name: "PC")
        let collected = Collected()
        let log = collected.log
        let bridge = SerialServerBridge(server: rig.server, permission: permission) { event in
            switch event {
            case let .sent(bytes): log.update { $0.sent += bytes }
            case let .received(chunk): log.update { $0.received += chunk.bytes }
            case .notice: break
            }
        }
        let input = ScriptedInput()
        let clock = ManualClock()
        let ended = Observed(false)
        let pipe = Task {
            await bridge.pipe(input: input, idleTimeout: .seconds(1), clock: clock) { chunk in log.update { $0.output += chunk.bytes } }
            ended.update { $0 = true }
        }
        let link = try await rig.world.connect("PC")
        let recorder = LinkRecorder(link)
        try await within(30, "a subscriber") { try await rig.server.waitForSubscriber() }
        input.feed(Array("hello".utf8))
        try await link.send(Array("back".utf8))
        try await within(30, "the central's bytes reported") { try await log.wait { $0.received.count >= 4 } }
        // What the central writes comes out either way (both permissions receive).
        try await within(30, "back on the output") { try await log.wait { $0.output.count >= 4 } }
        #expect(log.value.output == Array("back".utf8))
        if permission == .rw {
            try await within(30, "hello at the central") { try await recorder.wait { $0.bytes.count >= 5 } }
            #expect(recorder.bytes == Array("hello".utf8))
            #expect(log.value.sent == Array("hello".utf8))
        }
        // Input ends: once drained the pipe waits 1 s of its clock without a write, then ends.
        input.finish()
        try await within(30, "the idle wait") { await clock.waitForSleepers(1) }
        #expect(!ended.value)
        clock.advance(by: .milliseconds(999))
        #expect(!ended.value)
        clock.advance(by: .milliseconds(1))
        try await within(30, "the pipe's end") { try await ended.wait { $0 } }
        await pipe.value
        if permission == .ro {
            #expect(log.value.sent.isEmpty && recorder.bytes.isEmpty, "read-only: the input is not sent")
        }
        recorder.stop()
        await link.close()
        await rig.close()
    }
}
