import ArgumentParser
import Bluetide
import BluetideCapture
import BluetideBase
import BluetideEmulation
import BluetideTransport
import Foundation

/// `bluetide clone CAPTURE --out DIR`: a phone's (or any host's) HCI capture turned into a
/// device file `emulate --from` serves, value logs, a central script and a summary.
struct CloneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clone",
        abstract: "Rebuild a device from an HCI capture: device file, value logs, central script, summary.",
        discussion: """
            Reads a btsnoop capture (Android's btsnoop_hci.log, btmon -w, Bumble, a +snoop transport; \
            datalinks 1002 H4, 1001 HCI and 2001 btmon) or a pcap with link type 201, follows every LE \
            connection up to ATT, and writes into DIR:

              device.json         the device file (docs/clone.md), for emulate --from
              connection-N.jsonl  one value log per connection (docs/value-log-format.md)
              central.shell       the central's side as bluetide shell commands with waits
              summary.txt         services, characteristics, counts, decode attempts

            The device file holds the advertising, the GATT database (from the discovery in the \
            capture, inferred from the handles used where it is missing), the values read, the \
            notifications with their timing, and the central's writes with the notifications \
            that answered them (--reply-window).

            Serve the clone with bluetide emulate --from DIR/device.json: at the captured handles and the \
            captured address (public ones on the virtual link; a resolvable private address is kept \
            unchanged, without its IRK), so central.shell, which names characteristics by handle, drives \
            the clone as it drives the device. A damaged capture gives what it \
            holds up to the damage, with warnings; a file that is no capture exits with status 2.

            Examples:
              bluetide clone btsnoop_hci.log --out ring-clone
              bluetide emulate --from ring-clone/device.json
              bluetide shell C6:C5:C4:C3:C2:C1/R < ring-clone/central.shell
              bluetide clone session.btsnoop --out strap --json
            """)

    @Argument(help: "The capture file (btsnoop or pcap).")
    var capture: String

    @Option(name: .long, help: "Directory to write the outputs into (created if missing).")
    var out: String

    @Option(name: .long, help: "Seconds within which a notification still answers the write before it (from the write or the previous answer).")
    var replyWindow: Double = CaptureAnalysis.defaultReplyWindow

    @Flag(name: .long, help: "Print one JSON object per device, characteristic, file and warning (docs/json-output.md).")
    var json = false

    func run() throws {
        for line in try execute() { print(line) }
    }

    /// Reads, analyses and writes; returns the lines to print.
    func execute() throws -> [String] {
        guard replyWindow.isFinite, replyWindow >= 0 else {
            throw CommandFailure("--reply-window \(replyWindow): expected seconds ≥ 0 (e.g. 2)")
        }
        let file: CaptureFile
        do { file = try CaptureFile.read(path: capture) } catch {
            // A read failure names the file already; the others say what the bytes were.
            if case .io = error { throw CommandFailure.usage("CAPTURE: \(error)", field: "CAPTURE") }
            throw CommandFailure.usage("CAPTURE \(capture): \(error)", field: "CAPTURE")
        }
        let analysis = CaptureAnalysis.analyze(file, captureName: URL(fileURLWithPath: capture).lastPathComponent, replyWindow: replyWindow)
        let result: (CloneDocument, CloneDirectory.Written)
        do { result = try CloneDirectory.write(analysis, to: out) } catch {
            throw CommandFailure("\(error)")
        }
        return json ? jsonLines(result.0, result.1) : textLines(result.0, result.1)
    }

    private func textLines(_ document: CloneDocument, _ written: CloneDirectory.Written) -> [String] {
        var lines: [String] = []
        let source = document.source
        lines.append("\(source.capture): \(source.format), \(source.packets) packets, \(document.connections.count) connection(s)")
        for device in document.devices {
            let answered = device.exchanges.filter { !$0.replies.isEmpty }.count
            lines.append("  \(device.name.map { "\"\($0)\" " } ?? "")\(device.address) (\(device.side) \(device.role)): "
                + "\(device.services.count) service(s), \(device.characteristics.count) characteristic(s), "
                + "\(device.exchanges.count) write(s) (\(answered) answered), \(device.notifications.count) timed notification(s)")
        }
        if document.devices.isEmpty { lines.append("  no GATT server in the capture") }
        lines.append("wrote \(written.all.map { URL(fileURLWithPath: out).appendingPathComponent($0).path }.joined(separator: ", "))")
        if !document.warnings.isEmpty {
            lines.append("\(document.warnings.count) warning(s), see summary.txt; first: \(document.warnings[0])")
        }
        return lines
    }

    private func jsonLines(_ document: CloneDocument, _ written: CloneDirectory.Written) -> [String] {
        var lines: [String] = []
        for device in document.devices {
            let identity = JSONOutput.device(text: device.address + (device.addressType == "random" ? "/R" : ""), name: device.name)
            lines.append(JSONOutput.line("cloned-device", [
                "device": identity, "side": .string(device.side), "role": .string(device.role),
                "serviceCount": .integer(Int64(device.services.count)),
                "characteristicCount": .integer(Int64(device.characteristics.count)),
                "writeCount": .integer(Int64(device.exchanges.count)),
                "answeredWriteCount": .integer(Int64(device.exchanges.filter { !$0.replies.isEmpty }.count)),
                "timedNotificationCount": .integer(Int64(device.notifications.count)),
                "connections": .array(device.connections.map { .integer(Int64($0)) }),
            ]))
            for service in device.services {
                for c in service.characteristics {
                    var characteristic: [String: JSONOutputValue] = [
                        "uuid": .string(c.uuid.shortString), "handle": .integer(Int64(c.valueHandle)),
                        "properties": .array(c.properties.map { .string($0) }),
                    ]
                    if let name = c.name { characteristic["name"] = .string(name) }
                    var serviceField: [String: JSONOutputValue] = ["uuid": .string(service.uuid.shortString)]
                    if let name = service.name { serviceField["name"] = .string(name) }
                    var fields: [String: JSONOutputValue] = [
                        "device": identity, "service": .object(serviceField), "characteristic": .object(characteristic),
                        "inferred": .bool(c.inferred), "reads": .integer(Int64(c.counts.reads)),
                        "writes": .integer(Int64(c.counts.writes)),
                        "writesWithoutResponse": .integer(Int64(c.counts.writesWithoutResponse)),
                        "notifications": .integer(Int64(c.counts.notifications)),
                        "indications": .integer(Int64(c.counts.indications)),
                    ]
                    if let attempt = CloneReport.decodeAttempt(c, in: device) {
                        fields["decodingProfiles"] = .array(attempt.profiles.map { .string($0) })
                    }
                    if let value = c.value, let bytes = try? Hex.parse(value) { fields["value"] = JSONOutput.value(bytes) }
                    lines.append(JSONOutput.line("cloned-characteristic", fields))
                }
            }
        }
        lines.append(JSONOutput.line("clone-written", [
            "directory": .string(out), "files": .array(written.all.map { .string($0) }),
            "connectionCount": .integer(Int64(document.connections.count)),
            "warningCount": .integer(Int64(document.warnings.count)),
        ]))
        for warning in document.warnings { lines.append(JSONOutput.line("warning", ["message": .string(warning)])) }
        return lines
    }
}

