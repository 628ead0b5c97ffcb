import Bluetide
@testable import BluetideBlueZ
import BluetideDBus
import BluetideTestSupport
import Foundation
import Testing

/// Bluetide's `org.bluez.Agent1` on a private bus, called as bluetoothd calls it: each question
/// becomes a ``PairingPrompt`` and the application's answer is the reply.
@Suite(.needsLibdbus, .timeLimit(.minutes(1)))
struct BlueZAgentTests {
    static let device = "/org/bluez/hci0/dev_C1_B1_7E_00_07_00"

    /// An agent exported on one connection of a private bus and a second connection that plays
    /// bluetoothd.
    struct Rig {
        let bus: PrivateBus
        let agentSide: DBusConnection
        let bluetoothd: DBusConnection
        let agent: BlueZAgent

        static func start(_ policy: PairingPolicy) async throws -> Rig {
            let bus = try await PrivateBus.start()
            let agentSide = try await DBusConnection.open(.address(bus.address))
            let bluetoothd = try await DBusConnection.open(.address(bus.address))
            let agent = BlueZAgent(bus: agentSide, policy: policy)
            try agentSide.export(path: BlueZAgent.path) { try await agent.handle($0) }
            return Rig(bus: bus, agentSide: agentSide, bluetoothd: bluetoothd, agent: agent)
        }

        func call(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
            try await bluetoothd.call(
                destination: agentSide.uniqueName, path: BlueZAgent.path, interface: BlueZAgent.interface, member: member,
                arguments: arguments, timeout: .seconds(20))
        }

        func stop() async {
            await agentSide.close()
            await bluetoothd.close()
            await bus.stop()
        }
    }

    @Test func numericComparisonIsAskedAndTheAnswerIsTheReply() async throws {
        let rig = try await Rig.start(PairingPolicy(ioCapability: .displayYesNo))
        var prompts = rig.agent.prompts.makeAsyncIterator()
        let accepted = Task { try await rig.call("RequestConfirmation", [.objectPath(Self.device), .uint32(4711)]) }
        let first = try #require(await prompts.next())
        #expect(first.kind == .confirmNumber(4711))
        await first.confirm(true)
        #expect(try await accepted.value.isEmpty)
        #expect(rig.agent.method(of: Self.device) == .numericComparison)

        let refused = Task { try await rig.call("RequestConfirmation", [.objectPath(Self.device), .uint32(1)]) }
        await (try #require(await prompts.next())).confirm(false)
        let error1 = await #expect(throws: DBusError.self) { try await refused.value }
        #expect(error1?.name == "org.bluez.Error.Rejected")
        await rig.stop()
    }

    @Test func aPasskeyTypedIsTheReplyAndCancelEndsTheQuestion() async throws {
        let rig = try await Rig.start(PairingPolicy(ioCapability: .keyboardDisplay))
        var prompts = rig.agent.prompts.makeAsyncIterator()
        let typed = Task { try await rig.call("RequestPasskey", [.objectPath(Self.device)]) }
        let prompt = try #require(await prompts.next())
        #expect(prompt.kind == .enterPasskey)
        try await prompt.enter(passkey: 123_456)
        #expect(try await typed.value == [.uint32(123_456)])

        // bluetoothd's Cancel (the peer gave up) ends a question nobody answered.
        let cancelled = Task { try await rig.call("RequestPasskey", [.objectPath(Self.device)]) }
        let unanswered = try #require(await prompts.next())
        #expect(unanswered.kind == .enterPasskey)
        #expect(try await rig.call("Cancel").isEmpty)
        let error2 = await #expect(throws: DBusError.self) { try await cancelled.value }
        #expect(error2?.name == "org.bluez.Error.Canceled")
        // A late answer changes nothing.
        try await unanswered.enter(passkey: 1)
        await rig.stop()
    }

    @Test func aPasskeyToShowIsPromptedOnceThoughBluetoothdRepeatsIt() async throws {
        let rig = try await Rig.start(PairingPolicy(ioCapability: .displayOnly))
        var prompts = rig.agent.prompts.makeAsyncIterator()
        // bluetoothd calls DisplayPasskey again for each key typed on the device.
        for entered in 0...3 {
            #expect(try await rig.call("DisplayPasskey", [.objectPath(Self.device), .uint32(42), .uint16(UInt16(entered))]).isEmpty)
        }
        #expect(try await rig.call("DisplayPasskey", [.objectPath(Self.device), .uint32(654_321), .uint16(0)]).isEmpty)
        #expect(try #require(await prompts.next()).kind == .displayPasskey(42))
        #expect(try #require(await prompts.next()).kind == .displayPasskey(654_321))
        #expect(rig.agent.method(of: Self.device) == .passkey)
        await rig.stop()
    }

    @Test func justWorksIsAuthorizedByThePolicyAndPinCodesAreRefused() async throws {
        let open = try await Rig.start(PairingPolicy(ioCapability: .noInputNoOutput))
        #expect(try await open.call("RequestAuthorization", [.objectPath(Self.device)]).isEmpty)
        let error3 = await #expect(throws: DBusError.self) { try await open.call("RequestPinCode", [.objectPath(Self.device)]) }
        #expect(error3?.name == "org.bluez.Error.Rejected")
        await open.stop()

        let strict = try await Rig.start(PairingPolicy(ioCapability: .keyboardDisplay, requiresMITM: true))
        let error4 = await #expect(throws: DBusError.self) { try await strict.call("RequestAuthorization", [.objectPath(Self.device)]) }
        #expect(error4?.name == "org.bluez.Error.Rejected")
        await strict.stop()
    }

    @Test func theCapabilityNamesAreBlueZs() {
        #expect(BlueZAgent.capability(.keyboardDisplay) == "KeyboardDisplay")
        #expect(BlueZAgent.capability(.displayYesNo) == "DisplayYesNo")
        #expect(BlueZAgent.capability(.noInputNoOutput) == "NoInputNoOutput")
    }

    @Test func theKeyStoreGivesTheExactLevel() {
        let sc = "[General]\nName=X\n\n[LongTermKey]\nKey=00112233445566778899AABBCCDDEEFF\nAuthenticated=3\nEncSize=16\nEDiv=0\nRand=0\n"
        #expect(BlueZKeyInfo.parse(sc) == BlueZKeyInfo(securityLevel: .authenticatedSecureConnections, secureConnections: true, keySize: 16))
        let justWorks = sc.replacingOccurrences(of: "Authenticated=3", with: "Authenticated=2")
        #expect(BlueZKeyInfo.parse(justWorks)?.securityLevel == .encrypted)
        let legacy = "[PeripheralLongTermKey]\nKey=00112233445566778899AABBCCDDEEFF\nAuthenticated=1\nEncSize=7\n"
        #expect(BlueZKeyInfo.parse(legacy) == BlueZKeyInfo(securityLevel: .authenticated, secureConnections: false, keySize: 7))
        #expect(BlueZKeyInfo.parse("[General]\nName=X\n") == nil)
    }
}
