import Bluetide
import BluetideSerial
import Foundation

/// The RSSI-ranked list of found devices: a coloured bar (green strong … red weak), RSSI, name,
/// address and UART services.
enum UARTDeviceList {
    /// Width of a full-strength bar, characters.
    static let barWidth = 10

    /// One row per device, in the order given (strongest first from the scanner).
    static func rows(_ devices: [Advertisement], color: Bool, json: Bool) -> [String] {
        devices.enumerated().map { index, device in
            let services = SerialScanner.serviceNames(device)
            if json {
                return JSONObjectLine.line([
                    "index": index + 1, "name": device.name.map { $0 as Any } ?? NSNull(), "address": "\(device.address)",
                    "rssi": device.rssi, "services": services, "color": device.signalColor.hex,
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

