import ArgumentParser
import Bluetide
import BluetideBase
import BluetideSupport
import Foundation

/// Options of the commands that act on one characteristic of one device.
struct CharacteristicTarget: ParsableArguments {
    @Argument(help: "Device address (optionally /R or /P) or advertised name.")
    var device: String

    @Argument(help: "Characteristic: UUID, 16-bit hex (2A19), assigned name (battery-level) or profile name (heart-rate).")
    var characteristic: String

    @Option(name: .long, help: "Seconds to look for the device by name or address.")
    var timeout: Double = 5
}

/// Options of the commands that print values.
struct ValueFormatOptions: ParsableArguments {
    @Flag(name: .long, help: "Print raw hex only.")
    var raw = false

    @Option(name: .long, help: "Decode with this profile instead of the characteristic's own (see bluetide decode --list).")
    var profile: String?

    @Flag(name: .long, help: "Print one JSON object per value.")
    var json = false

    /// The `device` of a record about the connected device: its address, and its name when the
    /// label (`Bluetide HRM (F1:…/R)`) has one; `read`, `notification` and `written` all say it.
    static func device(_ address: BluetoothAddress, label: String) -> JSONOutputValue {
        JSONOutput.device(address, name: label.contains(" (") ? label.components(separatedBy: " (").first : nil)
    }

    /// One value's line: decoded summary with hex, hex alone, or a JSON record of `type`
    /// (`read`, `notification`, …) with the characteristic, the value and `extra` fields.
    func line(_ bytes: [UInt8], decoding: ValueDecoding, at time: Double, type: String = "value", extra: [String: JSONOutputValue] = [:]) -> String {
        let decoded = raw ? (summary: nil, value: nil, error: nil) : decoding.decode(bytes, at: time)
        if json {
            var object = extra
            object["characteristic"] = JSONOutput.characteristic(decoding.uuid)
            object["value"] = JSONOutput.value(
                bytes, decoded: decoded.value, profile: raw ? nil : decoding.profile, summary: decoded.summary, decodeError: decoded.error)
            return JSONOutput.line(type, object)
        }
        if raw { return bytes.spacedHex }
        if let error = decoded.error {
            return "\(bytes.spacedHex)  (does not decode as \(decoding.profile ?? "?"): \(error))"
        }
        if let summary = decoded.summary { return "\(summary)  [\(bytes.spacedHex)]" }
        return bytes.spacedHex
    }
}

/// `bluetide read DEVICE CHARACTERISTIC`: one value, decoded.
struct ReadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Read one characteristic's value and print it decoded (and as hex).",
        discussion: """
            Examples:
              bluetide read "Bluetide HRM" battery-level --emulate heart-rate
              bluetide read "Bluetide HRM" 2A38 --emulate heart-rate --json
              bluetide read C6:C5:C4:C3:C2:C1/R 2A19 --transport serial:/dev/ttyACM0 --raw
            """)

    @OptionGroup var target: CharacteristicTarget
    @OptionGroup var session: DeviceSessionOptions
    @OptionGroup var format: ValueFormatOptions

    func run() async throws {
        let command = self
        try await VirtualTimeOption.run(session) { try await command.execute(CommandOutput.standardOutput(), clock: $0) }
    }

    /// Reads and prints. The central (and with `--emulate` the world) runs on `clock`: a
    /// test's manual clock makes `--timeout` pass in virtual time.
    func execute(_ output: CommandOutput, clock: BluetideClock = .continuous) async throws {
        let session = try await DeviceSession.open(session, clock: clock)
        do {
            let (connection, label) = try await session.connect(target.device, timeout: target.timeout)
            let (_, characteristic) = try CharacteristicLookup.find(
                target.characteristic, in: try await connection.services(), device: label)
            guard characteristic.properties.contains(.read) else {
                throw CommandFailure("\(CharacteristicLookup.describe(characteristic.uuid)) on \(label) is not readable (it is \(GATTCommand.properties(characteristic.properties).joined(separator: ", ")))")
            }
            let bytes: [UInt8]
            do { bytes = try await connection.read(characteristic.uuid) } catch {
                if PairingFailureLine.isPairingFailure(error) { throw CommandFailure(session.explain(error, address: connection.address)) }
                let reason = session.explain(error, address: connection.address, level: await connection.securityLevel)
                throw CommandFailure("reading \(CharacteristicLookup.describe(characteristic.uuid)) from \(label) failed: \(reason)")
            }
            let decoding = try ValueDecoding(uuid: characteristic.uuid, profile: format.profile)
            if !format.raw, !format.json, decoding.profile != nil, case let (_, _, error?) = decoding.decode(bytes, at: 0) {
                throw CommandFailure("value \(bytes.spacedHex) of \(CharacteristicLookup.describe(characteristic.uuid)) does not decode as \(decoding.profile ?? "?"): \(error)")
            }
            let fresh = try ValueDecoding(uuid: characteristic.uuid, profile: format.profile)
            output.emit(format.line(bytes, decoding: fresh, at: 0, type: "read", extra: format.json ? [
                "device": ValueFormatOptions.device(connection.address, label: label), "time": JSONOutput.time(monotonic: 0),
            ] : [:]))
            await session.warnIfNotAuthenticated(connection)
        } catch {
            await session.close()
            throw error
        }
        await session.close()
    }
}