/// `bluetide emulate --from DIR/device.json`: serves a device rebuilt by `bluetide clone`.
extension EmulateCommand {
    func serveClone(_ path: String) async throws {
        guard profiles.isEmpty else {
            throw CommandFailure.usage("--from serves the clone alone: leave out the device models (\(profiles.joined(separator: " ")))", field: "--from")
        }
        let document: CloneDocument
        do { document = try CloneDirectory.readDocument(path: path) } catch { throw CommandFailure.usage("--from: \(error)", field: "--from") }
        guard var device = document.devices.first else {
            throw CommandFailure.usage("--from \(path): the clone holds no GATT server (its capture had no ATT traffic); clone a capture taken while the app was connected", field: "--from")
        }
        let spec: TransportSpec
        do { spec = try TransportSpec(parsing: transport) } catch { throw CommandFailure("--transport: \(error)") }
        if let duration, !(duration.isFinite && duration > 0) {
            throw CommandFailure("--duration \(duration): expected a number of seconds > 0")
        }
        var chosen: BluetoothAddress?
        if let address {
            do { chosen = try BluetoothAddress(address, type: .random) } catch {
                throw CommandFailure("--address \"\(address)\": \(error) (expected six hex bytes like C6:C5:C4:C3:C2:C1)")
            }
            guard (chosen?.value ?? 0) >> 46 == 0b11 else {
                throw CommandFailure("--address \(address): a random static address must start with C0–FF (the top two bits set), e.g. C6:C5:C4:C3:C2:C1")
            }
        }
        if let name {
            // A new name: advertise it with the database's services instead of the captured bytes.
            device.name = name
            device.advertising = nil
        }
        let output = LinePrinter()
        let world: VirtualWorld? = if case let .virtual(link) = spec.kind { VirtualWorld(linkName: link ?? "default") } else { nil }
        let clone: ClonePeripheral
        do {
            if let world {
                clone = try await world.serveClone(device, address: chosen, snoop: spec.snoopPath)
            } else {
                let bluetooth = try await Bluetooth.open(
                    transport: "\(spec)", configuration: ClonePeripheral.hostConfiguration(for: device, address: chosen))
                clone = ClonePeripheral(bluetooth: bluetooth, device: device)
                do { try await clone.start() } catch {
                    await bluetooth.close()
                    throw error
                }
            }
        } catch {
            await world?.close()
            throw CommandFailure("clone of \(device.address): could not start on \(spec): \(error)")
        }
        let served = clone.bluetooth.address
        let label = device.name ?? "Bluetide Clone"
        if json {
            output.emit(JSONOutput.line("started", [
                "model": .string("clone"), "device": JSONOutput.device(served, name: label), "transport": .string("\(spec)"),
                "source": .string(path),
            ]))
            for limitation in clone.limitations { output.emit(JSONOutput.line("clone-limitation", ["message": .string(limitation)])) }
        } else {
            output.emit("clone of \(device.address): advertising as \"\(label)\" from \(served) on \(spec)")
            for limitation in clone.limitations { output.emit("note: \(limitation)") }
        }
        let json = self.json
        let events = clone.events
        let printer = Task {
            for await event in events {
                output.emit(json ? Self.jsonLine(event) : event.description)
            }
        }
        let stopSignal = StopSignal.install(duration: duration)
        let watcher = Task { [stopper = stopSignal.stopper] in
            guard await clone.bluetooth.waitUntilClosed() != nil else { return }
            stopper.yield("controller gone")
        }
        await stopSignal.wait()
        watcher.cancel()
        await PromptShutdown.run({ await clone.stop() }, force: { await clone.close() })
        await clone.close()
        printer.cancel()
        await world?.close()
    }

