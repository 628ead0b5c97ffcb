/// Keeps Ctrl-C prompt: the polite steps of a shutdown (disconnect, stop advertising) wait for
/// the controller's answers, up to its 10 s command timeout per command when it stopped
/// answering (e.g. it stalled in the middle of a packet), and each later step queues behind the
/// one before. Past `limit` the `force` step runs — closing the host stack itself
/// (``forceClose(_:)``), which fails every one of those waits at once — so a command ends within
/// about `limit` whatever the controller does. (Forcing with another polite close, as before,
/// queued more commands behind the stuck one: a minute and more.) The commands' stop signals bound the
/// whole stop besides.
public enum PromptShutdown {
    /// How long the polite steps of one shutdown may take.
    public static let politeLimit: Duration = .seconds(1)

    /// Runs `work`; if it has not finished after `limit`, runs `force` and still waits for `work`.
    /// Returns once `work` and any `force` it started have ended: after the return nothing of the
    /// shutdown runs on (a `force` not started by then never starts).
    public static func run(within limit: Duration = politeLimit, _ work: @escaping @Sendable () async -> Void,
                    force: @escaping @Sendable () async -> Void) async {
        let polite = Task { await work() }
        let deadline = Task {
            try await Task.sleep(for: limit)
            await force()
        }
        await polite.value
        deadline.cancel()
        _ = await deadline.result
    }

    /// Closes `bluetooth` the polite way (disconnect, advertising off, then the transport), and
    /// its host at once when that takes longer than `limit`.
    public static func close(_ bluetooth: Bluetooth, within limit: Duration = politeLimit) async {
        await run(within: limit, { await bluetooth.close() }, force: { await forceClose(bluetooth) })
    }

    /// Stops `bluetooth`'s host without asking the controller anything: every wait on it fails
    /// at once, links are abandoned (the peer sees a supervision timeout), the transport closes.
    public static func forceClose(_ bluetooth: Bluetooth) async {
        await bluetooth.stack.close()
    }
}
