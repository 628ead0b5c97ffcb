/// One transition of an input line, as reported by the kernel (or the simulated chip).
public struct GPIOEdge: Sendable, Equatable, CustomStringConvertible {
    /// Direction of a transition, in logical terms (see ``GPIOEdgeDetection``).
    public enum Kind: String, Sendable, Equatable {
        /// Inactive → active.
        case rising
        /// Active → inactive.
        case falling
    }

    /// Line offset on the chip.
    public var offset: UInt32
    /// Rising or falling.
    public var kind: Kind
    /// When the edge happened, nanoseconds on CLOCK_MONOTONIC (the kernel's default event clock;
    /// for the simulated chip, nanoseconds since the chip was created).
    public var timestampNanoseconds: UInt64
    /// Sequence number of this event among all lines of the request (starts at 1). A gap means
    /// events were lost because the buffer overflowed.
    public var sequenceNumber: UInt32
    /// Sequence number of this event on its own line (starts at 1).
    public var lineSequenceNumber: UInt32

    public init(offset: UInt32, kind: Kind, timestampNanoseconds: UInt64, sequenceNumber: UInt32, lineSequenceNumber: UInt32) {
        self.offset = offset
        self.kind = kind
        self.timestampNanoseconds = timestampNanoseconds
        self.sequenceNumber = sequenceNumber
        self.lineSequenceNumber = lineSequenceNumber
    }

    public var description: String {
        "line \(offset) \(kind.rawValue) at \(timestampNanoseconds) ns (#\(sequenceNumber), line #\(lineSequenceNumber))"
    }
}

/// What a chip says about itself.
public struct GPIOChipInfo: Sendable, Equatable {
    /// Kernel name, e.g. `gpiochip0`.
    public var name: String
    /// Driver label, e.g. `pinctrl-bcm2711`.
    public var label: String
    /// Number of lines (valid offsets are 0 ..< lines).
    public var lines: UInt32

    public init(name: String, label: String, lines: UInt32) {
        self.name = name
        self.label = label
        self.lines = lines
    }
}

/// What a chip says about one of its lines (works without requesting it).
public struct GPIOLineInfo: Sendable, Equatable {
    /// Line offset on the chip.
    public var offset: UInt32
    /// Line name from the device tree (e.g. `GPIO17`), empty when unnamed.
    public var name: String
    /// Label of whoever holds the line (empty when free).
    public var consumer: String
    /// True when the line is requested by someone (a process or a kernel driver).
    public var isUsed: Bool
    /// True when configured as an output.
    public var isOutput: Bool
    /// True when configured active-low.
    public var activeLow: Bool
    /// Raw uAPI v2 flag bits (see ``GPIOUAPI/LineFlag``).
    public var flags: UInt64

    public init(offset: UInt32, name: String, consumer: String, isUsed: Bool, isOutput: Bool, activeLow: Bool, flags: UInt64) {
        self.offset = offset
        self.name = name
        self.consumer = consumer
        self.isUsed = isUsed
        self.isOutput = isOutput
        self.activeLow = activeLow
        self.flags = flags
    }
}
