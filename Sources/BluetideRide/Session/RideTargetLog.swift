import BluetideBase
import BluetideProfiles

/// How a ride's targets are kept in its value log, so an export and a replay show them: each
/// target is recorded as the `write` it is on the trainer's control characteristic (FTMS control
/// point 0x2AD9: Set Target Power, Set Indoor Bike Simulation, Set Target Resistance Level,
/// Reset; FE-C over BLE `6E40FEC3-…`: page 49 target power, 51 track resistance, 48 basic
/// resistance), and read back from those writes. No I/O.
///
/// FTMS resistance levels are in the trainer's own units: the supported range (0x2AD6) is
/// recorded as a `read` before the first such write, and a level is turned back into a percent
/// of the last range read (0…100.0 when none was).
public enum RideTargetLog {
    /// One value to record: on `characteristic` of the trainer, by `operation`.
    public struct Entry: Sendable, Hashable {
        /// The characteristic.
        public var characteristic: BluetoothUUID
        /// The bytes.
        public var bytes: [UInt8]
        /// Whether it is the trainer's value read (the resistance range) rather than our write.
        public var isRead: Bool
    }

    /// The entries that record `target` (nil: back to free riding) asked of a trainer of `role`;
    /// `parameters` are the full simulation parameters when a grade came with them;
    /// `resistanceRange` the FTMS trainer's supported range, when it serves one.
    public static func entries(
        for target: RideTarget?, role: RideDeviceRole, parameters: SimulationParameters? = nil,
        resistanceRange: SupportedResistanceLevelRange? = nil
    ) -> [Entry] {
        switch role {
        case .ftmsTrainer:
            let request: FitnessMachineControlPointRequest
            var entries: [Entry] = []
            switch target {
            case nil: request = .reset
            case let .power(watts): request = .setTargetPower(watts: Int16(clamping: watts))
            case let .grade(percent):
                let p = parameters ?? SimulationParameters(gradePercent: percent)
                request = .setIndoorBikeSimulation(parameters: IndoorBikeSimulationParameters(
                    windSpeedMillimetersPerSecond: Int16(clamping: Int((p.windSpeedMetersPerSecond * 1000).rounded())),
                    gradeHundredthPercent: Int16(clamping: Int((percent * 100).rounded())),
                    rollingResistanceTenThousandths: UInt8(clamping: Int((p.rollingResistance * 10_000).rounded())),
                    windResistanceHundredthKgPerMeter: UInt8(clamping: Int((p.windResistanceKgPerMeter * 100).rounded()))))
            case let .resistance(percent):
                if let resistanceRange { entries.append(Entry(characteristic: .supportedResistanceLevelRange, bytes: resistanceRange.bytes, isRead: true)) }
                let low = Double(resistanceRange?.minimumRaw ?? 0), high = Double(resistanceRange?.maximumRaw ?? 1000)
                let raw = low + (high - low) * min(max(percent, 0), 100) / 100
                request = .setTargetResistanceLevel(tenths: UInt8(clamping: Int(raw.rounded())))
            }
            return entries + [Entry(characteristic: .fitnessMachineControlPoint, bytes: request.bytes, isRead: false)]
        case .fecTrainer:
            let page: FECPage
            switch target {
            case nil: page = .trackResistance(FECTrackResistance(gradePercent: 0))
            case let .power(watts): page = .targetPower(FECTargetPower(watts: Double(min(max(watts, 0), 4000))))
            case let .grade(percent): page = .trackResistance(FECTrackResistance(gradePercent: min(max(percent, -200), 200)))
            case let .resistance(percent):
                page = .basicResistance(FECBasicResistance(totalResistanceHalfPercent: UInt8(clamping: Int((min(max(percent, 0), 100) * 2).rounded()))))
            }
            return [Entry(characteristic: .tacxFECWrite, bytes: FECFrame.command(page).bytes, isRead: false)]
        default:
            return []
        }
    }

    /// Reads targets back from a recording's trainer writes, in order.
    public struct Reader: Sendable {
        private var resistanceRange: SupportedResistanceLevelRange?

        /// A reader that has seen nothing yet.
        public init() {}

        /// The characteristics whose values this reader takes.
        public static let characteristics: Set<BluetoothUUID> = [.fitnessMachineControlPoint, .tacxFECWrite, .supportedResistanceLevelRange]

        /// The target a value sets: `.some(target)` (a nil target: free riding), or nil when
        /// the value sets none (a request for control, a range read, anything undecodable).
        public mutating func target(characteristic: BluetoothUUID, bytes: [UInt8], isWrite: Bool) -> RideTarget?? {
            switch characteristic {
            case .supportedResistanceLevelRange:
                if !isWrite, let range = try? SupportedResistanceLevelRange(bytes: bytes) { resistanceRange = range }
                return nil
            case .fitnessMachineControlPoint where isWrite:
                guard let request = try? FitnessMachineControlPointRequest(bytes: bytes) else { return nil }
                switch request {
                case .reset: return .some(nil)
                case let .setTargetPower(watts): return .power(watts: Int(watts))
                case let .setIndoorBikeSimulation(p): return .grade(percent: p.gradePercent)
                case let .setTargetInclination(tenths): return .grade(percent: Double(tenths) / 10)
                case let .setTargetResistanceLevel(tenths):
                    let low = Double(resistanceRange?.minimumRaw ?? 0), high = Double(resistanceRange?.maximumRaw ?? 1000)
                    guard high > low else { return nil }
                    let percent = (Double(tenths) - low) / (high - low) * 100
                    return .resistance(percent: (min(max(percent, 0), 100) * 10).rounded() / 10)
                default: return nil
                }
            case .tacxFECWrite where isWrite:
                guard let frame = try? FECFrame(bytes: bytes) else { return nil }
                switch frame.page {
                case let .targetPower(p): return .power(watts: Int(p.watts.rounded()))
                case let .trackResistance(p): return .grade(percent: p.gradePercent)
                case let .basicResistance(p): return .resistance(percent: p.resistancePercent)
                default: return nil
                }
            default:
                return nil
            }
        }
    }
}
