import Bluetide
import BluetideBase
import BluetideProfiles
import BluetideSupport
import Foundation
import Synchronization

/// The latest heart rate from an athlete's strap during a run, stored beside each step's result.
/// A value older than ``freshness`` counts as none (the strap fell off or its link is down).
public final class HeartRateFeed: Sendable {
    /// How long a heart rate stays current, 5 s (straps notify about once a second).
    public static let freshness: Duration = .seconds(5)

    private struct Reading {
        var bpm: Int
        var at: BluetideClock.Instant
    }

    private let latest = Mutex<Reading?>(nil)
    private let clock: BluetideClock

    /// A feed with no reading yet; ``freshness`` is judged on `clock` (the coach's ``ReflexCoach/waitClock``).
    public init(clock: BluetideClock = .continuous) { self.clock = clock }

    /// Notes a measurement, bpm.
    public func update(_ bpm: Int) {
        let now = clock.now
        latest.withLock { $0 = Reading(bpm: bpm, at: now) }
    }

    /// The heart rate now, bpm; nil without a reading in the last ``freshness``.
    public var current: Int? {
        let now = clock.now
        return latest.withLock { reading in
            guard let reading, reading.at.duration(to: now) <= Self.freshness else { return nil }
            return reading.bpm
        }
    }
}

extension ReflexCoach {
    /// The scan filter of heart-rate straps (Heart Rate service advertised).
    static let strapFilter = ScanFilter(serviceUUIDs: [.heartRate])

    /// Finds the strap `choice` (up to ``strapScanTimeout``), connects with the coach's policy and
    /// feeds `feed` from its measurements until the connection is closed; returns the connection
    /// and the strap's name.
    func connectStrap(_ choice: TrainerChoice, feed: HeartRateFeed) async throws -> (Connection, String) {
        let total = Self.seconds(strapScanTimeout)
        var elapsed = 0.0
        var found: Advertisement?
        while elapsed < total, found == nil {
            let round = min(Self.seconds(scanRound), total - elapsed)
            found = try await central.discover(filter: Self.strapFilter, timeout: .milliseconds(Int64(round * 1000))).first(where: choice.matches)
            elapsed += round
        }
        guard let strap = found else { throw CoachError.device("no heart-rate strap \(choice) found within \(Int(total)) s") }
        let connection = try await central.connect(to: strap, policy: policy)
        do {
            let measurements = try await connection.notifications(of: .heartRateMeasurement, as: HeartRateMeasurement.self)
            let (first, firstSeen) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            Task {
                do {
                    for try await measurement in measurements {
                        feed.update(Int(measurement.beatsPerMinute))
                        firstSeen.yield()
                    }
                } catch {}
                firstSeen.finish()
            }
            // The run starts once the strap has told a heart rate (a strap notifies about once a
            // second), so the first steps carry one too; a silent strap holds nothing up for long.
            _ = try? await withTimeLimit(strapFirstReadingLimit, clock: waitClock, onTimeout: { CancellationError() }) {
                for await _ in first { break }
            }
        } catch {
            await connection.disconnect()
            throw error
        }
        return (connection, strap.name ?? strap.address.string)
    }
}
