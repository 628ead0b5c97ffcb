import Bluetide
import BluetideSerial
import Foundation

/// The RSSI-ranked list of found devices: a coloured bar (green strong … red weak), RSSI, name,
/// address and UART services.
enum UARTDeviceList {
    /// Width of a full-strength bar, characters.
    static let barWidth = 10

    /// The UART services `device` advertises as `services` entries: `uuid` and `name`.
    static func uartServices(_ device: Advertisement) -> [JSONOutputValue] {
        let known: [(uuid: BluetoothUUID, name: String)] = [(SerialUUID.hm10Service, "HM-10"), (SerialUUID.nordicUARTService, "Nordic UART")]
        return known.filter { device.serviceUUIDs.contains($0.uuid) }.map {
            ["uuid": .string($0.uuid.shortString), "name": .string($0.name)]
        }
    }

    /// One row per device, in the order given (strongest first from the scanner).
    static func rows(_ devices: [Advertisement], color: Bool, json: Bool) -> [String] {
        devices.enumerated().map { index, device in
            let services = SerialScanner.serviceNames(device)
            if json {
                var found = JSONOutput.device(device.address, name: device.name)
                if case var .object(fields) = found {
                    fields["rssiDbm"] = .integer(Int64(device.rssi))
                    found = .object(fields)
                }
                return JSONOutput.line("uart-device", [
                    "index": .integer(Int64(index + 1)), "device": found,
                    "services": .array(Self.uartServices(device)), "colour": .string(device.signalColor.hex),
                ])
            }
            let level = device.signalColor.level
            let filled = max(1, Int((level * Double(barWidth)).rounded()))
            let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: barWidth - filled)
            let shown = color ? device.signalColor.colorize(bar) : bar
            let name = device.name ?? "(no name)"
            let padded = name.count < 16 ? name + String(repeating: " ", count: 16 - name.count) : name
            return "\(index + 1). \(shown) \(device.rssi) dBm  \(padded) \(device.address)  \(services.isEmpty ? "-" : services.joined(separator: ", "))"
        }
    }
}

