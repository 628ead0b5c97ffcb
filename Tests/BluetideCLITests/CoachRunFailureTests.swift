import BluetideTestSupport
import Foundation
import GRDB
import Testing

/// `bluetide reflex coach run` that fails in the middle exits 1 with one line saying why (it
/// exited 0 after printing "disk is full"); the session is stored as incomplete with that reason.
@Suite(.timeLimit(.minutes(3))) struct CoachRunFailureTests {
    /// A database with athlete Ana and a 60-step sequence "Long" (400 ms a step).
    static func prepare(_ db: String) async throws {
        #expect(try await BluetideExecutable.run(["reflex", "coach", "athletes", "add", "Ana", "--db", db]).status == 0)
        #expect(try await BluetideExecutable.run([
            "reflex", "coach", "sequences", "save", "Long", "--targets", Array(repeating: "0,1,2,3,4,5", count: 10).joined(separator: ","),
            "--times", "400", "--db", db,
        ]).status == 0)
    }

    /// Starts the run and calls `started` once its session exists; returns the finished run.
    /// `virtualTime`: the child runs its emulated world and the coach in virtual time
    /// (`BLUETIDE_VIRTUAL_TIME=1`), so no ATT or scan limit expires because the machine is busy —
    /// but the run then outpaces anything `started` does, so only a failure set up beforehand
    /// lands in its middle.
    static func run(db: String, virtualTime: Bool = false, started: @Sendable () throws -> Void) async throws
        -> (status: Int32?, stdout: [String], stderr: [String]) {
        let process = try BluetideExecutable.launch(
            ["reflex", "coach", "run", "--athlete", "Ana", "--sequence", "Long", "--emulate", "--db", db],
            environment: virtualTime ? ["BLUETIDE_VIRTUAL_TIME": "1"] : [:])
        do {
            var seenStart = false
            while !seenStart, let line = try await process.nextLine(timeout: BluetideExecutable.runTimeout) {
                seenStart = line.hasPrefix("session ") && line.contains("started")
            }
            try #require(seenStart, "no session start line")
            try started()
            let status = await process.waitForCompletion(timeout: .seconds(90))
            let result = (status, await process.output(.stdout), await process.output(.stderr))
            await process.stop()
            return result
        } catch {
            await process.stop()
            throw error
        }
    }

    /// Storage refused in the middle (injected: a trigger makes every step after the second fail,
    /// as a full disk does), while the session's end can still be stored. The run is in virtual
    /// time; the trigger is set up before it, so the failure lands at step 3 whatever the load.
    @Test func aStorageFailureInTheMiddleExitsOneAndTheSessionSaysWhy() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coach-full-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("reflex.sqlite").path
        try await Self.prepare(db)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let queue = try DatabaseQueue(path: db, configuration: configuration)
        try await queue.write { database in
            try database.execute(sql: """
                CREATE TRIGGER disk_full BEFORE INSERT ON step_result WHEN (SELECT count(*) FROM step_result) >= 2
                BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END
                """)
        }
        try queue.close()
        let run = try await Self.run(db: db, virtualTime: true) {}
        #expect(run.status == 1, "stdout: \(run.stdout)\nstderr: \(run.stderr)")
        #expect(run.stderr.count == 1, "one line: \(run.stderr)")
        #expect(run.stderr.first?.contains("ended incomplete") == true && run.stderr.first?.contains("could not store step") == true, "\(run.stderr)")
        let history = try await BluetideExecutable.run(["reflex", "coach", "history", "--athlete", "Ana", "--db", db])
        #expect(history.stdout.contains { $0.contains("incomplete") && $0.contains("could not store step") }, "\(history.stdout)")
        #expect(run.stderr.first?.contains("2 of 60 step results stored") == true, "the first two steps are kept: \(run.stderr)")
    }

    /// The disk itself fills up (a 4 MB tmpfs filled by the test once the session started). On
    /// the wall clock: only a run that lasts its 24 s gives the test time to fill the disk in
    /// its middle (in virtual time the run would be over first).
    @Test(.enabled(if: OptionalTool.isCI || TmpfsMount.permitted, "mount -t tmpfs is not permitted here (it needs root): skipped outside CI"))
    func aFullDiskExitsOne() async throws {
        let mount = try TmpfsMount(megabytes: 4)
        defer { mount.remove() }
        let db = mount.directory.appendingPathComponent("reflex.sqlite").path
        try await Self.prepare(db)
        let filler = mount.directory.appendingPathComponent("filler").path
        let run = try await Self.run(db: db) { TmpfsMount.fill(filler) }
        #expect(run.status == 1, "stdout: \(run.stdout)\nstderr: \(run.stderr)")
        #expect(run.stderr.joined(separator: "\n").contains("full"), "\(run.stderr)")
    }
}

/// A small tmpfs mounted on a fresh directory (needs root), for full-disk tests.
struct TmpfsMount {
    let directory: URL

    /// True when this process may mount a tmpfs (probed once).
    static let permitted: Bool = {
        guard let probe = try? TmpfsMount(megabytes: 1) else { return false }
        probe.remove()
        return true
    }()

    init(megabytes: Int) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tmpfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard mount("tmpfs", directory.path, "tmpfs", 0, "size=\(megabytes)m") == 0 else {
            let code = errno
            try? FileManager.default.removeItem(at: directory)
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSLocalizedDescriptionKey: "mount tmpfs: errno \(code)"])
        }
    }

    /// Writes zeros to `path` until the file system is full.
    static func fill(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { return }
        let block = [UInt8](repeating: 0, count: 64 * 1024)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress!, $0.count) }) > 0 {}
        close(fd)
    }

    func remove() {
        umount2(directory.path, 2)  // MNT_DETACH
        try? FileManager.default.removeItem(at: directory)
    }
}
