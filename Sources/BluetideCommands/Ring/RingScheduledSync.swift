import Bluetide
import BluetideRing
import Foundation

/// `ring sync --every`: several rings synced into one database, in turns, round after round.
///
/// A ring takes one connection at a time, so the rings are visited one after another on one
/// radio: connect, open the session, sync (idempotent: only what is missing is fetched), close.
/// A ring that cannot be reached or whose link drops is reported and tried again next round;
/// nothing stored is lost. The rounds run until ``run(rounds:wait:)``'s `wait` says stop.
struct RingScheduledSync {
    /// One ring's result in a round.
    struct Outcome: Sendable, Equatable {
        let ring: String
        let round: Int
        /// The sync report, nil when it failed.
        let report: RingSyncReport?
        /// One line saying what went wrong, nil when it worked.
        let failure: String?
    }

    let session: DeviceSession
    /// The rings: address targets (`ADDRESS/R`) or names, with labels to print.
    let rings: [(target: String, label: String)]
    let store: RingStore
    let timeout: Double
    let options: Ring.Options
    let days: Int?
    /// Called with each ring (its `device` record) and the samples a step stored that no
    /// earlier sync had (`--mqtt` publishes them).
    var added: @Sendable (JSONOutputValue, [RingSample]) -> Void = { _, _ in }

    /// Syncs one ring once.
    func syncOnce(_ target: String, label: String, round: Int) async -> Outcome {
        do {
            let (connection, _) = try await session.connect(target, timeout: timeout)
            let ring: Ring
            do { ring = try await Ring.open(connection, options: options) } catch {
                await connection.disconnect()
                throw error
            }
            do {
                let sync = RingSync(ring: ring, store: store, ringID: connection.address.description)
                let device = JSONOutput.device(connection.address)
                let added = self.added
                let report = try await sync.run(days: try days ?? sync.defaultDays(), added: { added(device, $0) })
                await ring.close()
                return Outcome(ring: label, round: round, report: report, failure: nil)
            } catch {
                await ring.close()
                throw error
            }
        } catch let failure as CommandFailure {
            return Outcome(ring: label, round: round, report: nil, failure: failure.message)
        } catch where Task.isCancelled || error is CancellationError {
            return Outcome(ring: label, round: round, report: nil, failure: "stopped while syncing; what arrived is kept")
        } catch {
            return Outcome(ring: label, round: round, report: nil, failure: "\(error)")
        }
    }

    /// Runs rounds until `rounds` are done (nil: no limit) or `wait` (called between rounds with
    /// the pause) returns false; `report` gets each ring's outcome as it comes.
    func run(rounds: Int?, every: Duration, wait: (Duration) async -> Bool, report: (Outcome) -> Void) async {
        var round = 0
        while rounds.map({ round < $0 }) ?? true {
            round += 1
            let started = ContinuousClock.now
            for ring in rings {
                if Task.isCancelled { return }
                report(await syncOnce(ring.target, label: ring.label, round: round))
            }
            if let rounds, round >= rounds { return }
            let spent = ContinuousClock.now - started
            guard await wait(spent < every ? every - spent : .zero) else { return }
        }
    }
}