/// `bluetide write DEVICE CHARACTERISTIC VALUE…`: one write, the value typed as in the shell.
struct WriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write",
        abstract: "Write a value to a characteristic (with response unless --without-response).",
        discussion: """
            VALUE is what the shell's write takes: a typed form of the characteristic's profile \
            (2A39: reset; 2AD9: request-control, target-power WATTS, simulation GRADE…; the shell's \
            forms CHAR lists them), hex (01FF, "01 ff"), text in quotes inside the argument \
            ('"hello"'), or u8:/u16:/s16:/u32:/s32:NUMBER. Put -- before a value with a minus sign.

            Examples:
              bluetide write HMSoft FFE1 48656C6C6F --without-response --emulate hm10
              bluetide write "Bluetide HRM" 2A39 reset --emulate heart-rate
              bluetide write "Bluetide FTMS" 2AD9 request-control --json \\
                  --emulate ftms-bike
              bluetide write "Bluetide FTMS" 2AD9 --emulate ftms-bike \\
                  -- target-inclination -2
            """)

    @OptionGroup var target: CharacteristicTarget

    @Argument(help: "The value: a typed form and its arguments (reset, target-power 200), hex, '\"text\"' or u16:500.")
    var value: [String] = []

    @Flag(name: .customLong("without-response"), help: "Write without response (Write Command).")
    var withoutResponse = false

    @Flag(name: .long, help: "Print the write as one JSON object (docs/json-output.md).")
    var json = false

    @OptionGroup var session: DeviceSessionOptions

    func run() async throws {
        let command = self
        try await VirtualTimeOption.run(session) { try await command.execute(CommandOutput.standardOutput(), clock: $0) }
    }

    /// Writes and prints what was written; the session runs on `clock` (see ``ReadCommand``).
    func execute(_ output: CommandOutput, clock: BluetideClock = .continuous) async throws {
        guard !value.isEmpty else {
            throw CommandFailure.usage("write: give a VALUE after the characteristic (hex such as 01FF, or a typed form such as reset)", field: "VALUE")
        }
        let session = try await DeviceSession.open(session, clock: clock)
        let start = clock.now
        do {
            let (connection, label) = try await session.connect(target.device, timeout: target.timeout)
            let (service, characteristic) = try CharacteristicLookup.find(
                target.characteristic, in: try await connection.services(), device: label)
            let what = CharacteristicLookup.describe(characteristic.uuid)
            let bytes: [UInt8]
            do {
                let forms = WriteFormCatalog.forms(for: characteristic.uuid, in: service.uuid)
                bytes = try ShellValue.bytes(value.joined(separator: " "), forms: forms, characteristic: what)
            } catch {
                throw CommandFailure.usage(error.message, field: "VALUE")
            }
            let needed: GATTCharacteristicProperties = withoutResponse ? .writeWithoutResponse : .write
            guard characteristic.properties.contains(needed) else {
                throw CommandFailure("\(what) on \(label) does not allow \(withoutResponse ? "write without response" : "write with response") (it is \(GATTCommand.properties(characteristic.properties).joined(separator: ", ")))")
            }
            do {
                try await connection.write(RawBytes(bytes), to: characteristic.uuid, withResponse: !withoutResponse)
            } catch {
                if PairingFailureLine.isPairingFailure(error) { throw CommandFailure(session.explain(error, address: connection.address)) }
                let reason = session.explain(error, address: connection.address, level: await connection.securityLevel)
                throw CommandFailure("writing \(what) on \(label) failed: \(reason)")
            }
            let time = session.seconds(since: start)
            let written = ShellValue.written(bytes, to: characteristic.uuid, at: time)
            if json {
                output.emit(JSONOutput.line("written", [
                    "device": ValueFormatOptions.device(connection.address, label: label),
                    "characteristic": JSONOutput.characteristic(characteristic.uuid), "value": written.json,
                    "withResponse": .bool(!withoutResponse), "time": JSONOutput.time(monotonic: time),
                ]))
            } else {
                let readable = written.summary.map { ": " + $0 } ?? ""
                output.emit("wrote \(bytes.count) byte\(bytes.count == 1 ? "" : "s") to \(what) on \(label)\(readable)  [\(bytes.spacedHex)]")
            }
        } catch {
            await session.close()
            throw error
        }
        await session.close()
    }
}

/// Bytes written as they are.
struct RawBytes: GATTEncodable {
    let octets: [UInt8]
    init(_ octets: [UInt8]) { self.octets = octets }
    func encode(to writer: inout ByteWriter) { writer.write(bytes: octets) }
}
