import ArgumentParser
import Bluetide
import BluetideBase
import BluetideSupport
import Foundation

/// `bluetide gatt DEVICE`: everything a device serves, with readable values decoded.
struct GATTCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt",
        abstract: "Connect and dump services, characteristics, descriptors and readable values (decoded).",
        discussion: """
            DEVICE is an address (C6:C5:C4:C3:C2:C1, optionally /R or /P) or an advertised name, looked for in a scan.

            Examples:
              bluetide gatt "Bluetide HRM" --emulate heart-rate
              bluetide gatt "Bluetide HRM" --emulate heart-rate --json
              bluetide gatt C6:C5:C4:C3:C2:C1/R --transport serial:/dev/ttyACM0
            """)

    @Argument(help: "Device address or advertised name.")
    var device: String

    @OptionGroup var session: DeviceSessionOptions

    @Option(name: .long, help: "Seconds to look for the device by name or address.")
    var timeout: Double = 5

    @Flag(name: .long, help: "Print one JSON object (the whole table).")
    var json = false

    func run() async throws {
        let command = self
        try await VirtualTimeOption.run(session) { try await command.execute(CommandOutput.standardOutput(), clock: $0) }
    }

    static func properties(_ p: GATTCharacteristicProperties) -> [String] {
        var names: [String] = []
        if p.contains(.broadcast) { names.append("broadcast") }
        if p.contains(.read) { names.append("read") }
        if p.contains(.writeWithoutResponse) { names.append("write-without-response") }
        if p.contains(.write) { names.append("write") }
        if p.contains(.notify) { names.append("notify") }
        if p.contains(.indicate) { names.append("indicate") }
        if p.contains(.authenticatedSignedWrites) { names.append("signed-write") }
        if p.contains(.extendedProperties) { names.append("extended") }
        return names
    }

    /// Lists the device's GATT database; the session runs on `clock` (see ``ReadCommand``).
    func execute(_ output: CommandOutput, clock: BluetideClock = .continuous) async throws {
        let session = try await DeviceSession.open(session, clock: clock)
        do {
            let (connection, label) = try await session.connect(device, timeout: timeout)
            let services: [GATTRemoteService]
            do { services = try await connection.services() } catch {
                throw CommandFailure("\(label): service discovery failed: \(error)")
            }
            var jsonServices: [[String: Any]] = []
            var reads = ReadTally()
            if !json { output.emit(label) }
            for service in services {
                if !json {
                    output.emit("service \(CharacteristicLookup.describe(service.service.uuid)) (handles \(service.service.startHandle)–\(service.service.endHandle))")
                }
                var jsonCharacteristics: [[String: Any]] = []
                for remote in service.characteristics {
                    let characteristic = remote.characteristic
                    let props = Self.properties(characteristic.properties)
                    var entry: [String: Any] = [
                        "uuid": CharacteristicLookup.describe(characteristic.uuid).split(separator: " ").first.map(String.init) ?? "",
                        "properties": props, "handle": Int(characteristic.valueHandle),
                    ]
                    if let name = characteristic.uuid.name { entry["name"] = name }
                    var valueText = ""
                    if characteristic.properties.contains(.read) {
                        do {
                            reads.attempted += 1
                            let bytes = try await connection.read(characteristic.uuid)
                            var value: [String: Any] = ["hex": bytes.hexString]
                            let decoding = try ValueDecoding(uuid: characteristic.uuid, profile: nil)
                            let decoded = decoding.decode(bytes, at: 0)
                            valueText = " = \(bytes.spacedHex)"
                            if let profile = decoding.profile { value["profile"] = profile }
                            if let summary = decoded.summary { valueText += "  \(summary)"; value["summary"] = summary }
                            if let decodedValue = decoded.value { value["decoded"] = JSONObjectLine.embed(decodedValue) }
                            if let error = decoded.error { valueText += "  (does not decode: \(error))"; value["decodeError"] = error }
                            entry["value"] = value
                        } catch {
                            // A failed pairing ends the dump: every later value would fail the same way.
                            if PairingFailureLine.isPairingFailure(error) {
                                throw CommandFailure(session.explain(error, address: connection.address))
                            }
                            // So does a protocol error: nothing the device answers can be trusted.
                            if case .protocolError? = error as? BluetideError { throw CommandFailure("\(label): \(error)") }
                            reads.failed += 1
                            let reason = session.explain(error, address: connection.address, level: await connection.securityLevel)
                            valueText = "  (read failed: \(reason))"
                            entry["readError"] = reason
                        }
                    }
                    var descriptorLines: [String] = []
                    var jsonDescriptors: [[String: Any]] = []
                    for descriptor in remote.descriptors {
                        var item: [String: Any] = [
                            "uuid": CharacteristicLookup.describe(descriptor.uuid).split(separator: " ").first.map(String.init) ?? "",
                            "handle": Int(descriptor.handle),
                        ]
                        var text = "    descriptor \(CharacteristicLookup.describe(descriptor.uuid)) (handle \(descriptor.handle))"
                        do {
                            reads.attempted += 1
                            let bytes = try await connection.readDescriptor(descriptor.uuid, of: characteristic.uuid)
                            var value: [String: Any] = ["hex": bytes.hexString]
                            text += " = \(bytes.spacedHex)"
                            defer { item["value"] = value }
                            if let meaning = DescriptorMeaning.describe(descriptor.uuid, bytes) {
                                value["summary"] = meaning
                                text += "  \(meaning)"
                            }
                        } catch {
                            if PairingFailureLine.isPairingFailure(error) {
                                throw CommandFailure(session.explain(error, address: connection.address))
                            }
                            if case .protocolError? = error as? BluetideError { throw CommandFailure("\(label): \(error)") }
                            reads.failed += 1
                            item["readError"] = "\(error)"
                            text += "  (read failed: \(error))"
                        }
                        descriptorLines.append(text)
                        jsonDescriptors.append(item)
                    }
                    entry["descriptors"] = jsonDescriptors
                    jsonCharacteristics.append(entry)
                    if !json {
                        output.emit("  \(CharacteristicLookup.describe(characteristic.uuid)) [\(props.joined(separator: ", "))]\(valueText)")
                        for line in descriptorLines { output.emit(line) }
                    }
                }
                var serviceEntry: [String: Any] = [
                    "uuid": CharacteristicLookup.describe(service.service.uuid).split(separator: " ").first.map(String.init) ?? "",
                    "characteristics": jsonCharacteristics,
                ]
                if let name = service.service.uuid.name { serviceEntry["name"] = name }
                jsonServices.append(serviceEntry)
            }
            if json {
                let name = label.hasSuffix(" (\(connection.address))") ? String(label.dropLast(" (\(connection.address))".count)) : nil
                output.emit(JSONObjectLine.line([
                    "type": "gatt", "device": JSONObjectLine.embed(JSONOutput.device(connection.address, name: name)), "services": jsonServices,
                ]))
            }
            await session.warnIfNotAuthenticated(connection)
            try reads.check(label)
        } catch {
            await session.close()
            throw error
        }
        await session.close()
    }
}

