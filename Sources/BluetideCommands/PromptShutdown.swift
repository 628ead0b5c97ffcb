/// Keeps Ctrl-C prompt: the polite steps of a shutdown (disconnect, stop advertising) wait for
/// the controller's answers, up to its 10 s command timeout when it stopped answering (e.g. it
/// stalled in the middle of a packet). Past `limit` the `force` step runs (closing the host
/// fails those waits at once), so a command ends within about `limit` whatever the controller does.
enum PromptShutdown {
    /// Runs `work`; if it has not finished after `limit`, runs `force` and still waits for `work`.
    static func run(within limit: Duration = .seconds(1), _ work: @escaping @Sendable () async -> Void,
                    force: @escaping @Sendable () async -> Void) async {
        let polite = Task { await work() }
        let deadline = Task {
            try await Task.sleep(for: limit)
            await force()
        }
        await polite.value
        deadline.cancel()
    }
}
