import BluetideProfiles
import BluetideReflex
import BluetideReflexCoach
import Foundation

/// One update pushed to the browser over the `/live` WebSocket, as a JSON object.
///
/// `run` numbers the runs since the server started (0 before the first). A page that connects
/// gets the messages of the current (or last) run first, then each new one as it happens.
public struct LiveRunMessage: Sendable, Hashable, Codable {
    /// What happened.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// No run since the server started.
        case idle
        /// A run was started from the dashboard: athlete, sequence, steps, targets.
        case started
        /// Scanning, found, connected, sequences written, link events: a line of text.
        case progress
        /// The session row exists (`sessionId`).
        case session
        /// The trainer's status (`armed`, `running`, `finished`, …): a line of text.
        case status
        /// One step's result: step, target, colour, hit, wrong target first, reaction time.
        case step
        /// The run is over: complete or not, steps stored, the reason.
        case ended
        /// The run could not start or broke off before a session existed.
        case failed
        /// A game was started (`mode`, `lanes`: each lane's athletes, `sequence`, `stepCount`).
        case gameStarted = "game-started"
        /// A game is decided (`text`: who won and why; `winner`: the side from 1, nil for a draw).
        case decided
        /// A game is over (`standings`, best first; `text`: the decision).
        case gameOver = "game-over"
    }

    /// One side at the end of a game (``Kind/gameOver``).
    public struct Standing: Sendable, Hashable, Codable {
        /// 1 for the best.
        public var place: Int
        /// Side (lane, team or chase colour) from 1.
        public var side: Int
        /// Its athletes' names.
        public var athletes: [String]
        /// Steps, hits, mean reaction time of hits (ms) and total time (ms).
        public var steps: Int
        public var hits: Int
        public var meanMilliseconds: Int?
        public var totalMilliseconds: Int
    }

    /// What happened.
    public var kind: Kind
    /// Run number since the server started.
    public var run: Int
    /// A line for people (progress, status, reason, failure).
    public var text: String?
    /// The athlete's id and name (started).
    public var athleteId: Int64?
    public var athlete: String?
    /// The sequence's name, its targets and step count (started).
    public var sequence: String?
    public var targets: [UInt8]?
    public var stepCount: Int?
    /// The stored session (session, step, ended).
    public var sessionId: Int64?
    /// Step index, 0-based (step).
    public var step: Int?
    /// The lit target 0...5 and its LED colour name, fill and outline (step).
    public var target: UInt8?
    public var colour: String?
    public var fill: String?
    public var stroke: String?
    /// Hit in time; another target hit first (step).
    public var hit: Bool?
    public var wrongTarget: Bool?
    /// Reaction time, ms; for a miss the step's whole time (step).
    public var reactionMilliseconds: Int?
    /// The athlete's heart rate when the step's result arrived, bpm (step, with a strap).
    public var heartRateBpm: Int?
    /// Every step reported (ended).
    public var complete: Bool?
    /// Distinct steps stored (ended).
    public var stepsStored: Int?
    /// In a game: the lane (a head-to-head athlete's or a relay team's trainer) from 1, on every
    /// message of a lane's run; nil for a single run.
    public var lane: Int?
    /// A game's mode (`head-to-head`, `relay`, `chase`) and each side's athletes (game-started).
    public var mode: String?
    public var lanes: [[String]]?
    /// The winning side from 1 (decided, game-over), nil for a draw or no result.
    public var winner: Int?
    /// Sides best first (game-over).
    public var standings: [Standing]?

    /// A message of `kind` for run `run`; set the other fields as needed.
    public init(kind: Kind, run: Int, text: String? = nil) {
        self.kind = kind
        self.run = run
        self.text = text
    }

    /// The message for one coach event, or nil for events the page does not show.
    public static func from(_ event: CoachEvent, run: Int) -> LiveRunMessage? {
        switch event {
        case .scanning, .found, .connected, .sequencesWritten, .undecodable, .link, .strap:
            return LiveRunMessage(kind: .progress, run: run, text: event.description)
        case let .sessionStarted(id):
            var message = LiveRunMessage(kind: .session, run: run, text: event.description)
            message.sessionId = id
            return message
        case let .status(status):
            return LiveRunMessage(kind: .status, run: run, text: status.summary)
        case let .step(response, stored):
            var message = LiveRunMessage(kind: .step, run: run)
            message.sessionId = stored.sessionId
            message.step = stored.stepIndex
            message.target = response.target
            let colour = TargetPalette.colour(of: response.target)
            message.colour = colour?.name
            message.fill = colour?.fill
            message.stroke = colour?.stroke
            message.hit = response.hit
            message.wrongTarget = response.wrongTargetFirst
            message.reactionMilliseconds = Int(response.reactionTimeMilliseconds)
            message.heartRateBpm = stored.heartRateBpm
            return message
        case let .ended(outcome):
            var message = LiveRunMessage(kind: .ended, run: run, text: outcome.reason)
            message.sessionId = outcome.sessionID
            message.complete = outcome.complete
            message.stepsStored = outcome.stepsStored
            message.stepCount = outcome.stepCount
            return message
        }
    }

    /// The JSON text sent (keys sorted, no nulls).
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{\"kind\":\"failed\",\"run\":\(run)}" }
        return String(decoding: data, as: UTF8.self)
    }
}
