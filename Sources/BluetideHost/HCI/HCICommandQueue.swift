import BluetideHCI

/// Identifies one command given to an ``HCICommandQueue``; its completion carries the same ticket.
public struct HCICommandTicket: Hashable, Sendable, CustomStringConvertible {
    /// Unique within one queue, increasing.
    public let id: UInt64
    public var description: String { "command #\(id)" }
}

/// How the controller answered a command that succeeded.
public enum HCICommandResponse: Sendable, Equatable {
    /// Command Complete with status 0 (or no return parameters): the return parameters, status first.
    case complete(returnParameters: [UInt8])
    /// Command Status 0: accepted; its result arrives later as its own event (e.g. LE Connection Complete).
    case pending
}

/// Why a command failed. The description names the command.
public struct HCICommandError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Equatable {
        /// No Command Complete or Command Status within `seconds`. `sent` is false when it was
        /// still waiting for a command credit (the controller paused the host with 0 credits).
        case timedOut(seconds: Double, sent: Bool)
        /// Command Complete or Command Status with a non-zero status.
        case failed(status: HCIStatus, returnParameters: [UInt8])
        /// The queue was told to give up (``HCICommandQueue/cancel(_:)`` or ``HCICommandQueue/failAll(_:)``).
        case abandoned(String)
    }

    /// The command.
    public let opcode: HCIOpcode
    /// Why it failed.
    public let reason: Reason

    /// The failure of `opcode`, for `reason`.
    public init(opcode: HCIOpcode, reason: Reason) {
        self.opcode = opcode
        self.reason = reason
    }

    public var description: String {
        let command = "HCI " + HCICommandNames.describe(opcode)
        switch reason {
        case let .timedOut(seconds, sent):
            let time = seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
            if sent {
                return "\(command) got no Command Complete or Command Status within \(time) s "
                    + "(some controllers never answer commands they do not implement)"
            }
            return "\(command) could not be sent within \(time) s: the controller granted no command credits"
        case let .failed(status, _):
            return "\(command) failed with status \(status)"
        case let .abandoned(why):
            return "\(command) abandoned: \(why)"
        }
    }
}

/// The end of one command: its ticket, opcode and result.
public struct HCICommandOutcome: Sendable, Equatable {
    /// The ticket ``HCICommandQueue/enqueue(_:parameters:now:timeout:)`` returned.
    public let ticket: HCICommandTicket
    /// The command.
    public let opcode: HCIOpcode
    /// Its response, or why it failed.
    public let result: Result<HCICommandResponse, HCICommandError>
}

/// What the queue asks its owner to do: send these packets, deliver these completions.
public struct HCICommandQueueOutput: Sendable, Equatable {
    /// Command packets to write to the transport now, in order.
    public var packets: [HCIPacket] = []
    /// Commands that have finished (answered, failed or timed out).
    public var completions: [HCICommandOutcome] = []

    /// An output; empty by default.
    public init(packets: [HCIPacket] = [], completions: [HCICommandOutcome] = []) {
        self.packets = packets
        self.completions = completions
    }
}

/// Host-side HCI command flow control, as a pure state machine (time passed in, in seconds on
/// any monotonic clock).
///
/// - The controller grants command credits with `num_hci_command_packets` in every Command
///   Complete and Command Status; the host may have that many commands outstanding. The count is
///   a grant, not an increment: the latest event sets it. 0 pauses the host until an event grants
///   more (a Command Complete with opcode 0x0000 is the usual way). The host starts with 1.
/// - A Command Complete or Command Status ends the oldest outstanding command with its opcode.
///   Answers that match nothing (late answers to timed-out commands, NOPs) only update credits.
/// - Every command has a timeout (default 10 s, Bumble's) counted from when it is sent, or from
///   when it was queued while it waits for a credit. Some controllers never answer some commands
///   (Bumble's controller ignores LE Set PHY, LE Encrypt, ...): the command fails with an error
///   naming it, and its credit is taken back so the queue does not stall.
public struct HCICommandQueue: Sendable {
    /// Seconds a command may wait for its answer by default.
    public static let defaultTimeout: Double = 10