    /// A clone's event as a record: `connected` (`peer`), `written` (`characteristic`, `value`,
    /// `match`: `exact`, `leading-bytes` with `matchedBytes`, or `unknown`; `replies`), `sent`.
    static func jsonLine(_ event: ClonePeripheral.Event) -> String {
        var fields: [String: JSONOutputValue] = ["model": .string("clone")]
        switch event {
        case let .connected(connection, peer):
            fields["connection"] = .integer(Int64(connection))
            fields["peer"] = JSONOutput.device(peer)
            return JSONOutput.line("connected", fields)
        case let .wrote(connection, characteristic, value, match, replies):
            fields["connection"] = .integer(Int64(connection))
            fields["characteristic"] = JSONOutput.characteristic(characteristic)
            fields["value"] = JSONOutput.value(value)
            switch match {
            case .exact: fields["match"] = .string("exact")
            case let .leadingBytes(n):
                fields["match"] = .string("leading-bytes")
                fields["matchedBytes"] = .integer(Int64(n))
            case .unknown: fields["match"] = .string("unknown")
            }
            fields["replies"] = .integer(Int64(replies))
            return JSONOutput.line("written", fields)
        case let .sent(characteristic, value):
            fields["characteristic"] = JSONOutput.characteristic(characteristic)
            fields["value"] = JSONOutput.value(value)
            return JSONOutput.line("sent", fields)
        }
    }
}
