import Foundation

/// UUIDs and fixed values of the GATT database offered by `Interop/bumble/peripheral.py`
/// (documented in `Interop/bumble/README.md`).
enum BumbleTestService {
    /// A UUID of the Bluetide test family: `B1DExxxx-0000-4000-8000-00000000B1DE`.
    static func uuid(_ short: UInt16) -> String {
        "B1DE" + hex4(short) + "-0000-4000-8000-00000000B1DE"
    }

    /// The custom primary service.
    static let service = uuid(0x0001)
    /// Read: 300 bytes, byte i = i % 256.
    static let longRead = uuid(0x0002)
    /// Read + Write (with response, long writes allowed, up to 512 bytes): reads back the last write.
    static let echo = uuid(0x0003)
    /// Indicate: once subscribed, sends `indicateCount` values `index u16 LE | total u16 LE`.
    static let indicate = uuid(0x0004)
    /// Notify: once subscribed, sends `notifyCount` values `index u16 LE | total u16 LE`.
    static let notify = uuid(0x0005)
    /// Write only: a read gives ATT error 0x02 Read Not Permitted.
    static let writeOnly = uuid(0x0006)
    /// Read only (value "read-only"): a write gives ATT error 0x03 Write Not Permitted.
    static let readOnly = uuid(0x0007)

    /// Heart Rate service and its characteristics (16-bit UUIDs as the scripts print them).
    static let heartRateService = "180D"
    static let heartRateMeasurement = "2A37"
    static let bodySensorLocation = "2A38"
    /// Battery service and Battery Level.
    static let batteryService = "180F"
    static let batteryLevel = "2A19"

    /// ATT error codes the refusing characteristics return.
    static let readNotPermitted = 0x02
    static let writeNotPermitted = 0x03

    /// The 300-byte value of `longRead`.
    static var longReadValue: [UInt8] { (0..<300).map { UInt8($0 % 256) } }

    /// The long value `central.py` writes: byte i = (i * 7 + 3) % 256.
    static func centralLongValue(length: Int) -> [UInt8] {
        (0..<length).map { UInt8(($0 * 7 + 3) % 256) }
    }

    /// The default short value `central.py` writes ("bluetide-short").
    static let centralShortValue: [UInt8] = Array("bluetide-short".utf8)

    private static func hex4(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}

/// Command-line options of `peripheral.py`.
struct BumblePeripheralOptions: Sendable {
    /// Advertised complete local name.
    var name = "Bluetide Peer"
    /// Random static address (top two bits 11).
    var address = "C6:C5:C4:C3:C2:C1"
    /// Seconds before the peripheral gives up (exit 3) if nobody disconnects.
    var timeoutSeconds = 60
    /// Notifications sent on each subscription to the notify characteristic.
    var notifyCount = 5
    /// Indications sent on each subscription to the indicate characteristic.
    var indicateCount = 3
    /// Heart rate measurements sent on each subscription.
    var heartRateCount = 3
    /// Advertise with the controller's public address (`00:00:00:00:00:0N`) instead of `address`.
    var usePublicAddress = false
    /// Anything else to pass through.
    var extraArguments: [String] = []

    /// Arguments after the script path.
    func arguments(port: UInt16) -> [String] {
        [
            String(port), "--name", name, "--address", address, "--timeout", String(timeoutSeconds),
            "--notify-count", String(notifyCount), "--indicate-count", String(indicateCount),
            "--heart-rate-count", String(heartRateCount), "--exit-on-stdin-eof",
        ] + (usePublicAddress ? ["--public"] : []) + extraArguments
    }
}

/// Command-line options of `central.py`.
struct BumbleCentralOptions: Sendable {
    /// Whom to connect to.
    enum Target: Sendable {
        /// Scan for this advertised name.
        case name(String)
        /// Connect straight to `AA:BB:CC:DD:EE:FF/R` (random) or `/P` (public).
        case address(String)
    }

    /// One subscription and the number of values to wait for.
    struct Subscription: Sendable {
        var uuid: String
        var count: Int
    }

