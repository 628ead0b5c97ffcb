import Foundation
import Synchronization

/// The terminal of an interactive `bluetide shell`: raw mode, the prompt line kept under the
/// output, and every write through one lock, so a notification printed while the user types
/// lands above the prompt and the half-typed line is redrawn after it.
final class ShellConsole: Sendable {
    private struct State {
        var editor: LineEditor
        var promptShown = false
        var saved: termios?
        /// A question shown instead of the prompt until it is answered.
        var question: String?
    }

    private let state: Mutex<State>
    let prompt: String

    init(prompt: String, complete: @escaping @Sendable ([String], String) -> [String]) {
        self.prompt = prompt
        self.state = Mutex(State(editor: LineEditor(complete: complete)))
    }

    /// True when standard input and output are both terminals (so the line editor is used).
    static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    /// Puts the terminal in raw mode (no echo, no line buffering, Ctrl-C as a key); output
    /// processing stays on so "\n" still starts a new line.
    func enterRawMode() {
        state.withLock { state in
            var original = termios()
            guard tcgetattr(STDIN_FILENO, &original) == 0 else { return }
            state.saved = original
            var raw = original
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
            raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
            withUnsafeMutableBytes(of: &raw.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw)
        }
    }

    /// Restores the terminal as it was before ``enterRawMode()``.
    func restore() {
        state.withLock { state in
            if state.promptShown { Self.write("\r\n") }
            state.promptShown = false
            guard var saved = state.saved else { return }
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
            state.saved = nil
        }
    }

    /// Prints `line` above the prompt (the prompt and typed text are redrawn below it).
    func print(_ line: String) {
        state.withLock { state in
            if state.promptShown {
                Self.write("\r\u{1B}[K" + line + "\n")
                Self.redraw(state, prompt: state.question ?? prompt)
            } else {
                Self.write(line + "\n")
            }
        }
    }

    /// Shows the prompt with whatever is typed.
    func showPrompt() {
        state.withLock { state in
            state.promptShown = true
            Self.redraw(state, prompt: state.question ?? prompt)
        }
    }

    /// Shows `question` in place of the prompt (the next line typed answers it).
    func ask(_ question: String) {
        state.withLock { state in
            state.question = question
            state.promptShown = true
            Self.redraw(state, prompt: question)
        }
    }

    /// Goes back to the command prompt after a question was answered (shown again when the
    /// command ends).
    func endQuestion() {
        state.withLock { state in state.question = nil }
    }

    /// Feeds one key to the line editor and does what it asks on screen; returns the submitted
    /// line, `.endOfInput`, or nil while the line is being edited.
    func key(_ key: LineEditor.Key) -> LineEditor.Action? {
        state.withLock { state in
            let action = state.editor.handle(key)
            switch action {
            case .redraw: Self.redraw(state, prompt: state.question ?? prompt); return nil
            case .bell: Self.write("\u{07}"); return nil
            case .cancel:
                Self.write("^C\n")
                Self.redraw(state, prompt: state.question ?? prompt)
                return nil
            case let .showCompletions(candidates):
                Self.write("\n" + candidates.joined(separator: "  ") + "\n")
                Self.redraw(state, prompt: state.question ?? prompt)
                return nil
            case .submit, .endOfInput:
                Self.write("\n")
                state.promptShown = false
                return action
            }
        }
    }

    private static func redraw(_ state: State, prompt: String) {
        let back = state.editor.buffer.count - state.editor.cursor
        var text = "\r\u{1B}[K" + prompt + state.editor.line
        if back > 0 { text += "\u{1B}[\(back)D" }
        write(text)
    }

    private static func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { Foundation.write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset) }
            if written <= 0 { return }
            offset += written
        }
    }
}

/// Standard input as chunks of bytes, read on a thread of its own (the stream ends at end of
/// input); the thread never holds up the exit.
enum StandardInputBytes {
    static func stream() -> AsyncStream<[UInt8]> {
        let (stream, sink) = AsyncStream<[UInt8]>.makeStream()
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(STDIN_FILENO, &buffer, buffer.count)
                if count <= 0 { break }
                sink.yield(Array(buffer[..<count]))
            }
            sink.finish()
        }
        return stream
    }
}
