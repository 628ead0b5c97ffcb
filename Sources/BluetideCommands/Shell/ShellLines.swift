/// The lines typed at an interactive `bluetide shell`, handed to the command loop and to
/// questions asked while a command runs (pairing: "Confirm that … shows 123456 [y/N]"). A line
/// typed while a question waits answers it; other lines wait, in order, for the command loop.
actor ShellLines {
    private var buffered: [String] = []
    private var ended = false
    private var commandWaiter: CheckedContinuation<String?, Never>?
    private var questionWaiters: [CheckedContinuation<String?, Never>] = []

    /// A line submitted at the prompt.
    func deliver(_ line: String) {
        if !questionWaiters.isEmpty {
            questionWaiters.removeFirst().resume(returning: line)
        } else if let waiter = commandWaiter {
            commandWaiter = nil
            waiter.resume(returning: line)
        } else {
            buffered.append(line)
        }
    }

    /// Input ended (Ctrl-D): waiting questions get no answer, the command loop ends after the
    /// lines already typed.
    func finish() {
        ended = true
        for waiter in questionWaiters { waiter.resume(returning: nil) }
        questionWaiters = []
        if buffered.isEmpty, let waiter = commandWaiter {
            commandWaiter = nil
            waiter.resume(returning: nil)
        }
    }

    /// The next command line, nil once input ended. One caller at a time (the command loop).
    func nextCommand() async -> String? {
        if !buffered.isEmpty { return buffered.removeFirst() }
        if ended { return nil }
        return await withCheckedContinuation { commandWaiter = $0 }
    }

    /// The next line typed from now on (lines typed before the question are commands), nil
    /// when input ends first.
    func nextAnswer() async -> String? {
        if ended { return nil }
        return await withCheckedContinuation { questionWaiters.append($0) }
    }
}
