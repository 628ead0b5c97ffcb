import BluetideBase
import BluetideHCI
import BluetideSupport
import Testing
@testable import BluetideVirtual

@Suite(.timeLimit(.minutes(1))) struct VirtualRobustnessTests {
    /// Random commands (known and unknown opcodes, random parameters) and random ACL from two
    /// hosts: the controllers never trap, and every command except Host Number Of Completed
    /// Packets is answered by exactly one Command Complete or Command Status.
    @Test func randomTrafficIsAlwaysAnswered() async throws {
        var rng = SplitMix64(seed: 0xF022)
        let link = VirtualLink(seed: 3)
        let hosts = [HostProbe(await link.attachController()), HostProbe(await link.attachController())]
        for host in hosts { try await host.initialize(random: .randomStatic(UInt64(host.controller.id))) }
        let opcodes = HCICommandCatalog.all.map { $0.opcode.rawValue } + [0x0C63, 0x202F, 0x2023, 0xFC01, 0x2017, 0x0000]
        for round in 0..<1500 {
            let host = hosts[round % 2]
            if Int.random(in: 0..<5, using: &rng) == 0 {
                let length = Int.random(in: 0...300, using: &rng)
                let data = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
                await host.controller.send(.acl(handle: UInt16.random(in: 0...3, using: &rng), boundary: .firstFlushable, broadcast: 0, data: data))
            } else {
                let opcode = opcodes.randomElement(using: &rng) ?? 0x0C03
                // Reset rarely, so connections get a chance to form.
                if opcode == HCIReset.opcode.rawValue, Int.random(in: 0..<10, using: &rng) != 0 { continue }
                let length = Int.random(in: 0...40, using: &rng)
                var parameters = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
                if !parameters.isEmpty, Bool.random(using: &rng) { parameters[0] = UInt8.random(in: 0...3, using: &rng) }
                await host.controller.send(.command(opcode: HCIOpcode(rawValue: opcode), parameters: parameters))
                var answered = 0
                // Drain everything the command caused on this host; other packets are fine.
                await host.controller.send(HCIReadBDADDR().packet)
                while let packet = await host.next(reports: true) {
                    guard case let .event(code, parameters) = packet else { continue }
                    let event = try HCIEvent(code: code, parameters: parameters)
                    if case let .commandComplete(cc) = event, cc.opcode == HCIReadBDADDR.opcode, opcode != HCIReadBDADDR.opcode.rawValue { break }
                    if case let .commandComplete(cc) = event, cc.opcode.rawValue == opcode { answered += 1 }
                    if case let .commandStatus(cs) = event, cs.opcode.rawValue == opcode { answered += 1 }
                    if opcode == HCIReadBDADDR.opcode.rawValue, answered == 2 { answered = 1; break }
                }
                #expect(answered == 1, "opcode \(HCIOpcode(rawValue: opcode)) with \(parameters.count) bytes")
            }
        }
        // The other host's queue holds only well-formed packets.
        for host in hosts { await host.controller.detachHost() }
        for host in hosts {
            while let packet = await host.next(reports: true) {
                if case let .event(code, parameters) = packet { _ = try HCIEvent(code: code, parameters: parameters) }
            }
        }
    }
}