    var target: Target
    /// The central's own random static address.
    var ownAddress = "F0:F0:F0:F0:F0:F0"
    /// Connect with the controller's public address instead of `ownAddress`.
    var usePublicAddress = false
    /// ATT MTU requested in the exchange (23 forces Read Blob and Prepare/Execute Write).
    var mtu = 517
    /// Characteristics that get the short value.
    var writeShort: [String] = []
    /// Characteristics that get the long value.
    var writeLong: [String] = []
    /// Length of the long value.
    var longLength = 400
    /// Subscriptions, in order.
    var subscribe: [Subscription] = []
    /// Characteristics whose read must fail (the ATT error is recorded).
    var readDenied: [String] = []
    /// Characteristics whose write must fail (the ATT error is recorded).
    var writeDenied: [String] = []
    /// Seconds allowed per step, to connect, and for the whole run.
    var stepTimeoutSeconds = 20
    var connectTimeoutSeconds = 20
    var totalTimeoutSeconds = 60
    /// Anything else to pass through.
    var extraArguments: [String] = []

    /// The script that exercises every feature of the test peripheral (with its default counts).
    static func fullScript(target: Target, peripheral: BumblePeripheralOptions = .init()) -> Self {
        var options = BumbleCentralOptions(target: target)
        options.writeShort = [BumbleTestService.echo]
        options.writeLong = [BumbleTestService.echo]
        options.subscribe = [
            Subscription(uuid: BumbleTestService.notify, count: peripheral.notifyCount),
            Subscription(uuid: BumbleTestService.indicate, count: peripheral.indicateCount),
            Subscription(uuid: BumbleTestService.heartRateMeasurement, count: peripheral.heartRateCount),
            Subscription(uuid: BumbleTestService.batteryLevel, count: 1),
        ]
        options.readDenied = [BumbleTestService.writeOnly]
        options.writeDenied = [BumbleTestService.readOnly]
        return options
    }

    /// Arguments after the script path.
    func arguments(port: UInt16) -> [String] {
        var arguments = [String(port)]
        switch target {
        case .name(let name): arguments += ["--name", name]
        case .address(let address): arguments += ["--address", address]
        }
        arguments += ["--own-address", ownAddress, "--mtu", String(mtu), "--long-length", String(longLength)]
        if usePublicAddress { arguments.append("--public") }
        for uuid in writeShort { arguments += ["--write-short", uuid] }
        for uuid in writeLong { arguments += ["--write-long", uuid] }
        for subscription in subscribe { arguments += ["--subscribe", "\(subscription.uuid)=\(subscription.count)"] }
        for uuid in readDenied { arguments += ["--read-denied", uuid] }
        for uuid in writeDenied { arguments += ["--write-denied", uuid] }
        arguments += [
            "--step-timeout", String(stepTimeoutSeconds), "--connect-timeout", String(connectTimeoutSeconds),
            "--scan-timeout", String(connectTimeoutSeconds), "--timeout", String(totalTimeoutSeconds),
            "--exit-on-stdin-eof",
        ]
        return arguments + extraArguments
    }
}

/// The final `{"step": "summary", ...}` line of `central.py`.
struct BumbleCentralSummary: Decodable, Sendable {
    /// One write and its read-back.
    struct Write: Decodable, Sendable {
        let kind: String
        let length: Int
        let hex: String
        let readbackHex: String?
        let readbackMatches: Bool?
    }

    /// What arrived on one subscription.
    struct Subscription: Decodable, Sendable {
        let kind: String
        let count: Int
        let expected: Int?
        let values: [String]
    }

    let ok: Bool
    /// `AA:BB:CC:DD:EE:FF/R` or `/P`.
    let peer: String?
    let mtu: Int?
    /// Primary service UUIDs in discovery order.
    let services: [String]
    let characteristicCount: Int
    let descriptorCount: Int
    /// Hex value of each readable characteristic, by UUID.
    let reads: [String: String]
    /// ATT error of readable characteristics whose read failed, by UUID.
    let readErrors: [String: Int]
    let writes: [String: [Write]]
    let subscriptions: [String: Subscription]
    /// ATT error code of each refused read (`nil` when the read succeeded).
    let readDenied: [String: Int?]
    /// ATT error code of each refused write (`nil` when the write succeeded).
    let writeDenied: [String: Int?]
    let disconnectReason: Int?

    /// Decodes the summary from its JSON line.
    init(line: String) throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        self = try decoder.decode(Self.self, from: Data(line.utf8))
    }
}

extension Array where Element == UInt8 {
    /// Lower-case hex, as the scripts print values.
    var bumbleHex: String {
        map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }
}
