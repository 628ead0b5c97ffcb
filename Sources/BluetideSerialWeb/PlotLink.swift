import BluetideSerial
import BluetideSupport

extension PlotFeed {
    /// Plots `link` (what `bluetide uart plot` runs): every line it receives is published at its
    /// time since the start on `clock` and handed to `echo`; `status` gets the link's status
    /// events. Returns why the link closed, or nil when the calling task was cancelled first
    /// (a stop); the link is left open for the caller to close.
    public func plot<C: Clock>(
        _ link: SerialLink, clock: C, echo: @escaping @Sendable (String) -> Void, status: @escaping @Sendable (SerialStatus) -> Void
    ) async -> String? where C.Duration == Duration {
        let started = clock.now
        // Each child's result: the close reason (from the close waiter), nil from the others.
        return await withTaskGroup(of: String?.self) { group in
            group.addTask { [self] in
                for await line in link.lines() {
                    let elapsed = started.duration(to: clock.now)
                    await publish(line: line.text, t: elapsed.inSeconds)
                    echo(line.text)
                }
                return nil
            }
            group.addTask {
                for await event in link.status { status(event) }
                return nil
            }
            group.addTask { await link.waitForClose() }
            defer { group.cancelAll() }
            while let result = await group.next() {
                if let reason = result { return reason }
                if Task.isCancelled { return nil }
            }
            return nil
        }
    }
}
