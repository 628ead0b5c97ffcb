import ArgumentParser
import Bluetide
import BluetideCore
import BluetideHost
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
        try await execute(CommandOutput.standardOutput())
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

    func execute(_ output: CommandOutput) async throws {
        let session = try await DeviceSession.open(session)
        do {
            let (connection, label) = try await session.connect(device, timeout: timeout)
            let services: [GATTRemoteService]
            do { services = try await connection.services() } catch {
                throw CommandFailure("\(label): service discovery failed: \(error)")
            }
            var jsonServices: [[String: Any]] = []
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
                        "descriptors": remote.descriptors.map { CharacteristicLookup.describe($0.uuid) },
                    ]
                    if let name = characteristic.uuid.name { entry["name"] = name }
                    var valueText = ""
                    if characteristic.properties.contains(.read) {
                        do {
                            let bytes = try await connection.read(characteristic.uuid)
                            entry["hex"] = bytes.hexString
                            let decoding = try ValueDecoding(uuid: characteristic.uuid, profile: nil)
                            let decoded = decoding.decode(bytes, at: 0)
                            valueText = " = \(bytes.spacedHex)"
                            if let summary = decoded.summary { valueText += "  \(summary)"; entry["summary"] = summary }
                            if let value = decoded.value { entry["decoded"] = JSONObjectLine.embed(value) }
                            if let error = decoded.error { valueText += "  (does not decode: \(error))"; entry["decodeError"] = error }
                        } catch {
                            valueText = "  (read failed: \(error))"
                            entry["readError"] = "\(error)"
                        }
                    }
                    jsonCharacteristics.append(entry)
                    if !json {
                        output.emit("  \(CharacteristicLookup.describe(characteristic.uuid)) [\(props.joined(separator: ", "))]\(valueText)")
                        for descriptor in remote.descriptors {
                            output.emit("    descriptor \(CharacteristicLookup.describe(descriptor.uuid)) (handle \(descriptor.handle))")
                        }
                    }
                }
                var serviceEntry: [String: Any] = [
                    "uuid": CharacteristicLookup.describe(service.service.uuid).split(separator: " ").first.map(String.init) ?? "",
                    "characteristics": jsonCharacteristics,
                ]
                if let name = service.service.uuid.name { serviceEntry["name"] = name }
                jsonServices.append(serviceEntry)
            }
            if json { output.emit(JSONObjectLine.line(["device": label, "services": jsonServices])) }
        } catch {
            await session.close()
            throw error
        }
        await session.close()
    }
}
