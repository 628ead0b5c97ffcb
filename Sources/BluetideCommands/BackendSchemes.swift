import BluetideBlueZ
import BluetideTransport

/// The backends every command can open by `--transport` besides Bluetide's own host: `bluez`
/// (bluetoothd over D-Bus). Registered once, before the command line is parsed, so the specs'
/// help and errors list them.
enum BackendSchemes {
    static func register() {
        // Already registered (a second run in one process, as the tests do) is fine.
        try? TransportRegistry.register(BlueZBackendScheme())
    }
}
