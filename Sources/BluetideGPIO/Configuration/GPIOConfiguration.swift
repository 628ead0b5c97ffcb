/// Which GPIO implementation the device uses.
public enum GPIOBackendKind: String, Sendable, Equatable, CaseIterable {
    /// The Linux GPIO character device (`/dev/gpiochipN`, uAPI v2).
    case linux
    /// The in-process simulated chip with a simulated athlete.
    case sim
}

/// One reflex-trainer target: an LED (output) and a proximity sensor (input).
public struct GPIOTarget: Sendable, Equatable {
    /// Target index 0–5, as in the Punch service's sequences.
    public var index: Int
    /// Colour of its LED (informational; the coach colours buttons with it).
    public var colour: String
    /// Line offset of the LED.
    public var ledLine: UInt32
    /// Line offset of the sensor.
    public var sensorLine: UInt32

    public init(index: Int, colour: String, ledLine: UInt32, sensorLine: UInt32) {
        self.index = index
        self.colour = colour
        self.ledLine = ledLine
        self.sensorLine = sensorLine
    }
}

/// The device's GPIO configuration: backend, chip, device name, debounce, the six targets'
/// lines and the simulation parameters. Read from a file by ``parse(_:)`` (format in
/// docs/gpio-config.md); ``reflexDefault`` is the map of reflex-trainer.md.
public struct GPIOConfiguration: Sendable, Equatable {
    /// Number of targets of the reflex trainer.
    public static let targetCount = 6
    /// Accepted debounce periods, milliseconds.
    public static let debounceRange = 0...1000
    /// Accepted line offsets.
    public static let lineRange: ClosedRange<UInt32> = 0...511
    /// Longest device name in UTF-8 bytes (fits a legacy advertisement with flags and a service).
    public static let maxDeviceNameBytes = 29

    /// Linux or simulated GPIO.
    public var backend: GPIOBackendKind
    /// Chip device path, e.g. `/dev/gpiochip0`.
    public var chipPath: String
    /// Advertised device name; nil = `Reflex-XXXX` from the address.
    public var deviceName: String?
    /// Sensor debounce period, milliseconds.
    public var debounceMilliseconds: Int
    /// True when a sensor pulls its line low when it detects a hit.
    public var sensorActiveLow: Bool
    /// Bias of the sensor inputs.
    public var sensorBias: GPIOBias
    /// The six targets, index 0–5 in order.
    public var targets: [GPIOTarget]
    /// Simulated athlete behaviour (used by the `sim` backend).
    public var athlete: AthleteBehaviour
    /// Seed of the simulated athlete; nil = a different run each time.
    public var simulationSeed: UInt64?

    public init(
        backend: GPIOBackendKind, chipPath: String, deviceName: String?, debounceMilliseconds: Int,
        sensorActiveLow: Bool, sensorBias: GPIOBias, targets: [GPIOTarget], athlete: AthleteBehaviour,
        simulationSeed: UInt64?
    ) {
        self.backend = backend
        self.chipPath = chipPath
        self.deviceName = deviceName
        self.debounceMilliseconds = debounceMilliseconds
        self.sensorActiveLow = sensorActiveLow
        self.sensorBias = sensorBias
        self.targets = targets
        self.athlete = athlete
        self.simulationSeed = simulationSeed
    }

    /// The default targets of reflex-trainer.md (BCM lines on `/dev/gpiochip0`).
    public static let defaultTargets: [GPIOTarget] = [
        GPIOTarget(index: 0, colour: "red", ledLine: 17, sensorLine: 5),
        GPIOTarget(index: 1, colour: "blue", ledLine: 27, sensorLine: 6),
        GPIOTarget(index: 2, colour: "green", ledLine: 22, sensorLine: 13),
        GPIOTarget(index: 3, colour: "yellow", ledLine: 23, sensorLine: 19),
        GPIOTarget(index: 4, colour: "white", ledLine: 24, sensorLine: 26),
        GPIOTarget(index: 5, colour: "orange", ledLine: 25, sensorLine: 16),
    ]

    /// reflex-trainer.md's GPIO map: Linux backend on `/dev/gpiochip0`, sensors pulled up,
    /// active-low, debounced 20 ms.
    public static let reflexDefault = GPIOConfiguration(
        backend: .linux, chipPath: "/dev/gpiochip0", deviceName: nil, debounceMilliseconds: 20,
        sensorActiveLow: true, sensorBias: .pullUp, targets: defaultTargets, athlete: AthleteBehaviour(),
        simulationSeed: nil)

    /// Settings of an LED line: output, initially off.
    public var ledSettings: GPIOLineSettings { .output(initial: false) }

    /// Settings of a sensor line: input with the configured bias, both edges, debounce, polarity.
    public var sensorSettings: GPIOLineSettings {
        .input(bias: sensorBias, edges: .both, debounceMicroseconds: UInt32(clamping: debounceMilliseconds * 1000),
               activeLow: sensorActiveLow)
    }

    /// One request for all twelve lines: the six LEDs (targets 0–5) then the six sensors.
    public func lineRequest(consumer: String) -> GPIORequest {
        GPIORequest(
            consumer: consumer,
            lines: targets.map { GPIORequestedLine(offset: $0.ledLine, settings: ledSettings) }
                + targets.map { GPIORequestedLine(offset: $0.sensorLine, settings: sensorSettings) })
    }

    /// The target whose sensor is on `line`, if any.
    public func target(forSensorLine line: UInt32) -> GPIOTarget? {
        targets.first { $0.sensorLine == line }
    }

    /// The target whose LED is on `line`, if any.
    public func target(forLEDLine line: UInt32) -> GPIOTarget? {
        targets.first { $0.ledLine == line }
    }
}
