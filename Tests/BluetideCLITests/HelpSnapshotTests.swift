import ArgumentParser
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideCommands

/// Golden files of every command's `--help` (`Tests/BluetideCLITests/HelpSnapshots/`, one per
/// command, as `bluetide help-dump` renders them), so a change to a help text is seen in review.
/// After an intended change: `scripts/update-help-snapshots`, then commit the files.
@Suite(.timeLimit(.minutes(2))) struct HelpSnapshotTests {
    static let directory = BumbleEnvironment.repositoryRoot.appendingPathComponent("Tests/BluetideCLITests/HelpSnapshots")
    static let howToUpdate = "if the change is intended, run scripts/update-help-snapshots and commit Tests/BluetideCLITests/HelpSnapshots/"

    /// The committed files match what `bluetide help-dump` writes now: none differs, none is
    /// missing, none is left over from a command that is gone.
    @Test func everyCommandsHelpMatchesItsGoldenFile() async throws {
        let fresh = FileManager.default.temporaryDirectory.appendingPathComponent("help-snapshots-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: fresh) }
        let run = try await BluetideExecutable.run(["help-dump", fresh.path])
        try #require(run.status == 0, "bluetide help-dump failed: \(run.stderr)")
        let now = try Self.texts(in: fresh)
        let committed = try Self.texts(in: Self.directory)
        #expect(now.count == HelpSnapshots.all().count, "one file per visible command")
        for (name, text) in now.sorted(by: { $0.key < $1.key }) {
            guard let golden = committed[name] else {
                Issue.record("no golden file \(name) for `\(Self.commandLine(name))`; \(Self.howToUpdate)")
                continue
            }
            if let difference = Self.firstDifference(golden, text) {
                Issue.record("help of `\(Self.commandLine(name))` differs from HelpSnapshots/\(name) \(difference); \(Self.howToUpdate)")
            }
        }
        for name in committed.keys.sorted() where now[name] == nil {
            Issue.record("HelpSnapshots/\(name) belongs to no command any more; \(Self.howToUpdate)")
        }
    }

    /// A golden file is byte for byte what the command's `--help` prints on an 80-column terminal
    /// (with HOME as help-dump sets it, so the database defaults read `~/.local/share/…`).
    @Test func goldenFileIsWhatHelpPrints() async throws {
        let binary = try #require(DecodeCommandTests.bluetideBinary(), "bluetide executable not built next to the tests")
        for words in [["shell"], ["reflex", "coach", "run"], []] {
            let process = try BumbleProcess.launch(
                name: "bluetide", executable: binary, arguments: words + ["--help"],
                environment: ["HOME": "~", "XDG_DATA_HOME": "", "COLUMNS": "80"])
            let status = await process.waitForCompletion(timeout: BluetideExecutable.runTimeout)
            await process.stop()
            #expect(status == 0)
            let printed = await process.output(.stdout).joined(separator: "\n") + "\n"
            let snapshot = try #require(HelpSnapshots.all().first { $0.path == words })
            let golden = try String(contentsOf: Self.directory.appendingPathComponent(snapshot.fileName), encoding: .utf8)
            #expect(Self.firstDifference(golden, printed) == nil, "`\(snapshot.commandLine) --help` \(Self.firstDifference(golden, printed) ?? "")")
        }
    }

    /// File names follow the command path, and no two commands share one.
    @Test func snapshotsAreNamedByTheirCommandPath() {
        let snapshots = HelpSnapshots.all()
        #expect(snapshots.first?.fileName == "bluetide.txt")
        #expect(snapshots.contains { $0.fileName == "bluetide-reflex-coach-athletes-add.txt" && $0.commandLine == "bluetide reflex coach athletes add" })
        #expect(Set(snapshots.map(\.fileName)).count == snapshots.count)
        #expect(!snapshots.contains { $0.path.contains("help-dump") }, "the hidden command has no snapshot")
        #expect(snapshots.allSatisfy { $0.text.hasPrefix("OVERVIEW: ") || $0.text.hasPrefix("USAGE: ") })
    }

    @Test func firstDifferenceSaysWhereAndWhat() {
        #expect(Self.firstDifference("a\nb\n", "a\nb\n") == nil)
        #expect(Self.firstDifference("a\nb\n", "a\nc\n") == "at line 2: committed \"b\", now \"c\"")
        #expect(Self.firstDifference("a\n", "a\nmore\n") == "at line 2: committed \"\", now \"more\"")
        #expect(Self.firstDifference("a", "a\nb") == "at line 2: committed (end of file), now \"b\"")
    }

    // MARK: Helpers

    static func texts(in directory: URL) throws -> [String: String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".txt") }
        var texts: [String: String] = [:]
        for name in names {
            texts[name] = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        return texts
    }

    /// `bluetide-ring-sync.txt` → `bluetide ring sync` (command names have no hyphen at a
    /// level boundary except `hr-log`, `power-off`, `help-dump`: looked up, not guessed).
    static func commandLine(_ fileName: String) -> String {
        HelpSnapshots.all().first { $0.fileName == fileName }?.commandLine
            ?? String(fileName.dropLast(4)).replacingOccurrences(of: "-", with: " ")
    }

    /// Where `now` first departs from `committed`, line by line; nil when they are equal.
    static func firstDifference(_ committed: String, _ now: String) -> String? {
        guard committed != now else { return nil }
        let old = committed.split(separator: "\n", omittingEmptySubsequences: false)
        let new = now.split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(old.count, new.count) {
            let a = index < old.count ? "\"\(old[index])\"" : "(end of file)"
            let b = index < new.count ? "\"\(new[index])\"" : "(end of file)"
            if a != b { return "at line \(index + 1): committed \(a), now \(b)" }
        }
        return "in trailing whitespace"
    }
}
