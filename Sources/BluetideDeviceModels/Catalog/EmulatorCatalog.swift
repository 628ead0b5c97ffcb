import BluetideProfiles

/// One emulated device the catalog can build.
public struct EmulatorDescriptor: Sendable {
    /// Name used on the command line, e.g. `ftms-bike`.
    public let name: String
    /// One line saying what it emulates.
    public let summary: String
    /// Builds a fresh model.
    public let make: @Sendable (_ seed: UInt64, _ options: EmulatorOptions) -> any DeviceModel

    /// Memberwise initialiser.
    public init(name: String, summary: String, make: @escaping @Sendable (UInt64, EmulatorOptions) -> any DeviceModel) {
        self.name = name
        self.summary = summary
        self.make = make
    }
}

/// The emulated devices `bluetide emulate` can run, by name.
public enum EmulatorCatalog {
    /// Every emulator, in display order.
    public static let all: [EmulatorDescriptor] = [
        EmulatorDescriptor(name: "heart-rate", summary: "Heart-rate strap: 60–180 bpm with matching RR intervals, energy, body location, battery") {
            HeartRateModel(seed: $0, options: $1)
        },
        EmulatorDescriptor(name: "battery", summary: "Battery service whose level drains slowly and is notified on change") {
            BatteryModel(seed: $0, options: $1)
        },
        EmulatorDescriptor(name: "csc", summary: "Speed/cadence sensor: wheel and crank revolutions timed in real 1/1024 s, SC control point") {
            CSCModel(seed: $0, options: $1)
        },
        EmulatorDescriptor(name: "cycling-power", summary: "Power meter: power, crank (1/1024 s) and wheel (1/2048 s) data, energy, control point") {
            CyclingPowerModel(seed: $0, options: $1)
        },
        EmulatorDescriptor(name: "ftms-bike", summary: "FTMS smart trainer: indoor bike data, control point with ERG and simulation, status") {
            FTMSBikeModel(seed: $0, options: $1)
        },
        EmulatorDescriptor(name: "tacx-fec", summary: "Tacx FE-C over BLE trainer: pages 16/25 at 4 Hz, obeys pages 48–51 and 55, answers page 70") {
            TacxFECModel(seed: $0, options: $1)
        },
        EmulatorDescriptor(name: "colmi-r02", summary: "COLMI R02 ring: every documented command with consistent synthetic HR, steps, sleep, SpO2") {
            COLMIRingModel(seed: $0, options: $1)
        },
        EmulatorDescriptor(name: "colmi-r03", summary: "COLMI R03 ring: the R02's protocol under its own name (R03_…)") {
            COLMIRingModel(seed: $0, options: $1, model: COLMIRingModelInfo.withID("r03") ?? COLMIRingModelInfo.family[0])
        },
        EmulatorDescriptor(name: "colmi-r06", summary: "COLMI R06 ring: the R02's protocol under its own name (R06_…)") {
            COLMIRingModel(seed: $0, options: $1, model: COLMIRingModelInfo.withID("r06") ?? COLMIRingModelInfo.family[0])
        },
        EmulatorDescriptor(name: "colmi-r09", summary: "COLMI R09 ring: temperature sensor; asks for a bond (3C flag 0x08) like newer firmware") {
            COLMIRingModel(seed: $0, options: $1, model: COLMIRingModelInfo.withID("r09") ?? COLMIRingModelInfo.family[0])
        },
        EmulatorDescriptor(name: "colmi-r10", summary: "COLMI R10 ring: temperature sensor; answers the sleep request only in its 2-byte form") {
            COLMIRingModel(seed: $0, options: $1, model: COLMIRingModelInfo.withID("r10") ?? COLMIRingModelInfo.family[0])
        },
        EmulatorDescriptor(name: "colmi-r11", summary: "Yawell R11 ring with a screen (display settings)") {
            COLMIRingModel(seed: $0, options: $1, model: COLMIRingModelInfo.withID("r11") ?? COLMIRingModelInfo.family[0])
        },
        EmulatorDescriptor(name: "colmi-r12", summary: "COLMI R12 ring with a screen (display settings)") {
            COLMIRingModel(seed: $0, options: $1, model: COLMIRingModelInfo.withID("r12") ?? COLMIRingModelInfo.family[0])
        },
        EmulatorDescriptor(name: "colmi-h59", summary: "H59 ring: the R02's protocol under its own name (H59_…)") {
            COLMIRingModel(seed: $0, options: $1, model: COLMIRingModelInfo.withID("h59") ?? COLMIRingModelInfo.family[0])
        },
        EmulatorDescriptor(name: "hm10", summary: "HM-10 serial module (FFE0/FFE1): echoes writes as notifications, answers AT commands") {
            HM10Model(seed: $0, options: $1)
        },
        EmulatorDescriptor(name: "nus", summary: "Nordic UART Service device (6E400001): echoes RX writes as TX notifications of MTU − 3 bytes") {
            NordicUARTModel(seed: $0, options: $1)
        },
        EmulatorDescriptor(name: "punch", summary: "Reflex trainer Punch service with a simulated athlete (reaction times, misses, wrong hits)") {
            PunchTrainerModel(seed: $0, options: $1)
        },
    ]

    /// The emulator called `name`, if any.
    public static func named(_ name: String) -> EmulatorDescriptor? { all.first { $0.name == name } }

    /// Builds the emulator called `name`; nil for an unknown name.
    public static func make(name: String, seed: UInt64 = 0, options: EmulatorOptions = EmulatorOptions()) -> (any DeviceModel)? {
        named(name)?.make(seed, options)
    }
}
