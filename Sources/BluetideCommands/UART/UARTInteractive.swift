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
        reporter.message("connected to \(names); Ctrl-] for the menu" + (charMode ? "" : ", Enter sends the line + \(ending.rawValue), Ctrl-C quits"))
        // Received bytes are shown until the session ends: when the user quits or input ends
        // (the keys), or every link has closed, whichever comes first.
        await withTaskGroup(of: Void.self) { printing in
            printing.addTask { await self.printReceived() }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [links] in
                    for link in links { _ = await link.waitForClose() }
                }
                group.addTask { _ = try? await self.readKeys(ending: ending, echo: echo, charMode: charMode) }
                await group.next()
                io.input.stop()  // a key read may be waiting
                group.cancelAll()
            }
            printing.cancelAll()
        }
        try? await io.output.write(endLine())
        for link in links { if let reason = await link.closedReason, reason != "closed" { throw CommandFailure("\(link.name): \(reason)") } }
    }

    /// Reads keys until the user quits (Ctrl-] q, Ctrl-C, Ctrl-D on an empty line: nil) or input
    /// ends ("end of input"), sending lines (or keys with --char-mode) as they are finished.
    private func readKeys(ending: LineEnding, echo: Bool, charMode: Bool) async throws -> String? {
        var editor = LineEditor()
        var decoder = KeyDecoder()
        while let chunk = await io.input.read() {
            // The escape key is taken out first; the bytes around it are keys as usual.
            var rest = chunk[...]
            while !rest.isEmpty {
                let escape = rest.firstIndex(of: Self.escapeKey)
                let typed = Array(rest[..<(escape ?? rest.endIndex)])
                rest = escape.map { rest[($0 + 1)...] } ?? []
                if charMode {
                    for key in typed {
                        let bytes = key == 0x0D || key == 0x0A ? ending.bytes : [key]
                        if echo { try? await io.output.write(key == 0x0D ? [0x0D, 0x0A] : [key]) }
                        await send(bytes)
                    }
                } else {
                    for key in decoder.keys(typed) {
                        switch editor.handle(key) {
                        case .redraw: try? await io.output.write(Self.editedLine(editor))
                        case .bell, .showCompletions: try? await io.output.write([0x07])
                        case let .submit(line):
                            // Without --echo the typed line is wiped, leaving the device's answer.
                            try? await io.output.write(echo ? [0x0D, 0x0A] : Array("\r\u{1B}[K".utf8))
                            await send(Array(line.utf8) + ending.bytes, endingWrite: true)
                        case .cancel, .endOfInput:
                            return nil  // Ctrl-C, or Ctrl-D on an empty line
                        }
                    }
                }
                if escape != nil {
                    // The menu's key may have come in the same read as the escape key.
                    let pending = rest.first
                    if pending != nil { rest = rest.dropFirst() }
                    if try await menu(key: pending) { return nil }
                }
            }
        }
        return "end of input"
    }

    /// The escape menu; `key` is its key when it has already been read. Returns true to quit.
    func menu(key pending: UInt8? = nil) async throws -> Bool {
        let hexNow = hexEnabled
        reporter.message("menu: q quit · h hex \(hexNow ? "off" : "on") · f send a file · r RSSI · c reconnect"
            + (links.count > 1 ? " · n next device (now \(selectedLink.name))" : "") + " · other key: back")
        var key = pending
        if key == nil { key = await io.input.read(maximum: 1)?.first }
        guard let key else { return true }
        switch key {
        case UInt8(ascii: "q"), UInt8(ascii: "Q"), 0x03:
            return true
        case UInt8(ascii: "h"), UInt8(ascii: "H"):
            toggleHex()
            reporter.message("hex \(hexEnabled ? "on" : "off")")
        case UInt8(ascii: "r"), UInt8(ascii: "R"):
            for link in links {
                do { reporter.message("RSSI \(try await link.rssi()) dBm", link: link) } catch {
                    reporter.message("no RSSI: \(error)", link: link)
                }
            }
        case UInt8(ascii: "c"), UInt8(ascii: "C"):
            let link = selectedLink
            do { try await link.reconnect() } catch { reporter.message("reconnect failed: \(error)", link: link) }
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
        io.status("file to send (Enter when done, Ctrl-C to cancel):", skipEmpty: false)
        var editor = LineEditor()
        var decoder = KeyDecoder()
        var path: String?
        reading: while let chunk = await io.input.read() {
            for key in decoder.keys(chunk) {
                switch editor.handle(key) {
                case .redraw: try? await io.output.write(Self.editedLine(editor))
                case let .submit(line): path = line; break reading
                case .cancel, .endOfInput: break reading
                case .bell, .showCompletions: try? await io.output.write([0x07])
                }
            }
        }
        try? await io.output.write([0x0D, 0x0A])
        let name = (path ?? "").trimmingCharacters(in: .whitespaces)
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

extension UARTRunner {
    /// What redraws the line being typed: back to the line's start, the text, clear the rest,
    /// and the cursor moved back to where the editor has it.
    static func editedLine(_ editor: LineEditor) -> [UInt8] {
        var bytes = Array(("\r" + editor.line + "\u{1B}[K").utf8)
        let back = editor.buffer.count - editor.cursor
        if back > 0 { bytes += Array("\u{1B}[\(back)D".utf8) }
        return bytes
    }
}
