/// One line typed at `bluetide shell`'s prompt (or read from its standard input), parsed.
enum ShellRequest: Equatable, Sendable {
    case services
    case read(characteristic: String)
    /// `value` is the words after the characteristic, as typed (quotes kept).
    case write(characteristic: String, value: String, withResponse: Bool)
    /// Lists the typed write forms the characteristic's profile takes.
    case forms(characteristic: String)
    case subscribe(characteristic: String)
    case unsubscribe(characteristic: String)
    /// `mtu` shows the ATT MTU; `mtu N` exchanges it asking for N octets.
    case mtu(request: Int?)
    case rssi
    case info
    case disconnect
    case reconnect
    /// Pairs the link (or encrypts it from the bond), answering with `mode` when given, else as
    /// the shell was started (asking at its prompt in a terminal).
    case pair(mode: PairingMode?)
    /// Waits until `count` notifications have been printed since the command before began (or
    /// since the previous `wait`), at most `timeout` seconds.
    case wait(count: Int, timeout: Double)
    /// Pauses the script `seconds` (notifications go on printing).
    case sleep(seconds: Double)
    case help
    case quit

    /// A command's name, its arguments' syntax and what it does (for `help` and completion).
    struct Command: Sendable {
        let name: String
        let syntax: String
        let summary: String
    }

    static let commands: [Command] = [
        Command(name: "services", syntax: "", summary: "list services and characteristics (names and UUIDs, properties)"),
        Command(name: "read", syntax: "CHAR", summary: "read a value, printed decoded"),
        Command(name: "write", syntax: "CHAR VALUE [--without-response]", summary: "write a typed value (reset, target-power 200), hex 01FF, \"text\" or u16:500"),
        Command(name: "forms", syntax: "CHAR", summary: "the typed values write takes for CHAR (from its profile)"),
        Command(name: "subscribe", syntax: "CHAR", summary: "print its notifications decoded as they come, between prompts"),
        Command(name: "unsubscribe", syntax: "CHAR", summary: "stop printing its notifications"),
        Command(name: "mtu", syntax: "[OCTETS]", summary: "show the ATT MTU, or exchange it asking for OCTETS (23–517)"),
        Command(name: "rssi", syntax: "", summary: "the link's signal strength, dBm"),
        Command(name: "info", syntax: "", summary: "device, link state, MTU and subscriptions"),
        Command(name: "disconnect", syntax: "", summary: "close the link (reconnect opens it again)"),
        Command(name: "reconnect", syntax: "", summary: "connect again, restoring subscriptions"),
        Command(name: "pair", syntax: "[just-works|passkey:NNNNNN|confirm]", summary: "pair (or encrypt from the bond); asks at the prompt unless the mode answers"),
        Command(name: "wait", syntax: "[COUNT] [--timeout SECONDS]", summary: "wait for COUNT notifications since the last command (default 1, 10 s)"),
        Command(name: "sleep", syntax: "SECONDS", summary: "pause (scripts); notifications keep printing"),
        Command(name: "help", syntax: "", summary: "this list"),
        Command(name: "quit", syntax: "", summary: "disconnect and leave (also exit, Ctrl-D)"),
    ]