    private struct Entry: Sendable {
        var ticket: HCICommandTicket
        var opcode: HCIOpcode
        var parameters: [UInt8]
        var timeout: Double
        var deadline: Double
    }

    /// Commands the host may send now.
    public private(set) var credits: Int = 1
    /// Seconds a command waits for its answer unless ``enqueue(_:parameters:now:timeout:)`` says otherwise.
    public var defaultTimeout: Double
    private var waiting: [Entry] = []
    private var outstanding: [Entry] = []
    private var nextID: UInt64 = 1

    /// An idle queue with one credit (the host may send one command before the controller speaks).
    public init(defaultTimeout: Double = HCICommandQueue.defaultTimeout) {
        self.defaultTimeout = defaultTimeout
    }

    /// Commands sent and not yet answered, oldest first.
    public var outstandingOpcodes: [HCIOpcode] { outstanding.map(\.opcode) }
    /// Commands waiting for a credit, in order.
    public var waitingOpcodes: [HCIOpcode] { waiting.map(\.opcode) }
    /// The earliest time at which ``expire(now:)`` has something to do, if any.
    public var nextDeadline: Double? {
        var earliest: Double?
        for entry in waiting where earliest.map({ entry.deadline < $0 }) ?? true { earliest = entry.deadline }
        for entry in outstanding where earliest.map({ entry.deadline < $0 }) ?? true { earliest = entry.deadline }
        return earliest
    }

    /// Queues a command. It is sent at once (in the output) when a credit is free.
    public mutating func enqueue(
        _ opcode: HCIOpcode, parameters: [UInt8] = [], now: Double, timeout: Double? = nil
    ) -> (HCICommandTicket, HCICommandQueueOutput) {
        let ticket = HCICommandTicket(id: nextID)
        nextID &+= 1
        let seconds = timeout ?? defaultTimeout
        waiting.append(Entry(ticket: ticket, opcode: opcode, parameters: parameters, timeout: seconds, deadline: now + seconds))
        var output = HCICommandQueueOutput()
        sendWhileCredits(now: now, into: &output)
        return (ticket, output)
    }

    /// Feeds a controller event; only Command Complete and Command Status matter here (every
    /// other event returns an empty output).
    public mutating func handle(_ event: HCIEvent, now: Double) -> HCICommandQueueOutput {
        var output = HCICommandQueueOutput()
        switch event {
        case let .commandComplete(complete):
            credits = Int(complete.numHCICommandPackets)
            if let entry = takeOutstanding(complete.opcode) {
                let result: Result<HCICommandResponse, HCICommandError>
                if let status = complete.status, !status.isSuccess {
                    result = .failure(HCICommandError(
                        opcode: complete.opcode,
                        reason: .failed(status: status, returnParameters: complete.returnParameters)))
                } else {
                    result = .success(.complete(returnParameters: complete.returnParameters))
                }
                output.completions.append(HCICommandOutcome(ticket: entry.ticket, opcode: complete.opcode, result: result))
            }
        case let .commandStatus(status):
            credits = Int(status.numHCICommandPackets)
            if let entry = takeOutstanding(status.opcode) {
                let result: Result<HCICommandResponse, HCICommandError> = status.status.isSuccess
                    ? .success(.pending)
                    : .failure(HCICommandError(
                        opcode: status.opcode, reason: .failed(status: status.status, returnParameters: [status.status.rawValue])))
                output.completions.append(HCICommandOutcome(ticket: entry.ticket, opcode: status.opcode, result: result))
            }
        default:
            return output
        }
        sendWhileCredits(now: now, into: &output)
        return output
    }

