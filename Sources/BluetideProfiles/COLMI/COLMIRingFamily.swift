import BluetideBase
import Foundation

/// One member of the COLMI / Yawell ring family that speaks this protocol, with what sets it
/// apart, as far as public sources show (docs/ring.md "The family" names each source).
public struct COLMIRingModelInfo: Hashable, Sendable, CustomStringConvertible {
    /// Short id, e.g. `r02`; the emulator profile is `colmi-<id>`.
    public let id: String
    /// E.g. `COLMI R02`.
    public let displayName: String
    /// Regular expression the advertised name matches (Gadgetbridge's coordinator patterns).
    public let namePattern: String
    /// What an advertised name starts with, before the last two address bytes (`R02_` in `R02_341C`).
    public var namePrefix: String {
        namePattern.replacingOccurrences(of: "^", with: "").replacingOccurrences(of: "(COLMI )?", with: "")
            .replacingOccurrences(of: "(COLMI R10_|R10_)", with: "COLMI R10_").replacingOccurrences(of: "R11C?_", with: "R11_")
    }
    /// Has a screen: display settings (`05`) apply.
    public let hasScreen: Bool
    /// Has a skin-temperature sensor: the `3A` switch and `BC 25` history apply.
    public let hasTemperatureSensor: Bool
    /// The sleep big-data request it answers: `ff` works on the R02; an R10 ignored it and
    /// answered `ff 01` (PulseLoopAndroid PR #26).
    public let sleepRequest: COLMIBigDataFrame.RequestVariant
    /// Newer firmware of this model may ask for an OS bond (`3C` flag 0x08; PulseLoopAndroid PR #15).
    public let mayAskForBond: Bool
    /// What else is known, in one line.
    public let notes: String

    public var description: String { displayName }

    public init(
        id: String, displayName: String, namePattern: String, hasScreen: Bool = false, hasTemperatureSensor: Bool = false,
        sleepRequest: COLMIBigDataFrame.RequestVariant = .all, mayAskForBond: Bool = false, notes: String
    ) {
        self.id = id
        self.displayName = displayName
        self.namePattern = namePattern
        self.hasScreen = hasScreen
        self.hasTemperatureSensor = hasTemperatureSensor
        self.sleepRequest = sleepRequest
        self.mayAskForBond = mayAskForBond
        self.notes = notes
    }

    /// Whether `name` (the advertised name) is this model's.
    public func matches(name: String) -> Bool { name.range(of: namePattern, options: .regularExpression) != nil }

    /// The family, in the order of the table in docs/ring.md.
    public static let family: [COLMIRingModelInfo] = [
        COLMIRingModelInfo(
            id: "r02", displayName: "COLMI R02", namePattern: "^R02_",
            notes: "BlueX RF03 SoC, VC30F HR/SpO2 sensor, STK8321 accelerometer, 17 mAh; newer RY02/RT02 units use a Realtek RTL8762 with the same commands"),
        COLMIRingModelInfo(id: "r03", displayName: "COLMI R03", namePattern: "^R03_", notes: "handled like the R02 by Gadgetbridge; same hardware family per atc1441"),
        COLMIRingModelInfo(id: "r06", displayName: "COLMI R06", namePattern: "^R06_", notes: "handled like the R02 by Gadgetbridge; same hardware family per atc1441"),
        COLMIRingModelInfo(id: "r07", displayName: "COLMI R07", namePattern: "^COLMI R07_", notes: "handled like the R02 by Gadgetbridge"),
        COLMIRingModelInfo(
            id: "r09", displayName: "COLMI R09", namePattern: "^(COLMI )?R09_", hasTemperatureSensor: true, mayAskForBond: true,
            notes: "RT09_ firmware logs heart rate only after the 7-field 16 write and may ask for a bond (PulseLoopAndroid PR #15)"),
        COLMIRingModelInfo(
            id: "r10", displayName: "COLMI R10", namePattern: "^(COLMI R10_|R10_)", hasTemperatureSensor: true, sleepRequest: .allProtocolV1,
            notes: "RT03CR_ firmware answers the sleep request only with the 2-byte payload ff 01 (PulseLoopAndroid PR #26); scanning by name fixed in colmi_r02_client #30"),
        COLMIRingModelInfo(
            id: "r11", displayName: "Yawell R11", namePattern: "^R11C?_", hasScreen: true,
            notes: "Gadgetbridge's R11/R11C (with a screen); a COLMI-branded R11 reported in PulseLoopAndroid #29 speaks another protocol (CRP) and is not supported"),
        COLMIRingModelInfo(id: "r12", displayName: "COLMI R12", namePattern: "^COLMI R12_", hasScreen: true, notes: "has a screen (Gadgetbridge's display settings); asked about in colmi_r02_client #49"),
        COLMIRingModelInfo(id: "h59", displayName: "H59", namePattern: "^H59_", notes: "unbranded; handled by Gadgetbridge's ring driver"),
    ]

    /// The family member whose name pattern `name` matches; nil for an unknown name.
    public static func matching(name: String) -> COLMIRingModelInfo? { family.first { $0.matches(name: name) } }

    /// The member with this id (`r10`), nil when none.
    public static func withID(_ id: String) -> COLMIRingModelInfo? { family.first { $0.id == id.lowercased() } }
}
