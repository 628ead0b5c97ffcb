import Foundation

/// The shell's line editing as a state machine: keys in, what to do out (no I/O).
///
/// Keys: printable characters insert at the cursor; ←/→ (Ctrl-B/F), Home/End (Ctrl-A/E),
/// Backspace, Delete, Ctrl-K (kill to end), Ctrl-U (kill to start), Ctrl-W (kill word);
/// ↑/↓ (Ctrl-P/N) walk the history; Tab completes; Enter submits; Ctrl-C abandons the line;
/// Ctrl-D on an empty line ends the session.
struct LineEditor {
    /// A key, decoded from the terminal's bytes by ``KeyDecoder``.
    enum Key: Equatable, Sendable {
        case character(Character)
        case enter, backspace, delete, tab
        case left, right, up, down, home, end
        case killToEnd, killToStart, killWord
        case interrupt, endOfInput
    }

    /// What the terminal should do after a key.
    enum Action: Equatable, Sendable {
        /// Redraw the prompt line (the buffer or cursor changed).
        case redraw
        /// Nothing changed (ring the bell: nothing to complete, no older history).
        case bell
        /// The line is done: print a new line and run it.
        case submit(String)
        /// Ctrl-C: the line was abandoned.
        case cancel
        /// Ctrl-D on an empty line: leave.
        case endOfInput
        /// Several completions: show them, then redraw.
        case showCompletions([String])
    }

    private(set) var buffer: [Character] = []
    private(set) var cursor = 0
    private(set) var history: [String] = []
    /// Index into `history` while walking it; `history.count` means the line being typed.
    private var historyIndex = 0
    private var draft: [Character] = []
    /// At most this many history entries are kept.
    let historyLimit: Int
    /// The completions of the word before the cursor, given the words before it.
    let complete: @Sendable (_ previousWords: [String], _ word: String) -> [String]

    init(historyLimit: Int = 500, complete: @escaping @Sendable ([String], String) -> [String] = { _, _ in [] }) {
        self.historyLimit = historyLimit
        self.complete = complete
    }

    var line: String { String(buffer) }

    mutating func handle(_ key: Key) -> Action {
        switch key {
        case let .character(character):
            buffer.insert(character, at: cursor)
            cursor += 1
        case .enter:
            let text = line
            if !text.trimmingCharacters(in: .whitespaces).isEmpty, history.last != text {
                history.append(text)
                if history.count > historyLimit { history.removeFirst(history.count - historyLimit) }
            }
            reset()
            return .submit(text)
        case .backspace:
            guard cursor > 0 else { return .bell }
            cursor -= 1
            buffer.remove(at: cursor)
        case .delete:
            guard cursor < buffer.count else { return .bell }
            buffer.remove(at: cursor)
        case .left:
            guard cursor > 0 else { return .bell }
            cursor -= 1
        case .right:
            guard cursor < buffer.count else { return .bell }
            cursor += 1
        case .home: cursor = 0
        case .end: cursor = buffer.count
        case .killToEnd: buffer.removeSubrange(cursor...)
        case .killToStart:
            buffer.removeSubrange(..<cursor)
            cursor = 0
        case .killWord:
            var start = cursor
            while start > 0, buffer[start - 1] == " " { start -= 1 }
            while start > 0, buffer[start - 1] != " " { start -= 1 }
            buffer.removeSubrange(start..<cursor)
            cursor = start
        case .up:
            guard historyIndex > 0 else { return .bell }
            if historyIndex == history.count { draft = buffer }
            historyIndex -= 1
            buffer = Array(history[historyIndex])
            cursor = buffer.count
        case .down:
            guard historyIndex < history.count else { return .bell }
            historyIndex += 1
            buffer = historyIndex == history.count ? draft : Array(history[historyIndex])
            cursor = buffer.count
        case .tab:
            return completeWord()
        case .interrupt:
            reset()
            return .cancel
        case .endOfInput:
            if buffer.isEmpty { return .endOfInput }
            return handle(.delete)
        }
        return .redraw
    }

    private mutating func reset() {
        buffer = []
        cursor = 0
        draft = []
        historyIndex = history.count
    }