/// How many reads of a `gatt` dump were tried and failed: when every one failed the dump is
/// printed but the command fails (exit 2), so scripts do not take an empty dump for success.
struct ReadTally {
    var attempted = 0
    var failed = 0

    /// Throws when reads were tried and none succeeded.
    func check(_ label: String) throws {
        guard attempted > 0, failed == attempted else { return }
        throw CommandFailure("\(label): all \(attempted) reads failed (each error is in the dump above); check the device is still in range and connected, then try again")
    }
}

/// What the values of common descriptors mean, for the `gatt` dump.
enum DescriptorMeaning {
    /// A short reading of `bytes` for descriptor type `uuid`, or nil when it has none.
    static func describe(_ uuid: BluetoothUUID, _ bytes: [UInt8]) -> String? {
        switch uuid {
        case BluetoothUUID(0x2902), BluetoothUUID(0x2903):
            // Client / Server Characteristic Configuration: a u16 of flag bits.
            guard bytes.count == 2 else { return "(expected 2 octets, got \(bytes.count))" }
            let bits = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
            if uuid == BluetoothUUID(0x2903) { return bits & 1 != 0 ? "broadcasts on" : "broadcasts off" }
            var on: [String] = []
            if bits & 1 != 0 { on.append("notifications") }
            if bits & 2 != 0 { on.append("indications") }
            return on.isEmpty ? "not subscribed" : on.joined(separator: " and ") + " on"
        case BluetoothUUID(0x2901):
            // Characteristic User Description: UTF-8 text.
            return String(validating: bytes, as: UTF8.self).map { "\"\($0)\"" }
        case BluetoothUUID(0x2900):
            // Characteristic Extended Properties: bit 0 reliable write, bit 1 writable auxiliaries.
            guard bytes.count == 2 else { return nil }
            var names: [String] = []
            if bytes[0] & 1 != 0 { names.append("reliable write") }
            if bytes[0] & 2 != 0 { names.append("writable auxiliaries") }
            return names.isEmpty ? "none" : names.joined(separator: ", ")
        default:
            return nil
        }
    }
}
