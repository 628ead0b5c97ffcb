import Bluetide
import Synchronization

/// The names of the devices a command found ("Bluetide HRM (C0:…/R)"), by address, so
/// pairing questions and error lines name a device the way the user asked for it.
final class DeviceLabels: Sendable {
    private let names = Mutex<[UInt64: String]>([:])

    /// Remembers `address`, advertised as `name` (if it has one).
    func remember(_ address: BluetoothAddress, name: String?) {
        names.withLock { names in
            if let name { names[address.value] = "\(name) (\(address))" } else if names[address.value] == nil { names[address.value] = "\(address)" }
        }
    }

    /// "NAME (ADDRESS)", the address when it had no name, "the device" when not known.
    func label(_ address: BluetoothAddress?) -> String {
        guard let address else { return "the device" }
        return names.withLock { $0[address.value] } ?? "\(address)"
    }
}