    /// Completes the word before the cursor: alone, in full (plus a space); several, as far as
    /// they agree, and listed when they agree no further.
    private mutating func completeWord() -> Action {
        let before = String(buffer[..<cursor])
        let endsInSpace = before.last == " "
        var words = before.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let word = endsInSpace ? "" : (words.popLast() ?? "")
        let candidates = complete(words, word).filter { $0.lowercased().hasPrefix(word.lowercased()) }
        guard !candidates.isEmpty else { return .bell }
        let common = Self.commonPrefix(candidates)
        // A candidate ending in ":" (passkey:) is a prefix of the word, not the word: no space after it.
        let insert = candidates.count == 1 ? candidates[0] + (candidates[0].hasSuffix(":") ? "" : " ") : common
        guard insert.count > word.count || candidates.count == 1 else { return .showCompletions(candidates.sorted()) }
        buffer.replaceSubrange((cursor - word.count)..<cursor, with: Array(insert))
        cursor += insert.count - word.count
        return .redraw
    }

    static func commonPrefix(_ words: [String]) -> String {
        guard var prefix = words.first.map(Array.init) else { return "" }
        for word in words.dropFirst() {
            let other = Array(word)
            var length = 0
            while length < prefix.count, length < other.count,
                  String(prefix[length]).lowercased() == String(other[length]).lowercased() { length += 1 }
            prefix = Array(prefix[..<length])
        }
        return String(prefix)
    }
}

/// Turns the bytes a terminal sends into ``LineEditor/Key``s: UTF-8 characters, control keys
/// and the ANSI escape sequences of the arrow, Home, End and Delete keys.
struct KeyDecoder {
    private var pending: [UInt8] = []

    /// The keys `bytes` complete (an unfinished escape sequence or UTF-8 character waits for more).
    mutating func keys(_ bytes: [UInt8]) -> [LineEditor.Key] {
        pending += bytes
        var keys: [LineEditor.Key] = []
        while !pending.isEmpty {
            guard let (key, used) = Self.decode(pending) else { break }
            pending.removeFirst(used)
            if let key { keys.append(key) }
        }
        return keys
    }

    /// The first key of `bytes` and how many bytes it used; nil when more bytes are needed.
    private static func decode(_ bytes: [UInt8]) -> (LineEditor.Key?, Int)? {
        let first = bytes[0]
        switch first {
        case 0x0D, 0x0A: return (.enter, 1)
        case 0x7F, 0x08: return (.backspace, 1)
        case 0x09: return (.tab, 1)
        case 0x01: return (.home, 1)
        case 0x05: return (.end, 1)
        case 0x02: return (.left, 1)
        case 0x06: return (.right, 1)
        case 0x10: return (.up, 1)
        case 0x0E: return (.down, 1)
        case 0x0B: return (.killToEnd, 1)
        case 0x15: return (.killToStart, 1)
        case 0x17: return (.killWord, 1)
        case 0x03: return (.interrupt, 1)
        case 0x04: return (.endOfInput, 1)
        case 0x1B: return escape(bytes)
        case 0x00..<0x20: return (nil, 1)
        default:
            let length = first < 0x80 ? 1 : first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 1
            guard bytes.count >= length else { return nil }
            let text = String(decoding: bytes[..<length], as: UTF8.self)
            return (text.first.map(LineEditor.Key.character), length)
        }
    }

    /// ESC [ A/B/C/D/H/F, ESC O A…, ESC [ 1~ 3~ 4~ 7~ 8~.
    private static func escape(_ bytes: [UInt8]) -> (LineEditor.Key?, Int)? {
        guard bytes.count >= 2 else { return nil }
        guard bytes[1] == UInt8(ascii: "[") || bytes[1] == UInt8(ascii: "O") else { return (nil, 2) }
        guard bytes.count >= 3 else { return nil }
        switch bytes[2] {
        case UInt8(ascii: "A"): return (.up, 3)
        case UInt8(ascii: "B"): return (.down, 3)
        case UInt8(ascii: "C"): return (.right, 3)
        case UInt8(ascii: "D"): return (.left, 3)
        case UInt8(ascii: "H"): return (.home, 3)
        case UInt8(ascii: "F"): return (.end, 3)
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard let tilde = bytes[2...].firstIndex(where: { !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) && $0 != UInt8(ascii: ";") }) else { return nil }
            let number = String(decoding: bytes[2..<tilde], as: UTF8.self)
            let key: LineEditor.Key? = switch number {
            case "1", "7": .home
            case "4", "8": .end
            case "3": .delete
            default: nil
            }
            return (key, tilde + 1)
        default: return (nil, 3)
        }
    }
}
