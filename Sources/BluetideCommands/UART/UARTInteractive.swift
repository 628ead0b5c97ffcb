import BluetideSerial
import Foundation

/// The interactive terminal: raw keys, local line editing (or key-at-a-time with --char-mode),
/// and the Ctrl-] escape menu.
extension UARTRunner {
    /// The escape key: Ctrl-] as in telnet.
    static let escapeKey: UInt8 = 0x1D

    /// Runs the session until the user quits (Ctrl-] q), stdin ends, or every link closes.
    func interactive(ending: LineEnding, echo: Bool, charMode: Bool) async throws {
        let mode = TerminalMode(descriptor: io.input.input)
        defer { mode?.restore() }
        let names = links.map(\.name).joined(separator: ", ")
        reporter.message("connected to \(names); Ctrl-] for the menu" + (charMode ? "" : ", Enter sends the line + \(ending.rawValue)"))
        let printer = Task { await printReceived() }
        defer { printer.cancel() }
        let closed = Task { [links] in
            for link in links { _ = await link.waitForClose() }
        }
        defer { closed.cancel() }
        let keys = Task { [self] () -> String? in
            var editor = LocalEchoLine()
            while let chunk = await io.input.read() {
                for key in chunk {
                    if key == Self.escapeKey {
                        if try await menu() { return nil }
                        continue
                    }
                    if charMode {
                        let bytes = key == 0x0D || key == 0x0A ? ending.bytes : [key]
                        if echo { try? await io.output.write(key == 0x0D ? [0x0D, 0x0A] : [key]) }
                        await send(bytes)
                    } else {
                        let (screen, line) = editor.feed(key)
                        if !screen.isEmpty { try? await io.output.write(screen) }
                        if let line {
                            // Without --echo the typed line is wiped, leaving the device's answer.
                            try? await io.output.write(echo ? [0x0D, 0x0A] : Array("\r\u{1B}[K".utf8))
                            await send(line + ending.bytes)
                        }
                    }
                }
            }
            return "end of input"
        }
        defer { keys.cancel() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { _ = try? await keys.value }
            group.addTask { await closed.value }
            await group.next()
            keys.cancel()
            closed.cancel()
            io.input.stop()  // a key read may be waiting
            group.cancelAll()
        }
        try? await io.output.write(endLine())
        for link in links { if let reason = await link.closedReason, reason != "closed" { throw CommandFailure("\(link.name): \(reason)") } }
    }

    /// The escape menu; returns true to quit.
    func menu() async throws -> Bool {
        let hexNow = hexEnabled
        reporter.message("menu: q quit · h hex \(hexNow ? "off" : "on") · f send a file · r RSSI · c reconnect"
            + (links.count > 1 ? " · n next device (now \(selectedLink.name))" : "") + " · other key: back")
        guard let key = await io.input.read(maximum: 1)?.first else { return true }
        switch key {
        case UInt8(ascii: "q"), UInt8(ascii: "Q"), 0x03:
            return true
        case UInt8(ascii: "h"), UInt8(ascii: "H"):
            toggleHex()
            reporter.message("hex \(hexEnabled ? "on" : "off")")
        case UInt8(ascii: "r"), UInt8(ascii: "R"):
            for link in links {
                do { reporter.message("RSSI \(try await link.rssi()) dBm", device: link.name) } catch {
                    reporter.message("no RSSI: \(error)", device: link.name)
                }
            }
        case UInt8(ascii: "c"), UInt8(ascii: "C"):
            let link = selectedLink
            do { try await link.reconnect() } catch { reporter.message("reconnect failed: \(error)", device: link.name) }
        case UInt8(ascii: "n"), UInt8(ascii: "N"):
            selectNext()
            reporter.message("input goes to \(selectedLink.name)")
        case UInt8(ascii: "f"), UInt8(ascii: "F"):
            try await sendFile()
        default:
            reporter.message("back")
        }
        return false
    }

    private func sendFile() async throws {
        io.status("file to send (Enter when done): ", skipEmpty: false)
        var editor = LocalEchoLine()
        var path: [UInt8]?
        while path == nil, let chunk = await io.input.read(maximum: 1) {
            for key in chunk {
                let (screen, line) = editor.feed(key)
                if !screen.isEmpty { try? await io.output.write(screen) }
                if let line { path = line; break }
            }
        }
        try? await io.output.write([0x0D, 0x0A])
        let name = String(decoding: path ?? [], as: UTF8.self).trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { reporter.message("no file sent"); return }
        guard let data = FileManager.default.contents(atPath: (name as NSString).expandingTildeInPath) else {
            reporter.message("cannot read \(name): no such file, or not readable")
            return
        }
        let bytes = [UInt8](data)
        reporter.message("sending \(bytes.count) bytes from \(name)…")
        var sent = 0
        let step = 4096
        while sent < bytes.count {
            let end = min(sent + step, bytes.count)
            guard await send(Array(bytes[sent..<end])) else { return }
            sent = end
            if bytes.count > 16 * step, sent % (16 * step) == 0 { reporter.message("sent \(sent) of \(bytes.count) bytes") }
        }
        for link in targets { try? await link.drain() }
        reporter.message("sent \(bytes.count) bytes from \(name)")
    }
}

/// Local line editing for the terminal: printable keys are shown and kept, Backspace removes
/// the last one, Enter hands the line out. Pure logic: a key in, screen bytes and maybe a line out.
struct LocalEchoLine {
    private(set) var line: [UInt8] = []

    /// Handles one key: what to draw, and the finished line when the key was Enter.
    mutating func feed(_ key: UInt8) -> (screen: [UInt8], line: [UInt8]?) {
        switch key {
        case 0x0D, 0x0A:
            defer { line = [] }
            return ([], line)
        case 0x7F, 0x08:
            guard !line.isEmpty else { return ([], nil) }
            // Remove a whole UTF-8 character.
            while let last = line.last, last & 0xC0 == 0x80 { line.removeLast() }  // continuation bytes
            if !line.isEmpty { line.removeLast() }  // the character's first byte
            return ([0x08, 0x20, 0x08], nil)
        case 0x15:  // Ctrl-U: clear the line
            let count = String(decoding: line, as: UTF8.self).count
            line = []
            return (Array(repeating: [0x08, 0x20, 0x08], count: count).flatMap { $0 }, nil)
        default:
            guard key >= 0x20 || key == 0x09 else { return ([], nil) }
            line.append(key)
            return ([key], nil)
        }
    }
}
