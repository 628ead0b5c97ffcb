import ArgumentParser
import Bluetide
import BluetideBase
import BluetideEmulation
import BluetideDeviceModels
import BluetideProfiles
import BluetideReflex
import BluetideReflexCoach
import BluetideReflexEmulation
import BluetideReflexWeb
import BluetideTransport
import BluetideGateway
import Foundation

// MARK: output (text or --json)

/// `--json`, shared by every reflex command: one record per line in the one schema
/// (docs/json-output.md) instead of text.
struct CoachOutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print one JSON object per line (docs/json-output.md) instead of text.") var json = false

    /// Prints each output as text or as its record (outputs without a record print nothing with --json).
    func emit(_ outputs: [CoachOutput]) {
        for output in outputs { for line in json ? output.records : output.lines { LineOutput.print(line) } }
    }
}

/// One thing a reflex command reports: its readable lines and the same as a JSON record.
struct CoachOutput: Sendable {
    /// The readable lines.
    var lines: [String]
    /// The record's `type` (nil: text only, e.g. "no athletes").
    var type: String?
    /// The record's other fields.
    var fields: [String: JSONOutputValue] = [:]

    init(_ lines: [String], type: String?, _ fields: [String: JSONOutputValue] = [:]) {
        self.lines = lines
        self.type = type
        self.fields = fields
    }

    init(_ line: String, type: String?, _ fields: [String: JSONOutputValue] = [:]) {
        self.init([line], type: type, fields)
    }

    /// Records already written as lines, after the typed one (a game's standings).
    var extraRecords: [String] = []

    /// Several lines and several records (no single type).
    init(lines: [String], records: [String]) {
        self.init(lines, type: nil)
        extraRecords = records
    }

    /// The JSON lines (none when there is no record).
    var records: [String] { (type.map { [JSONOutput.line($0, fields)] } ?? []) + extraRecords }
}

/// The shapes the reflex commands' records share.
enum CoachJSON {
    static func optional(_ text: String?) -> JSONOutputValue { text.map { .string($0) } ?? .null }

    static func optional(_ number: Double?) -> JSONOutputValue { number.map { .number($0) } ?? .null }

    /// An athlete: `id`, `name`, `birthDate` (YYYY-MM-DD), `sex`, `stance`, `notes`.
    static func athlete(_ athlete: Athlete) -> JSONOutputValue {
        ["id": .integer(athlete.id ?? -1), "name": .string(athlete.name), "birthDate": optional(athlete.birthDate?.iso),
         "sex": optional(athlete.sex), "stance": .string(athlete.stance.rawValue), "notes": .string(athlete.notes)]
    }

    /// A saved sequence: `name`, `targets`, `timesMilliseconds`, `maxIntervalMilliseconds`.
    static func sequence(name: String, targets: [UInt8], milliseconds: [UInt16], maxInterval: Int?) -> JSONOutputValue {
        ["name": .string(name), "targets": .array(targets.map { .integer(Int64($0)) }),
         "timesMilliseconds": .array(milliseconds.map { .integer(Int64($0)) }),
         "maxIntervalMilliseconds": maxInterval.map { .integer(Int64($0)) } ?? .null]
    }

    /// Reaction figures: `count`, `hits`, `misses`, `hitRatePercent`, `meanMilliseconds`, … (left out when undefined).
    static func summary(_ s: ReactionSummary) -> JSONOutputValue {
        ["count": .integer(Int64(s.count)), "hits": .integer(Int64(s.hits)), "misses": .integer(Int64(s.count - s.hits)),
         "hitRatePercent": optional(s.hitRate.map { ($0 * 100 * 10).rounded() / 10 }),
         "meanMilliseconds": optional(s.meanMilliseconds), "medianMilliseconds": optional(s.medianMilliseconds),
         "bestMilliseconds": optional(s.bestMilliseconds)]
    }

    /// A coached session's event as text and record.
    static func event(_ event: CoachEvent) -> CoachOutput {
        let text = event.description
        switch event {
        case let .scanning(seconds): return CoachOutput(text, type: "scanning", ["scanSeconds": .number(seconds)])
        case let .found(ad):
            return CoachOutput(text, type: "found", ["device": JSONOutput.device(text: ad.address.string, name: ad.name), "rssiDbm": .integer(Int64(ad.rssi))])
        case let .connected(address): return CoachOutput(text, type: "connected", ["device": JSONOutput.device(text: address)])
        case let .sequencesWritten(steps): return CoachOutput(text, type: "sequences-written", ["steps": .integer(Int64(steps))])
        case let .sessionStarted(id): return CoachOutput(text, type: "session-started", ["sessionId": .integer(id)])
        case let .status(status): return CoachOutput(text, type: "trainer-status", ["status": .string(status.summary)])
        case let .step(response, stored):
            return CoachOutput(text, type: "step", [
                // The step as the trainer numbers it (from 0), as the dashboard's /api/run does.
                "step": .integer(Int64(stored.stepIndex)), "target": .integer(Int64(response.target)),
                "colour": optional(TargetPalette.colour(of: response.target)?.name), "hit": .bool(response.hit),
                "wrongTarget": .bool(response.wrongTargetFirst),
                "reactionMilliseconds": response.hit ? .integer(Int64(response.reactionTimeMilliseconds)) : .null,
                "heartRateBpm": stored.heartRateBpm.map { .integer(Int64($0)) } ?? .null,
            ])
        case let .undecodable(bytes, error):
            return CoachOutput(text, type: "undecodable", ["value": JSONOutput.value(bytes, decodeError: error)])
        case let .link(connectionEvent): return CoachOutput(text, type: "link", ["event": .string("\(connectionEvent)")])
        case let .strap(message): return CoachOutput(text, type: "strap", ["message": .string(message)])
        case let .ended(outcome):
            return CoachOutput(text, type: "ended", [
                "sessionId": .integer(outcome.sessionID), "complete": .bool(outcome.complete),
                "stepsStored": .integer(Int64(outcome.stepsStored)), "stepCount": .integer(Int64(outcome.stepCount)),
                "reason": .string(outcome.reason),
            ])
        }
    }

    /// A line from the emulated trainer or the Bluetooth set-up: `message`.
    static func message(_ line: String, type: String = "message") -> CoachOutput {
        CoachOutput(line, type: type, ["message": .string(line)])
    }
}
