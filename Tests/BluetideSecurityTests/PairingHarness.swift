import BluetideBase

@testable import BluetideHost

/// Two ``SMPPairing`` machines, a central and a peripheral, wired to each other in memory with
/// a pretend controller for the encryption step, on a manual time line (no sleeps).
struct PairingHarness {
    var central: SMPPairing
    var peripheral: SMPPairing
    var now: Duration = .zero

    /// Everything but `.send` each side produced, in order.
    var centralEvents: [SMPOutput] = []
    var peripheralEvents: [SMPOutput] = []
    /// Every PDU on the link, in order, with its sender.
    var traffic: [(from: LinkRole, pdu: SMPPDU)] = []
    /// True once the pretend controller encrypted the link.
    var encrypted = false

    /// How the simulated users answer.
    var typedPasskey: UInt32?  // nil: type what the other side shows
    var bothInputPasskey: UInt32 = 123_456
    var centralConfirms = true
    var peripheralConfirms = true
    /// Drop every PDU the peripheral sends (a peer that stops answering).
    var peripheralSilent = false

    static let centralAddress = BluetoothAddress(value: 0xC0FF_EE00_0001, type: .random)
    static let peripheralAddress = BluetoothAddress(value: 0x0011_2233_4455, type: .public)

    init(central: SMPConfiguration, peripheral: SMPConfiguration) {
        self.central = SMPPairing(
            role: .central, localAddress: Self.centralAddress, peerAddress: Self.peripheralAddress, configuration: central)
        self.peripheral = SMPPairing(
            role: .peripheral, localAddress: Self.peripheralAddress, peerAddress: Self.centralAddress,
            configuration: peripheral)
    }

    private var queue: [(to: LinkRole, work: Work)] = []
    private enum Work {
        case outputs([SMPOutput])
    }

    /// Runs `outputs` of `side` and everything they lead to, answering prompts, until quiet.
    mutating func run(_ outputs: [SMPOutput], from side: LinkRole) {
        queue.append((side, .outputs(outputs)))
        var answeredPrompts = 0
        while true {
            while !queue.isEmpty {
                let (origin, work) = queue.removeFirst()
                guard case let .outputs(list) = work else { continue }
                for output in list { process(output, from: origin) }
            }
            guard answeredPrompts < 10, let (side, prompt) = nextUnansweredPrompt(after: answeredPrompts) else { return }
            answeredPrompts += 1
            answer(prompt, on: side)
        }
    }

    private var prompts: [(LinkRole, SMPPrompt)] = []

    private func nextUnansweredPrompt(after count: Int) -> (LinkRole, SMPPrompt)? {
        // Display prompts need no answer; the rest are answered in the order they came.
        let pending = prompts.filter { if case .displayPasskey = $0.1 { return false } else { return true } }
        return count < pending.count ? pending[count] : nil
    }

    private var displayedPasskey: UInt32? {
        for (_, prompt) in prompts { if case let .displayPasskey(value) = prompt { return value } }
        return nil
    }

    private mutating func answer(_ prompt: SMPPrompt, on side: LinkRole) {
        let outputs: [SMPOutput]
        switch prompt {
        case .confirmNumber:
            let yes = side == .central ? centralConfirms : peripheralConfirms
            outputs = side == .central
                ? central.confirmNumericComparison(yes, now: now) : peripheral.confirmNumericComparison(yes, now: now)
        case .enterPasskey:
            let value = typedPasskey ?? displayedPasskey ?? bothInputPasskey
            outputs = side == .central ? central.enterPasskey(value, now: now) : peripheral.enterPasskey(value, now: now)
        case .displayPasskey:
            outputs = []
        }
        queue.append((side, .outputs(outputs)))
    }

    private mutating func process(_ output: SMPOutput, from side: LinkRole) {
        switch output {
        case let .send(pdu):
            traffic.append((side, pdu))
            if side == .peripheral && peripheralSilent { return }
            let bytes = pdu.bytes
            if side == .central {
                queue.append((.peripheral, .outputs(peripheral.receive(bytes, now: now))))
            } else {
                queue.append((.central, .outputs(central.receive(bytes, now: now))))
            }
        case let .startEncryption(key):
            record(output, from: side)
            // The pretend controller: the peripheral's host answers the LTK request.
            let answer = peripheral.longTermKeyRequested(ediv: key.ediv, random: key.random, now: now)
            let ok = answer?.key == key.key
            encrypted = ok
            let status: UInt8 = ok ? 0x00 : 0x06  // PIN or Key Missing
            queue.append((.central, .outputs(central.encryptionChanged(status: status, enabled: ok, now: now))))
            queue.append((.peripheral, .outputs(peripheral.encryptionChanged(status: status, enabled: ok, now: now))))
        default:
            record(output, from: side)
        }
    }

    private mutating func record(_ output: SMPOutput, from side: LinkRole) {
        if case let .prompt(prompt) = output { prompts.append((side, prompt)) }
        if side == .central { centralEvents.append(output) } else { peripheralEvents.append(output) }
    }

    /// Starts pairing from the central.
    mutating func pairFromCentral() {
        run(central.pair(now: now), from: .central)
    }

    /// The peripheral asks with a Security Request; the central answers by pairing.
    mutating func pairFromPeripheral() {
        run(peripheral.pair(now: now), from: .peripheral)
        if centralEvents.contains(where: { if case .securityRequested = $0 { return true } else { return false } }) {
            run(central.pair(now: now), from: .central)
        }
    }

    var centralResult: SMPPairingResult? { Self.result(centralEvents) }
    var peripheralResult: SMPPairingResult? { Self.result(peripheralEvents) }
    var centralError: SMPPairingError? { Self.error(centralEvents) }
    var peripheralError: SMPPairingError? { Self.error(peripheralEvents) }

    var centralPrompts: [SMPPrompt] { centralEvents.compactMap { if case let .prompt(p) = $0 { return p } else { return nil } } }
    var peripheralPrompts: [SMPPrompt] { peripheralEvents.compactMap { if case let .prompt(p) = $0 { return p } else { return nil } } }

    static func result(_ events: [SMPOutput]) -> SMPPairingResult? {
        for event in events { if case let .completed(result) = event { return result } }
        return nil
    }

    static func error(_ events: [SMPOutput]) -> SMPPairingError? {
        for event in events { if case let .failed(error) = event { return error } }
        return nil
    }
}
