/// What `bluetide doctor` found out about this machine's Bluetooth: a snapshot of facts (read by
/// ``DoctorProbe``), so the advice is a pure function of it (``DoctorAdvice/advise(_:)``) that
/// tests drive with made-up machines.
struct DoctorFacts: Sendable, Equatable {
    /// One adapter as the kernel and bluetoothd see it.
    struct Adapter: Sendable, Equatable {
        /// N in hciN.
        var index: Int
        /// The adapter's public address, when known (kernel or bluetoothd).
        var address: String?
        /// The kernel's HCI_UP flag, nil when it could not be read.
        var up: Bool?
        /// bluetoothd's `Powered`, when bluetoothd manages the adapter.
        var powered: Bool?
        /// rfkill's soft block (`rfkill block`), nil without an rfkill entry.
        var softBlocked: Bool?
        /// rfkill's hard block (a switch or the firmware), nil without an rfkill entry.
        var hardBlocked: Bool?
        /// bluetoothd lists it (`/org/bluez/hciN`).
        var managedByBluetoothd: Bool

        init(index: Int, address: String? = nil, up: Bool? = nil, powered: Bool? = nil, softBlocked: Bool? = nil,
             hardBlocked: Bool? = nil, managedByBluetoothd: Bool = false) {
            self.index = index
            self.address = address
            self.up = up
            self.powered = powered
            self.softBlocked = softBlocked
            self.hardBlocked = hardBlocked
            self.managedByBluetoothd = managedByBluetoothd
        }

        var name: String { "hci\(index)" }
    }

    /// The kernel has Bluetooth (`/sys/class/bluetooth` exists).
    var kernelBluetooth: Bool
    var adapters: [Adapter]
    /// Nil when libdbus-1 loads; else the one line naming the package.
    var libdbusProblem: String?
    var libdbusVersion: String?
    /// Nil when the system bus answered; else why not (nil too when libdbus is missing: not tried).
    var systemBusProblem: String?
    /// Whether `org.bluez` has an owner on the bus; nil when the bus could not be asked.
    var bluetoothdRunning: Bool?
    /// BlueZ's version (from an adapter's device ID or `bluetoothd --version`).
    var bluezVersion: String?
    var isRoot: Bool
    var hasNetAdmin: Bool

    /// The bus and bluetoothd can be used by the BlueZ backend.
    var bluezUsable: Bool { libdbusProblem == nil && systemBusProblem == nil && bluetoothdRunning == true }
    /// This process may open a user channel (`hci-socket:N`).
    var mayOpenUserChannel: Bool { isRoot || hasNetAdmin }
}

/// Who holds an adapter.
enum AdapterHolder: String, Sendable, Equatable {
    /// bluetoothd manages it (the system's Bluetooth: headphones, keyboards…).
    case bluetoothd
    /// Up but not bluetoothd's: a user channel (another Bluetide, Bumble) or a raw program.
    case userChannel = "user-channel"
    /// Down and nobody's: `hci-socket:N` can take it.
    case nobody
}

/// What `doctor` recommends: the transport, the exact command line, what to run first and why.
struct DoctorRecommendation: Sendable, Equatable {
    /// The transport spec to use (`bluez:hci0`, `hci-socket:1`, `virtual`).
    var transport: String
    /// Commands to run before (rfkill unblock, power an adapter on or off), in order.
    var before: [String]
    /// The command line to try, with that transport.
    var command: String
    /// Why, in a sentence.
    var reason: String
    /// A one-line headline (e.g. "keep hci0 for the system, give hci1 to Bluetide").
    var summary: String
}

/// The doctor's conclusions: each adapter's holder, remarks, the recommendation.
struct DoctorReport: Sendable, Equatable {
    var holders: [Int: AdapterHolder]
    var notes: [String]
    var recommendation: DoctorRecommendation
}

enum DoctorAdvice {
    /// The command the recommendation shows (any command taking --transport would do).
    static let exampleCommand = "bluetide scan"

    static func holder(of adapter: DoctorFacts.Adapter) -> AdapterHolder {
        if adapter.managedByBluetoothd { return .bluetoothd }
        if adapter.up == true { return .userChannel }
        return .nobody
    }