    /// Fails every command whose deadline is at or before `now` and sends what the freed credits
    /// allow (a command waiting for a credit is sent rather than failed if one frees up now).
    public mutating func expire(now: Double) -> HCICommandQueueOutput {
        var output = HCICommandQueueOutput()
        let (expiredSent, keptSent) = split(outstanding, now: now)
        outstanding = keptSent
        for entry in expiredSent {
            // The controller dropped it: take its credit back, or the queue would stall for good.
            credits += 1
            guard entry.ticket.id != 0 else { continue }  // cancelled: nobody to tell
            output.completions.append(HCICommandOutcome(
                ticket: entry.ticket, opcode: entry.opcode,
                result: .failure(HCICommandError(opcode: entry.opcode, reason: .timedOut(seconds: entry.timeout, sent: true)))))
        }
        // Credits freed above go to waiting commands first; only those still stuck time out.
        sendWhileCredits(now: now, into: &output)
        let (expiredWaiting, keptWaiting) = split(waiting, now: now)
        waiting = keptWaiting
        for entry in expiredWaiting {
            output.completions.append(HCICommandOutcome(
                ticket: entry.ticket, opcode: entry.opcode,
                result: .failure(HCICommandError(opcode: entry.opcode, reason: .timedOut(seconds: entry.timeout, sent: false)))))
        }
        sendWhileCredits(now: now, into: &output)
        return output
    }

    /// Gives up on one command: removed if still waiting; if already sent, its answer will be
    /// ignored (its credit comes back with that answer or at its timeout). Returns its completion,
    /// or nil for an unknown or finished ticket.
    public mutating func cancel(_ ticket: HCICommandTicket) -> HCICommandOutcome? {
        if let index = waiting.firstIndex(where: { $0.ticket == ticket }) {
            let entry = waiting.remove(at: index)
            return HCICommandOutcome(
                ticket: ticket, opcode: entry.opcode,
                result: .failure(HCICommandError(opcode: entry.opcode, reason: .abandoned("cancelled"))))
        }
        if let index = outstanding.firstIndex(where: { $0.ticket == ticket }) {
            // Keep the slot so the answer still matches this entry, but forget who asked.
            let entry = outstanding[index]
            outstanding[index].ticket = HCICommandTicket(id: 0)
            return HCICommandOutcome(
                ticket: ticket, opcode: entry.opcode,
                result: .failure(HCICommandError(opcode: entry.opcode, reason: .abandoned("cancelled"))))
        }
        return nil
    }

    /// Fails every waiting and outstanding command (the transport is gone) and resets credits to 1.
    public mutating func failAll(_ why: String) -> [HCICommandOutcome] {
        let all = outstanding + waiting
        outstanding = []
        waiting = []
        credits = 1
        return all.filter { $0.ticket.id != 0 }.map {
            HCICommandOutcome(
                ticket: $0.ticket, opcode: $0.opcode,
                result: .failure(HCICommandError(opcode: $0.opcode, reason: .abandoned(why))))
        }
    }

    private mutating func takeOutstanding(_ opcode: HCIOpcode) -> Entry? {
        guard let index = outstanding.firstIndex(where: { $0.opcode == opcode }) else { return nil }
        let entry = outstanding.remove(at: index)
        return entry.ticket.id == 0 ? nil : entry  // a cancelled command: nobody to tell
    }

    private func split(_ entries: [Entry], now: Double) -> (expired: [Entry], kept: [Entry]) {
        var expired: [Entry] = []
        var kept: [Entry] = []
        for entry in entries {
            if entry.deadline <= now {
                expired.append(entry)
            } else {
                kept.append(entry)
            }
        }
        return (expired, kept)
    }

    private mutating func sendWhileCredits(now: Double, into output: inout HCICommandQueueOutput) {
        while credits > 0, !waiting.isEmpty {
            var entry = waiting.removeFirst()
            credits -= 1
            entry.deadline = now + entry.timeout
            outstanding.append(entry)
            output.packets.append(.command(opcode: entry.opcode, parameters: entry.parameters))
        }
    }
}
