import BluetideBase
import BluetideHCI

/// One command of a request: what to send, how long it may wait, and whether its failure ends
/// the request (a tolerant step, like turning advertising off before configuring it, does not).
struct CommandStep: Sendable {
    var opcode: HCIOpcode
    var parameters: [UInt8]
    var timeout: Double?
    var tolerant: Bool

    init(_ opcode: HCIOpcode, _ parameters: [UInt8], timeout: Double? = nil, tolerant: Bool = false) {
        self.opcode = opcode
        self.parameters = parameters
        self.timeout = timeout
        self.tolerant = tolerant
    }

    init<C: HCICommand>(_ command: C, timeout: Double? = nil, tolerant: Bool = false) {
        self.init(C.opcode, command.parameterBytes, timeout: timeout, tolerant: tolerant)
    }
}

/// Why the core sent a command: what its answer is for.
enum CommandPurpose: Sendable {
    /// A step of a request's procedure; `scanner` when the request starts a scan.
    case step(HostRequestID, tolerant: Bool, scanner: Int?)
    /// The LE Create Connection of a connect.
    case createConnection(HostRequestID)
    /// The LE Create Connection Cancel of a timed-out connect.
    case cancelConnection
    /// The HCI Disconnect of a disconnect request.
    case disconnect(HostRequestID, handle: UInt16, timeout: Double)
    /// Nobody waits: a failure is only logged.
    case background
    /// Asked for by the security component for a link.
    case security(handle: UInt16)
}

extension HostCore {
    /// Sends `steps` in order for `request`; it finishes with the last step's answer, or with
    /// the first failure of a step that is not tolerant (the steps after it are withdrawn).
    mutating func startProcedure(
        _ request: HostRequestID, _ steps: [CommandStep], scanner: Int?, now t: Double, into outputs: inout HostOutputs
    ) {
        var tickets: [HCICommandTicket] = []
        tickets.reserveCapacity(steps.count)
        for step in steps {
            tickets.append(enqueue(
                step.opcode, step.parameters, timeout: step.timeout,
                purpose: .step(request, tolerant: step.tolerant, scanner: scanner), now: t, into: &outputs))
        }
        procedures[request] = tickets
    }

    /// Queues one command for `purpose`; its packet joins `outputs` when a credit is free.
    @discardableResult
    mutating func enqueue(
        _ opcode: HCIOpcode, _ parameters: [UInt8], timeout: Double? = nil, purpose: CommandPurpose, now t: Double,
        into outputs: inout HostOutputs
    ) -> HCICommandTicket {
        let (ticket, output) = commands.enqueue(opcode, parameters: parameters, now: t, timeout: timeout)
        purposes[ticket] = purpose
        apply(output, now: t, into: &outputs)
        return ticket
    }

    /// Queues a command nobody waits for (a disconnect of an unwanted link, a parameter update).
    mutating func enqueueBackground<C: HCICommand>(_ command: C, now t: Double, into outputs: inout HostOutputs) {
        enqueue(C.opcode, command.parameterBytes, purpose: .background, now: t, into: &outputs)
    }

    /// Carries out what the command queue returned: packets out, completions to their purpose.
    mutating func apply(_ output: HCICommandQueueOutput, now t: Double, into outputs: inout HostOutputs) {
        outputs.packets.append(contentsOf: output.packets)
        for completion in output.completions { complete(completion, now: t, into: &outputs) }
    }

    /// One command ended: tells whoever it was for.
    mutating func complete(_ completion: HCICommandOutcome, now t: Double, into outputs: inout HostOutputs) {
        guard let purpose = purposes.removeValue(forKey: completion.ticket) else { return }
        let result = completion.result.mapError { HostError.command($0.description) }
        switch purpose {
        case let .step(request, tolerant, scanner):
            stepFinished(request, completion.ticket, result, tolerant: tolerant, scanner: scanner, now: t, into: &outputs)
        case let .createConnection(request):
            guard case .failure(let error) = result, case let .connecting(attempt, _) = connectAttempt,
                  attempt.id == request else { return }
            connectAttempt = .idle
            finish(request, .failure(error), into: &outputs)
            startQueuedConnect(now: t, into: &outputs)
        case .cancelConnection:
            cancelAnswered(succeeded: (try? result.get()) != nil, now: t, into: &outputs)
        case let .disconnect(request, handle, timeout):
            disconnectAnswered(request, handle: handle, timeout: timeout, result, now: t, into: &outputs)
        case .background:
            if case let .failure(error) = result { HostLog.hci.debug("a command nobody waits for failed", metadata: ["error": "\(error)"]) }
        case let .security(handle):
            var actions = HostSecurity.Actions()
            security.commandFinished(completion.opcode, on: handle, result, now: t, into: &actions)
            apply(actions, now: t, into: &outputs)
        }
    }

    private mutating func stepFinished(
        _ request: HostRequestID, _ ticket: HCICommandTicket, _ result: Result<HCICommandResponse, HostError>,
        tolerant: Bool, scanner: Int?, now t: Double, into outputs: inout HostOutputs
    ) {
        guard var remaining = procedures[request] else { return }
        remaining.removeAll { $0 == ticket }
        if case let .failure(error) = result, !tolerant {
            procedures[request] = nil
            for later in remaining {
                purposes[later] = nil
                _ = commands.cancel(later)
            }
            if let scanner {
                scanners.remove(scanner)
                scanning = false
            }
            finish(request, .failure(error), into: &outputs)
            return
        }
        guard remaining.isEmpty else {
            procedures[request] = remaining
            return
        }
        procedures[request] = nil
        switch result {
        case let .success(response): finish(request, .success(scanner == nil ? .command(response) : .done), into: &outputs)
        case .failure: finish(request, .success(.done), into: &outputs)
        }
    }
}