    /// The advice for `facts`.
    static func advise(_ facts: DoctorFacts) -> DoctorReport {
        var holders: [Int: AdapterHolder] = [:]
        for adapter in facts.adapters { holders[adapter.index] = holder(of: adapter) }
        var notes: [String] = []
        let sudo = facts.mayOpenUserChannel ? "" : "sudo "
        if !facts.mayOpenUserChannel {
            notes.append("this process may not open a user channel (hci-socket:N needs root or CAP_NET_ADMIN): use sudo, or once: sudo setcap cap_net_admin+ep \"$(command -v bluetide)\"")
        }
        if let problem = facts.libdbusProblem {
            notes.append(problem)
        } else if let problem = facts.systemBusProblem {
            notes.append("the D-Bus system bus cannot be reached (\(problem)): the bluez transport needs it")
        } else if facts.bluetoothdRunning == false {
            notes.append("bluetoothd is not running (nobody owns org.bluez on the system bus): start it with sudo systemctl start bluetooth to use the bluez transport")
        }
        for adapter in facts.adapters where adapter.hardBlocked == true {
            notes.append("\(adapter.name) is blocked by a hardware switch (rfkill hard block): switch the radio on")
        }

        guard !facts.adapters.isEmpty else {
            let why = facts.kernelBluetooth
                ? "the kernel lists no Bluetooth adapter (/sys/class/bluetooth is empty): plug one in"
                : "this kernel has no Bluetooth (no /sys/class/bluetooth): load the bluetooth module or plug an adapter in"
            return DoctorReport(holders: holders, notes: notes, recommendation: DoctorRecommendation(
                transport: "virtual", before: [], command: "bluetide demo",
                reason: "\(why); meanwhile the virtual controller runs everything against emulated devices",
                summary: "no adapter: use the virtual controller"))
        }

        /// What must run first so `adapter` can be used: rfkill, power.
        func unblock(_ adapter: DoctorFacts.Adapter) -> [String] {
            adapter.softBlocked == true ? ["rfkill unblock bluetooth"] : []
        }
        let usable = facts.adapters.filter { $0.hardBlocked != true }
        let system = usable.filter { holders[$0.index] == .bluetoothd }
        let free = usable.filter { holders[$0.index] == .nobody }

        // Two adapters, one of them the system's: keep it, give another to Bluetide's own stack.
        if let kept = system.first, usable.count >= 2 {
            let other = free.first ?? system.dropFirst().first ?? usable.first { $0.index != kept.index }
            if let other, holders[other.index] != .userChannel {
                var before = unblock(other)
                if holders[other.index] == .bluetoothd && (other.powered ?? other.up ?? true) {
                    before.append("sudo btmgmt --index \(other.index) power off")
                }
                return DoctorReport(holders: holders, notes: notes, recommendation: DoctorRecommendation(
                    transport: "hci-socket:\(other.index)", before: before,
                    command: "\(sudo)\(exampleCommand) --transport hci-socket:\(other.index)",
                    reason: "\(kept.name) stays with bluetoothd (headphones, keyboards keep working); \(other.name) runs Bluetide's own host stack, with every feature (pairing modes, captures, the peripheral role)",
                    summary: "keep \(kept.name) for the system, give \(other.name) to Bluetide"))
            }
        }
        // The system's adapter, shared through bluetoothd.
        if let shared = system.first, facts.bluezUsable {
            var before = unblock(shared)
            if shared.powered == false {
                before.append(shared.index == system.first?.index && system.count == 1
                    ? "bluetoothctl power on" : "sudo btmgmt --index \(shared.index) power on")
            }
            return DoctorReport(holders: holders, notes: notes, recommendation: DoctorRecommendation(
                transport: "bluez:\(shared.name)", before: before, command: "\(exampleCommand) --transport bluez:\(shared.name)",
                reason: "bluetoothd holds \(shared.name); the bluez transport works through it, so the system keeps its Bluetooth (taking it instead: sudo systemctl stop bluetooth, then --transport hci-socket:\(shared.index))",
                summary: "share \(shared.name) with the system through bluetoothd"))
        }
        // An adapter nobody holds: Bluetide's own stack on a user channel.
        if let taken = free.first {
            return DoctorReport(holders: holders, notes: notes, recommendation: DoctorRecommendation(
                transport: "hci-socket:\(taken.index)", before: unblock(taken),
                command: "\(sudo)\(exampleCommand) --transport hci-socket:\(taken.index)",
                reason: "nobody holds \(taken.name) (down, not bluetoothd's): Bluetide's own host stack takes it on a user channel",
                summary: "give \(taken.name) to Bluetide"))
        }
        // bluetoothd holds it but the bluez transport cannot reach it: take it from bluetoothd.
        if let held = system.first {
            let why = facts.libdbusProblem ?? facts.systemBusProblem.map { "the system bus cannot be reached: \($0)" } ?? "bluetoothd does not answer on the bus"
            return DoctorReport(holders: holders, notes: notes, recommendation: DoctorRecommendation(
                transport: "hci-socket:\(held.index)", before: unblock(held) + ["sudo systemctl stop bluetooth"],
                command: "\(sudo)\(exampleCommand) --transport hci-socket:\(held.index)",
                reason: "bluetoothd holds \(held.name) but the bluez transport cannot be used (\(why)); stopping bluetoothd frees it for Bluetide's own stack (the system loses its Bluetooth until sudo systemctl start bluetooth)",
                summary: "take \(held.name) from bluetoothd"))
        }
        // Every adapter is up in another program's hands (or hard-blocked).
        let busy = facts.adapters.first { holders[$0.index] == .userChannel } ?? facts.adapters[0]
        return DoctorReport(holders: holders, notes: notes, recommendation: DoctorRecommendation(
            transport: "hci-socket:\(busy.index)", before: ["stop the program that holds \(busy.name) (or: sudo hciconfig \(busy.name) down)"],
            command: "\(sudo)\(exampleCommand) --transport hci-socket:\(busy.index)",
            reason: busy.hardBlocked == true
                ? "\(busy.name) is blocked by a hardware switch; once on, nobody else holds it"
                : "\(busy.name) is up and not bluetoothd's: another program holds it on a user channel (another bluetide, Bumble); once it ends, Bluetide can take it",
            summary: "\(busy.name) is busy"))
    }
}
