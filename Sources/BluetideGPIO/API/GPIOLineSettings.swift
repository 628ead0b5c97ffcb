/// Which internal resistor biases a line when nothing drives it.
public enum GPIOBias: String, Sendable, Equatable, CaseIterable {
    /// Leave the bias as the chip has it (no bias flag sent).
    case asIs = "as-is"
    /// Pull the line up (an open sensor reads high).
    case pullUp = "pull-up"
    /// Pull the line down (an open sensor reads low).
    case pullDown = "pull-down"
    /// Explicitly disable any bias.
    case disabled = "disabled"
}

/// Which transitions of an input produce ``GPIOEdge`` events.
///
/// Edges are *logical*, as the kernel reports them: on an active-low line, a physical
/// high→low transition is a rising edge (the line became active).
public enum GPIOEdgeDetection: String, Sendable, Equatable, CaseIterable {
    /// No edge events.
    case none
    /// Inactive → active transitions only.
    case rising
    /// Active → inactive transitions only.
    case falling
    /// Both transitions.
    case both
}

/// How an output drives its line.
public enum GPIODrive: String, Sendable, Equatable, CaseIterable {
    /// Drives both high and low (the default).
    case pushPull = "push-pull"
    /// Drives low only; high is left floating (needs a pull-up).
    case openDrain = "open-drain"
    /// Drives high only; low is left floating (needs a pull-down).
    case openSource = "open-source"
}

/// Direction of a requested line.
public enum GPIODirection: Sendable, Equatable {
    /// An input; its value is read, its transitions may be reported as edges.
    case input
    /// An output, set to `initial` (logical value) as soon as the request is granted.
    case output(initial: Bool)
}

/// How one line is to be configured when it is requested.
///
/// Values are logical: with `activeLow`, `true` means the physical line is low.
public struct GPIOLineSettings: Sendable, Equatable {
    /// Input or output (with its initial value).
    public var direction: GPIODirection
    /// Internal pull resistor.
    public var bias: GPIOBias
    /// Edge events to report (inputs only).
    public var edges: GPIOEdgeDetection
    /// Debounce period in microseconds (inputs only; 0 = none). The kernel debounces in
    /// software when the hardware cannot.
    public var debounceMicroseconds: UInt32
    /// True when the line is active (logical 1) at a low physical level.
    public var activeLow: Bool
    /// Output drive mode (outputs only).
    public var drive: GPIODrive

    public init(
        direction: GPIODirection, bias: GPIOBias = .asIs, edges: GPIOEdgeDetection = .none,
        debounceMicroseconds: UInt32 = 0, activeLow: Bool = false, drive: GPIODrive = .pushPull
    ) {
        self.direction = direction
        self.bias = bias
        self.edges = edges
        self.debounceMicroseconds = debounceMicroseconds
        self.activeLow = activeLow
        self.drive = drive
    }

    /// An output line starting at the logical value `initial`.
    public static func output(initial: Bool = false, activeLow: Bool = false, drive: GPIODrive = .pushPull) -> GPIOLineSettings {
        GPIOLineSettings(direction: .output(initial: initial), activeLow: activeLow, drive: drive)
    }

    /// An input line with the given bias, edge detection and debounce period (µs).
    public static func input(
        bias: GPIOBias = .asIs, edges: GPIOEdgeDetection = .none, debounceMicroseconds: UInt32 = 0,
        activeLow: Bool = false
    ) -> GPIOLineSettings {
        GPIOLineSettings(
            direction: .input, bias: bias, edges: edges, debounceMicroseconds: debounceMicroseconds,
            activeLow: activeLow)
    }

    /// True for outputs.
    public var isOutput: Bool {
        if case .output = direction { return true }
        return false
    }
}

/// One line of a request: its offset on the chip and its settings.
public struct GPIORequestedLine: Sendable, Equatable {
    /// Line offset on the chip (the BCM number on a Raspberry Pi's main chip).
    public var offset: UInt32
    /// How to configure it.
    public var settings: GPIOLineSettings

    public init(offset: UInt32, settings: GPIOLineSettings) {
        self.offset = offset
        self.settings = settings
    }
}

/// A set of lines to request together from one chip, under one consumer label.
///
/// The order of `lines` is the order of the request: values and bitmaps refer to it.
public struct GPIORequest: Sendable, Equatable {
    /// The consumer label the kernel shows for these lines (at most 31 UTF-8 bytes).
    public var consumer: String
    /// The lines, in request order (at most 64, no offset twice).
    public var lines: [GPIORequestedLine]
    /// Kernel edge-event buffer size in events (0 = the kernel default of 16 per line).
    public var eventBufferSize: UInt32

    public init(consumer: String, lines: [GPIORequestedLine], eventBufferSize: UInt32 = 0) {
        self.consumer = consumer
        self.lines = lines
        self.eventBufferSize = eventBufferSize
    }

    /// The requested offsets, in request order.
    public var offsets: [UInt32] { lines.map(\.offset) }
}
