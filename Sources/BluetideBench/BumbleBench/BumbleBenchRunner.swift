import Foundation

/// Runs one side of a bench scenario over a ready ``BumbleBenchLink``: the I/O around
/// ``BumbleBenchSender`` and ``BumbleBenchReceiver``, with a timeout on every wait.
struct BumbleBenchRunner: Sendable {
    let role: BumbleBenchRole
    let settings: BumbleBenchSettings
    /// Longest wait for the peer's first packet (it may still be starting), seconds.
    var firstPacketTimeout: Double = 30
    /// Progress lines for people (about one a second on long runs).
    var progress: @Sendable (String) -> Void = { _ in }

    /// Runs the scenario; returns one report per run (several with `linger`).
    func run(on link: some BumbleBenchLink) async throws -> [BumbleBenchReport] {
        let mtu = await link.mtu()
        if settings.scenario.originatesPackets {
            guard settings.packetSize <= mtu - 3 else {
                throw BenchFailure("--packet-size \(settings.packetSize): the link carries at most \(mtu - 3) octets per packet (ATT MTU \(mtu) − 3); use --packet-size \(mtu - 3) or a larger --att-mtu on both sides")
            }
            var reports: [BumbleBenchReport] = []
            for run in 0...settings.repeatCount {
                if run > 0, settings.repeatDelaySeconds > 0 {
                    try await Task.sleep(for: .milliseconds(Int64(settings.repeatDelaySeconds * 1000)))
                }
                reports.append(try await runSender(on: link, mtu: mtu))
                if settings.repeatCount > 0 { progress("run \(run + 1) of \(settings.repeatCount + 1): \(reports.last!.line)") }
            }
            return reports
        }
        return try await runReceiver(on: link, mtu: mtu)
    }

    private func runSender(on link: some BumbleBenchLink, mtu: Int) async throws -> BumbleBenchReport {
        var sender = BumbleBenchSender(settings: settings)
        if settings.startDelaySeconds > 0 {
            try await Task.sleep(for: .milliseconds(Int64(settings.startDelaySeconds * 1000)))
        }
        try await send(sender.reset(at: BumbleBenchInbox.now()), on: link, what: "RESET")
        var lastProgress = BumbleBenchInbox.now()
        while !sender.hasSentAll {
            if let due = sender.dueTime(of: sender.packetsSent) {
                let wait = due - BumbleBenchInbox.now()
                if wait > 0 { try await Task.sleep(for: .microseconds(Int64(wait * 1_000_000))) }
            }
            try await send(sender.nextPacket(at: BumbleBenchInbox.now()), on: link, what: "packet \(sender.packetsSent)")
            let now = BumbleBenchInbox.now()
            if now - lastProgress >= 1 {
                lastProgress = now
                progress("\(settings.scenario.rawValue): sent \(sender.packetsSent) of \(settings.packetCount) packets")
            }
        }
        while true {
            let arrival: BumbleBenchInbox.Arrival
            do {
                arrival = try await link.inbox.next(timeout: settings.stallSeconds)
            } catch let failure as BumbleBenchInbox.Failure {
                let what = settings.scenario == .send ? "the ACK of the last packet" : "ACKs (\(sender.roundTrips.count) of \(settings.packetCount) came)"
                throw BenchFailure(describe(failure, waitingFor: what), isLinkLoss: failure.isLinkLoss)
            }
            if sender.receive(arrival.bytes, at: arrival.time) { break }
        }
        return sender.report(role: role, mtu: mtu)
    }

    private func runReceiver(on link: some BumbleBenchLink, mtu: Int) async throws -> [BumbleBenchReport] {
        var receiver = BumbleBenchReceiver(scenario: settings.scenario, at: BumbleBenchInbox.now())
        var reports: [BumbleBenchReport] = []
        var lastProgress = BumbleBenchInbox.now()
        while true {
            // Before a run's first packet the peer may still be starting (or, lingering, idle).
            let idle = receiver.packets == 0
            let timeout: Double? = idle ? (reports.isEmpty ? firstPacketTimeout : nil) : settings.stallSeconds
            let arrival: BumbleBenchInbox.Arrival
            do {
                arrival = try await link.inbox.next(timeout: timeout)
            } catch let failure as BumbleBenchInbox.Failure {
                if case .linkLost = failure, !reports.isEmpty, idle { return reports }
                let what = idle ? "the first packet" : "more packets (\(receiver.packets) came, the last one never did)"
                throw BenchFailure(describe(failure, waitingFor: what), isLinkLoss: failure.isLinkLoss)
            }
            let outcome = receiver.receive(arrival.bytes, at: arrival.time)
            if let reply = outcome.reply {
                try await send(reply, on: link, what: "ACK")
            }
            let now = BumbleBenchInbox.now()
            if !outcome.runEnded, receiver.packets > 0, now - lastProgress >= 1 {
                lastProgress = now
                progress("\(settings.scenario.rawValue): received \(receiver.packets) packets")
            }
            if outcome.runEnded {
                reports.append(receiver.report(role: role, mtu: mtu))
                guard settings.linger else { return reports }
                progress(reports.last!.line)
                receiver = BumbleBenchReceiver(scenario: settings.scenario, at: BumbleBenchInbox.now())
            }
        }
    }

    private func send(_ packet: [UInt8], on link: some BumbleBenchLink, what: String) async throws {
        do {
            try await link.send(packet)
        } catch let failure as BenchFailure {
            throw failure
        } catch {
            throw BenchFailure("\(settings.scenario.rawValue): sending \(what) failed: \(error)")
        }
    }

    private func describe(_ failure: BumbleBenchInbox.Failure, waitingFor what: String) -> String {
        switch failure {
        case let .stalled(seconds):
            "\(settings.scenario.rawValue): waited \(formatBenchSeconds(seconds)) s for \(what) in vain (--stall-timeout SECONDS; is the peer running the \(settings.scenario.peer.rawValue) scenario?)"
        case let .linkLost(reason):
            "\(settings.scenario.rawValue): the link ended while waiting for \(what): \(reason)"
        }
    }
}
