import BluetideBase

/// The four scenarios of Bumble's bench app, by Bumble's names. Each runs against its
/// ``peer`` on the other side: `send` ↔ `receive` (throughput), `ping` ↔ `pong` (round trips).
public enum BumbleBenchScenario: String, CaseIterable, Sendable {
    /// Sends RESET, then `packet-count` SEQUENCE packets (the last flagged), and waits for the ACK.
    case send
    /// Counts the SEQUENCE packets that arrive and answers the last one with an ACK.
    case receive
    /// Sends SEQUENCE packets and times the ACK of each one (round-trip time).
    case ping
    /// Answers every SEQUENCE packet with an ACK.
    case pong

    /// The scenario the other side runs.
    public var peer: Self {
        switch self {
        case .send: .receive
        case .receive: .send
        case .ping: .pong
        case .pong: .ping
        }
    }

    /// True for the side that originates the SEQUENCE packets (`send`, `ping`).
    public var originatesPackets: Bool { self == .send || self == .ping }
}

/// The two roles of Bumble's bench app.
public enum BumbleBenchRole: String, Sendable {
    /// Scans for and connects to the peripheral; GATT client.
    case central
    /// Advertises and waits for the central; GATT server with the bench service.
    case peripheral

    /// Bumble's default scenario for the role.
    public var defaultScenario: BumbleBenchScenario { self == .central ? .send : .receive }
}

/// What one side of a bench run does, with Bumble's defaults.
public struct BumbleBenchSettings: Sendable, Equatable {
    /// The scenario this side runs.
    public var scenario: BumbleBenchScenario
    /// SEQUENCE packets a `send` or `ping` side sends.
    public var packetCount = 10
    /// Size of each SEQUENCE packet, octets, 10-byte header included (Bumble: 10...8192; over
    /// GATT at most ATT MTU − 3).
    public var packetSize = 500
    /// Milliseconds between packets; 0 sends as fast as the link's buffers allow.
    public var paceMilliseconds = 0.0
    /// Seconds a `send` or `ping` side waits once ready, before its RESET.
    public var startDelaySeconds = 1.0
    /// Keep serving runs after the last packet (`receive`, `pong`) until the link ends.
    public var linger = false
    /// Further runs after the first (`send`, `ping`); the peer must `--linger`.
    public var repeatCount = 0
    /// Seconds between repeated runs.
    public var repeatDelaySeconds = 1.0
    /// Seconds without an expected packet after which the run fails.
    public var stallSeconds = 10.0

    /// The allowed packet sizes (Bumble's range).
    public static let packetSizeRange = 10...8192

    /// Checks the numbers, naming the option at fault.
    /// Settings for `scenario` with Bumble's defaults for the rest.
    public init(
        scenario: BumbleBenchScenario, packetCount: Int = 10, packetSize: Int = 500, paceMilliseconds: Double = 0,
        startDelaySeconds: Double = 1, linger: Bool = false, repeatCount: Int = 0, repeatDelaySeconds: Double = 1,
        stallSeconds: Double = 10
    ) {
        self.scenario = scenario
        self.packetCount = packetCount
        self.packetSize = packetSize
        self.paceMilliseconds = paceMilliseconds
        self.startDelaySeconds = startDelaySeconds
        self.linger = linger
        self.repeatCount = repeatCount
        self.repeatDelaySeconds = repeatDelaySeconds
        self.stallSeconds = stallSeconds
    }

    public func validate() throws(BenchFailure) {
        guard Self.packetSizeRange.contains(packetSize) else {
            throw BenchFailure("--packet-size \(packetSize): expected \(Self.packetSizeRange.lowerBound) to \(Self.packetSizeRange.upperBound) octets (the 10-octet header included)")
        }
        guard packetCount > 0, packetCount <= Int(UInt32.max) else {
            throw BenchFailure("--packet-count \(packetCount): expected a positive number of packets")
        }
        if scenario == .ping, packetCount < 2 {
            throw BenchFailure("--packet-count \(packetCount): ping needs at least 2 packets for its statistics")
        }
        guard paceMilliseconds >= 0, paceMilliseconds.isFinite else {
            throw BenchFailure("--pace \(paceMilliseconds): expected 0 (as fast as possible) or a positive number of milliseconds")
        }
        guard startDelaySeconds >= 0, startDelaySeconds.isFinite else {
            throw BenchFailure("--start-delay \(startDelaySeconds): expected 0 or more seconds")
        }
        guard repeatCount >= 0, repeatCount <= 10_000 else {
            throw BenchFailure("--repeat \(repeatCount): expected 0 (one run) to 10000 further runs")
        }
        guard repeatDelaySeconds >= 0, repeatDelaySeconds.isFinite else {
            throw BenchFailure("--repeat-delay \(repeatDelaySeconds): expected 0 or more seconds")
        }
        guard stallSeconds > 0, stallSeconds.isFinite else {
            throw BenchFailure("--stall-timeout \(stallSeconds): expected a positive number of seconds")
        }
    }
}

/// The bench GATT service of Bumble's bench app (`gatt-server` mode).
public enum BumbleBenchService {
    /// The service.
    public static let service = try! BluetoothUUID("50DB505C-8AC4-4738-8448-3B1D9CC09CC5")
    /// TX: the client writes packets here (Write Command, although the property says Write).
    public static let tx = try! BluetoothUUID("E789C754-41A1-45F4-A948-A0A1A90DBA53")
    /// RX: the server notifies packets here.
    public static let rx = try! BluetoothUUID("016A2CC7-E14B-4819-935F-1F56EAE4098D")

    /// Bumble's default peripheral address (random static) and name.
    public static let peripheralAddress = "F1:F1:F1:F1:F1:F1"
    public static let peripheralName = "Speed Peripheral"
    /// Bumble's default central address (random static).
    public static let centralAddress = "F0:F0:F0:F0:F0:F0"
}