    /// What was wrong with a line: the message says what to type instead.
    struct SyntaxError: Error, Equatable, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// Parses `line`; nil for a blank line or a `#` comment.
    static func parse(_ line: String) throws(SyntaxError) -> ShellRequest? {
        // A comment is not split into words: its text may hold a lone quote (central's).
        if line.drop(while: { $0 == " " || $0 == "\t" }).hasPrefix("#") { return nil }
        let words = try ShellWords.split(line)
        guard let name = words.first?.lowercased(), !name.hasPrefix("#") else { return nil }
        var arguments = Array(words.dropFirst())
        func one(_ what: String) throws(SyntaxError) -> String {
            guard arguments.count == 1 else { throw usage(name, "expected one \(what)") }
            return ShellWords.unquoted(arguments[0])
        }
        func none() throws(SyntaxError) {
            guard arguments.isEmpty else { throw usage(name, "takes no arguments") }
        }
        switch name {
        case "services", "ls": try none(); return .services
        case "read": return .read(characteristic: try one("characteristic"))
        case "subscribe", "sub": return .subscribe(characteristic: try one("characteristic"))
        case "unsubscribe", "unsub": return .unsubscribe(characteristic: try one("characteristic"))
        case "write":
            let withoutResponse = arguments.contains("--without-response") || arguments.contains("-w")
            arguments.removeAll { $0 == "--without-response" || $0 == "-w" }
            guard arguments.count >= 2 else { throw usage("write", "expected a characteristic and a value") }
            return .write(
                characteristic: ShellWords.unquoted(arguments[0]), value: arguments.dropFirst().joined(separator: " "),
                withResponse: !withoutResponse)
        case "forms": return .forms(characteristic: try one("characteristic"))
        case "mtu":
            if arguments.isEmpty { return .mtu(request: nil) }
            guard let octets = Int(try one("number of octets")), (23...517).contains(octets) else {
                throw usage("mtu", "expected octets from 23 to 517")
            }
            return .mtu(request: octets)
        case "rssi": try none(); return .rssi
        case "info": try none(); return .info
        case "disconnect": try none(); return .disconnect
        case "reconnect", "connect": try none(); return .reconnect
        case "pair":
            if arguments.isEmpty { return .pair(mode: nil) }
            guard let mode = PairingMode(parsing: try one("pairing mode")) else {
                throw usage("pair", "expected \(PairingMode.syntax)")
            }
            return .pair(mode: mode)
        case "wait":
            var timeout = 10.0
            if let flag = arguments.firstIndex(of: "--timeout") {
                guard flag + 1 < arguments.count, let seconds = Double(arguments[flag + 1]), seconds > 0, seconds.isFinite else {
                    throw usage("wait", "--timeout needs seconds > 0")
                }
                timeout = seconds
                arguments.removeSubrange(flag...(flag + 1))
            }
            if arguments.isEmpty { return .wait(count: 1, timeout: timeout) }
            guard let count = Int(try one("count")), count >= 1 else { throw usage("wait", "expected a count ≥ 1") }
            return .wait(count: count, timeout: timeout)
        case "sleep":
            guard let seconds = Double(try one("number of seconds")), seconds >= 0, seconds.isFinite else {
                throw usage("sleep", "expected seconds ≥ 0")
            }
            return .sleep(seconds: seconds)
        case "help", "?": return .help
        case "quit", "exit", "q": try none(); return .quit
        default:
            let known = commands.map(\.name).joined(separator: ", ")
            throw SyntaxError(message: "unknown command \"\(words[0])\"; commands: \(known)")
        }
    }

    private static func usage(_ name: String, _ problem: String) -> SyntaxError {
        let syntax = commands.first { $0.name == name }.map { "\($0.name) \($0.syntax)".trimmingCharacters(in: .whitespaces) } ?? name
        return SyntaxError(message: "\(name): \(problem); usage: \(syntax)")
    }
}

/// Splitting a shell line into words: spaces separate, "double" or 'single' quotes group
/// (the quotes are kept on a word that is wholly quoted, so `write CHAR "hi there"` keeps
/// saying it is text).
enum ShellWords {
    static func split(_ line: String) throws(ShellRequest.SyntaxError) -> [String] {
        var words: [String] = []
        var current = ""
        var quote: Character?
        var inWord = false
        for character in line {
            if let open = quote {
                current.append(character)
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
                current.append(character)
                inWord = true
            } else if character == " " || character == "\t" {
                if inWord { words.append(current); current = ""; inWord = false }
            } else {
                current.append(character)
                inWord = true
            }
        }
        if quote != nil { throw ShellRequest.SyntaxError(message: "unterminated quote in: \(line)") }
        if inWord { words.append(current) }
        return words
    }

    /// `word` without surrounding matching quotes.
    static func unquoted(_ word: String) -> String {
        guard word.count >= 2, let first = word.first, first == "\"" || first == "'", word.last == first else { return word }
        return String(word.dropFirst().dropLast())
    }
}
