import Bluetide
import BluetideProfiles
import BluetideReflex
import Foundation

/// Which trainer to connect to among those found by a scan.
public enum TrainerChoice: Sendable, Hashable, CustomStringConvertible {
    /// The one with the strongest RSSI.
    case strongest
    /// The one whose advertised name equals this text (ASCII case-insensitive).
    case name(String)
    /// The one at this address (`C6:C5:C4:C3:C2:C1`, type suffix optional, case-insensitive).
    case address(String)

    /// Reads a `--device` value: an address when it looks like six hex octets, else a name.
    public init(parsing text: String?) {
        guard let text, !text.isEmpty else { self = .strongest; return }
        let bare = text.split(separator: "/").first.map(String.init) ?? text
        let octets = bare.split(separator: ":", omittingEmptySubsequences: false)
        if octets.count == 6, octets.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) {
            self = .address(bare.uppercased())
        } else {
            self = .name(text)
        }
    }

    /// True when `advertisement` is the one meant.
    public func matches(_ advertisement: Advertisement) -> Bool {
        switch self {
        case .strongest: return true
        case let .name(name): return advertisement.name?.lowercased() == name.lowercased()
        case let .address(address): return advertisement.address.string.uppercased() == address.uppercased()
        }
    }

    public var description: String {
        switch self {
        case .strongest: return "strongest trainer"
        case let .name(name): return "trainer named \"\(name)\""
        case let .address(address): return "trainer at \(address)"
        }
    }
}

/// How a session ended.
public struct CoachSessionOutcome: Sendable, Hashable {
    /// The stored session.
    public var sessionID: Int64
    /// True when the device reported `finished` and every step's result is stored.
    public var complete: Bool
    /// Distinct steps stored.
    public var stepsStored: Int
    /// Steps in the program.
    public var stepCount: Int
    /// Why it ended, in words (`finished`, `stopped by the device`, `link lost: …`).
    public var reason: String
    /// What went wrong, when the run failed rather than finished or was stopped: the storage
    /// failed (`database or disk is full`), the trainer fell silent, the link was lost for good,
    /// the trainer reported an error, or results never arrived. Nil for a complete session, a
    /// stop on request (``RunStop``) and a stop from the trainer's own button. A command exits
    /// non-zero when it is set.
    public var failure: String?
}

/// Progress of a coached session, in order, for a live display.
public enum CoachEvent: Sendable, CustomStringConvertible {
    /// Scanning for trainers (up to `seconds`).
    case scanning(seconds: Double)
    /// The trainer picked.
    case found(Advertisement)
    /// Connected to the trainer.
    case connected(address: String)
    /// Both sequences were written (`steps` each).
    case sequencesWritten(steps: Int)
    /// The session row exists; results go under this id.
    case sessionStarted(id: Int64)
    /// A status notified on punchControl.
    case status(PunchControlStatus)
    /// One step's result, already committed to the store.
    case step(PunchResponse, stored: StepResult)
    /// A value on punchResponse that did not decode (skipped, session goes on).
    case undecodable(bytes: [UInt8], error: String)
    /// The link dropped, reconnect attempts and success, as the connection reports them.
    case link(ConnectionEvent)
    /// The athlete's heart-rate strap connected, or could not be (the run goes on without it).
    case strap(String)
    /// The session is over and marked in the store.
    case ended(CoachSessionOutcome)

    /// One readable line.
    public var description: String {
        switch self {
        case let .scanning(seconds): return "scanning up to \(Int(seconds)) s for Punch trainers"
        case let .found(ad): return "found \(ad.name ?? "?") at \(ad.address.string), RSSI \(ad.rssi) dBm"
        case let .connected(address): return "connected to \(address)"
        case let .sequencesWritten(steps): return "sequences written (\(steps) steps)"
        case let .sessionStarted(id): return "session \(id) started"
        case let .status(status): return "trainer: \(status.summary)"
        case let .step(response, stored):
            // Steps from 1, times in ms, and a miss says "miss" (the time the trainer reports
            // for a miss is only when it gave up), as on the dashboard.
            let colour = TargetPalette.colour(of: response.target).map { " (\($0.name))" } ?? ""
            let result = response.hit ? "hit \(response.reactionTimeMilliseconds) ms" : "miss"
            return "step \(stored.stepIndex + 1) target \(response.target)\(colour): \(result)"
                + (response.wrongTargetFirst ? ", wrong target first" : "") + (stored.heartRateBpm.map { ", heart rate \($0) bpm" } ?? "")
        case let .undecodable(bytes, error): return "skipped undecodable response \(bytes.hexString): \(error)"
        case let .link(event): return "link: \(event)"
        case let .strap(text): return text
        case let .ended(outcome):
            return "session \(outcome.sessionID) \(outcome.complete ? "complete" : "incomplete"): \(outcome.stepsStored)/\(outcome.stepCount) steps stored (\(outcome.reason))"
        }
    }
}

/// Why a coached session could not run.
public enum CoachError: Error, Sendable, CustomStringConvertible {
    /// No matching trainer advertised within the scan time.
    case trainerNotFound(TrainerChoice, seconds: Double, seen: [String])
    /// The athlete id is unknown.
    case athleteNotFound(Int64)
    /// The saved sequence is unknown or invalid.
    case sequence(String)
    /// The trainer refused the sequences (ATT error) or the connection failed.
    case device(String)
    /// A stop was requested (the reason, e.g. `SIGINT`) before a session existed.
    case stopped(String)
    /// The database failed; the text names what was being stored and what to do.
    case storage(String)

    public var description: String {
        switch self {
        case let .trainerNotFound(choice, seconds, seen):
            let others = seen.isEmpty ? "no Punch trainer seen" : "seen: \(seen.joined(separator: ", "))"
            return "no \(choice) found within \(Int(seconds)) s (\(others))"
        case let .athleteNotFound(id): return "no athlete with id \(id)"
        case let .sequence(text): return text
        case let .device(text): return text
        case let .stopped(reason): return "stopped before a session started (\(reason)); nothing was stored"
        case let .storage(text): return text
        }
    }
}
