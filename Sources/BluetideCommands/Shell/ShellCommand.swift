import ArgumentParser
import BluetideSupport
import Foundation

/// `bluetide shell DEVICE`: one connection, commands typed at a prompt (or read from standard
/// input), replies and notifications printed between them.
struct ShellCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "Talk to one device on one connection: read, write and subscribe at a prompt.",
        discussion: """
            Connects once, then reads commands: at a terminal with line editing, history (↑/↓) and \
            Tab completion of commands and characteristic names; otherwise one command per line from \
            standard input, for scripts. Notifications are printed as they come, between prompts. \
            Type help for the commands, quit or Ctrl-D to leave.

            Commands: services, read CHAR, write CHAR VALUE [--without-response], forms CHAR, \
            subscribe CHAR, unsubscribe CHAR, mtu [OCTETS], rssi, info, disconnect, reconnect, \
            pair [just-works|passkey:NNNNNN|confirm], wait [COUNT], sleep SECONDS, help, quit. \
            CHAR is a UUID (2A37), an assigned or profile name (battery-level, heart-rate), or \
            handle:0x0012, the value's handle (the scripts bluetide clone writes use these).

            pair secures the link: with the stored bond (--bonds-file) it only encrypts; else it \
            pairs. At a terminal it asks at the prompt (confirm a number, type the passkey the \
            device shows, or shows one to type on the device); a mode answers in advance, as \
            --pairing does for the whole session.

            VALUE is a typed form of the characteristic's profile where it has one (forms CHAR \
            lists them; Tab completes them): write 2A39 reset, write 2AD9 target-power 200, \
            write 2AD9 simulation 2.5. Or hex (01FF, 01 ff), "text", or u8:/u16:/s16:/u32:/s32: \
            NUMBER. Control points answer by indication: subscribe to them first.

            A script stops at end of input; its exit status is 1 if any command failed.

            Examples:
              bluetide shell "Bluetide HRM" --emulate heart-rate
              printf 'read battery-level\\nsubscribe heart-rate\\nwait 3\\n' |
                bluetide shell "Bluetide HRM" --emulate heart-rate --json
              printf '%s\\n' 'subscribe 2AD9' 'write 2AD9 request-control' \\
                  'write 2AD9 target-power 200' 'wait' |
                bluetide shell "Bluetide FTMS" --emulate ftms-bike
              bluetide shell C6:C5:C4:C3:C2:C1/R --transport hci-socket:0
            """)

    @Argument(help: "Device address (optionally /R or /P) or advertised name.")
    var device: String

    @Option(name: .long, help: "Seconds to look for the device; also the limit to connect (5 at least) and to discover its services (10 at least).")
    var timeout: Double = 5

    @Flag(name: .long, help: "One JSON object per reply and notification (docs/json-output.md).")
    var json = false

    @OptionGroup var session: DeviceSessionOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions

    func run() async throws {
        let interactive = ShellConsole.isInteractive
        let command = self
        try await VirtualTimeOption.run(session) { try await command.execute(input: StandardInputBytes.stream(), interactive: interactive, clock: $0) }
    }

    /// Runs the shell on `input`: with the line editor when `interactive`, else line by line. The
    /// session runs on `clock`: `--timeout`, `wait` and `sleep` are measured on it.
    func execute(input: AsyncStream<[UInt8]>, interactive: Bool, output: CommandOutput? = nil, clock: BluetideClock = .continuous) async throws {
        guard timeout.isFinite, timeout > 0 else { throw CommandFailure("--timeout \(timeout): expected seconds > 0") }
        let completions = ShellCompletions()
        let console: ShellConsole? = interactive ? ShellConsole(prompt: "\(device)> ", complete: { completions.candidates(previousWords: $0, word: $1) }) : nil
        let typed = ShellLines()
        // At a terminal, pairing questions are asked at the shell's own prompt.
        let conversation = console.map { console in
            PairingConversation(ask: { question in
                console.ask(question)
                let answer = await typed.nextAnswer()
                console.endQuestion()
                return answer
            }, tell: { console.print($0) })
        }
        let devices = try await DeviceSession.open(session, conversation: conversation, hint: .shellCommand, clock: clock)
        let lines = output ?? (console.map { console in CommandOutput(emit: { console.print($0) }, isTerminal: true) } ?? .standardOutput())
        let shell = ShellSession(devices: devices, target: device, timeout: timeout, json: json, output: lines, completions: completions)
        var failures = 0
        do {
            try await shell.connect()
            if let console {
                try await interact(shell, console: console, lines: typed, input: input)
            } else {
                failures = try await runScript(shell, input: input, output: lines)
            }
        } catch {
            await shell.close()
            await devices.close()
            throw error
        }
        await shell.close()
        await devices.close()
        if failures > 0 { throw CommandFailure("\(failures) command\(failures == 1 ? "" : "s") failed") }
    }

    /// One request per line of `input`; returns how many failed.
    private func runScript(_ shell: ShellSession, input: AsyncStream<[UInt8]>, output: CommandOutput) async throws -> Int {
        var failures = 0
        var pending: [UInt8] = []
        for await chunk in input {
            pending += chunk
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<newline], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                pending.removeSubrange(...newline)
                switch await perform(line, on: shell, report: reportError) {
                case .none: return failures
                case .some(true): break
                case .some(false): failures += 1
                }
            }
        }
        let last = String(decoding: pending, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if await perform(last, on: shell, report: reportError) == false { failures += 1 }
        return failures
    }

    /// The prompt loop on a terminal in raw mode. Keys are read by a task of their own, so a
    /// question asked while a command runs (pairing) is answered at the prompt.
    private func interact(_ shell: ShellSession, console: ShellConsole, lines: ShellLines, input: AsyncStream<[UInt8]>) async throws {
        console.enterRawMode()
        defer { console.restore() }
        console.print("Type help for the commands, quit or Ctrl-D to leave.")
        console.showPrompt()
        let reader = Task {
            var keys = KeyDecoder()
            for await chunk in input {
                for key in keys.keys(chunk) {
                    switch console.key(key) {
                    case let .submit(line)?: await lines.deliver(line)
                    case .endOfInput?:
                        await lines.finish()
                        return
                    default: break
                    }
                }
            }
            await lines.finish()
        }
        defer { reader.cancel() }
        while let line = await lines.nextCommand() {
            let result = await perform(line, on: shell) { message, status, field in
                console.print(json ? JSONOutput.error(message, status: status, field: field) : "error: \(message)")
            }
            if result == nil { return }
            console.showPrompt()
        }
    }

    /// Runs one line: true when it worked (or was blank), false when it failed (reported), nil to leave.
    private func perform(
        _ line: String, on shell: ShellSession, report: (String, ExitStatus, String?) -> Void
    ) async -> Bool? {
        do {
            guard let request = try ShellRequest.parse(line) else { return true }
            return try await shell.perform(request) ? true : nil
        } catch let error as ShellRequest.SyntaxError {
            report(error.message, .usage, nil)
        } catch let failure as CommandFailure {
            report(failure.message, failure.status, failure.field)
        } catch is CancellationError {
            return nil
        } catch {
            report("\(error)", .failure, nil)
        }
        return false
    }

    private func reportError(_ message: String, _ status: ExitStatus, _ field: String?) {
        let line = json ? JSONOutput.error(message, status: status, field: field) : "bluetide shell: \(message)"
        StandardStreams.error.line(line)
    }
}
