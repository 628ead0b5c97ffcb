import BluetideTestSupport
import Foundation
import Testing

/// The `bluetide` executable run as a child process through the shared harness
/// (`BumbleProcess`): output is read on dedicated threads and every wait has a timeout, so these
/// tests never block the cooperative thread pool.
enum BluetideExecutable {
    /// How long a short command may take before the test fails instead of hanging.
    static let runTimeout: Duration = .seconds(60)

    /// What a finished run left behind.
    struct Completion: Sendable {
        /// Exit status, or `nil` if the process was still running (or its output still open)
        /// after the timeout (it has been stopped since).
        let status: Int32?
        /// Standard output lines, in order.
        let stdout: [String]
        /// Standard error lines, in order.
        let stderr: [String]
        /// Lines of both streams in arrival order (as one shared pipe would show them).
        let combined: [String]
    }

    /// Starts `bluetide <arguments>`; the caller waits for and stops it.
    /// `environment` is added to the test's (where `XDG_CONFIG_HOME` is already a new private
    /// folder per launch: `BumbleProcess.privateConfigHome()`); `workingDirectory` defaults to the test's.
    static func launch(
        _ arguments: [String], name: String = "bluetide", stderrLog: URL? = nil,
        environment: [String: String] = [:], workingDirectory: URL? = nil
    ) throws -> BumbleProcess {
        let binary = try #require(DecodeCommandTests.bluetideBinary(), "bluetide executable not built next to the tests")
        return try BumbleProcess.launch(
            name: name, executable: binary, arguments: arguments, stderrLog: stderrLog, environment: environment,
            workingDirectory: workingDirectory)
    }

    /// Runs `bluetide <arguments>` to completion (at most `timeout`, then it is stopped) and
    /// returns its exit status and output. `stdin`, when given, is written to its standard
    /// input, which is then closed.
    static func run(
        _ arguments: [String], timeout: Duration = runTimeout, stderrLog: URL? = nil, stdin: String? = nil,
        environment: [String: String] = [:], workingDirectory: URL? = nil
    ) async throws -> Completion {
        let process = try launch(arguments, stderrLog: stderrLog, environment: environment, workingDirectory: workingDirectory)
        if let stdin {
            try await process.writeToStdin(stdin)
            await process.closeStdin()
        }
        let status = await process.waitForCompletion(timeout: timeout)
        await process.stop()
        return Completion(
            status: status, stdout: await process.output(.stdout), stderr: await process.output(.stderr),
            combined: await process.output(.either))
    }
}
