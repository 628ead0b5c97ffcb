import BluetideBase

/// Constants of the Linux GPIO character device uAPI v2 (`<linux/gpio.h>`, Linux ≥ 5.10).
///
/// Defined here rather than imported from C so that the byte layouts are visible, testable
/// without hardware, and identical on every architecture we target (x86_64, arm, arm64: the
/// structs use only fixed-width fields with explicit padding).
public enum GPIOUAPI {
    /// ioctl "type" byte of the GPIO subsystem.
    public static let ioctlType: UInt8 = 0xB4
    /// Maximum length of a name or consumer label, including the terminating NUL.
    public static let maxNameSize = 32
    /// Maximum lines in one request.
    public static let maxLines = 64
    /// Maximum attributes in one line configuration.
    public static let maxConfigAttributes = 10

    /// Size of `struct gpiochip_info` in bytes.
    public static let chipInfoSize = 68
    /// Size of `struct gpio_v2_line_info` in bytes.
    public static let lineInfoSize = 256
    /// Size of `struct gpio_v2_line_request` in bytes.
    public static let lineRequestSize = 592
    /// Size of `struct gpio_v2_line_config` in bytes.
    public static let lineConfigSize = 272
    /// Size of `struct gpio_v2_line_config_attribute` in bytes.
    public static let configAttributeSize = 24
    /// Size of `struct gpio_v2_line_attribute` in bytes.
    public static let lineAttributeSize = 16
    /// Size of `struct gpio_v2_line_values` in bytes.
    public static let lineValuesSize = 16
    /// Size of `struct gpio_v2_line_event` in bytes (records read from a request fd).
    public static let lineEventSize = 48

    /// Direction bits of an ioctl number (asm-generic: x86, arm, arm64, riscv).
    public enum IOCDirection: UInt {
        case none = 0, write = 1, read = 2, readWrite = 3
    }

    /// `_IOC(dir, type, nr, size)`: dir in bits 30–31, size in bits 16–29, type in 8–15, nr in 0–7.
    public static func ioctlNumber(_ direction: IOCDirection, type: UInt8 = ioctlType, number: UInt8, size: Int) -> UInt {
        (direction.rawValue << 30) | ((UInt(size) & 0x3FFF) << 16) | (UInt(type) << 8) | UInt(number)
    }

    /// `GPIO_GET_CHIPINFO_IOCTL` = `_IOR(0xB4, 0x01, struct gpiochip_info)` = 0x8044B401.
    public static let getChipInfo = ioctlNumber(.read, number: 0x01, size: chipInfoSize)
    /// `GPIO_V2_GET_LINEINFO_IOCTL` = `_IOWR(0xB4, 0x05, struct gpio_v2_line_info)` = 0xC100B405.
    public static let getLineInfo = ioctlNumber(.readWrite, number: 0x05, size: lineInfoSize)
    /// `GPIO_V2_GET_LINE_IOCTL` = `_IOWR(0xB4, 0x07, struct gpio_v2_line_request)` = 0xC250B407.
    public static let getLine = ioctlNumber(.readWrite, number: 0x07, size: lineRequestSize)
    /// `GPIO_V2_LINE_SET_CONFIG_IOCTL` = `_IOWR(0xB4, 0x0D, struct gpio_v2_line_config)` = 0xC110B40D.
    public static let lineSetConfig = ioctlNumber(.readWrite, number: 0x0D, size: lineConfigSize)
    /// `GPIO_V2_LINE_GET_VALUES_IOCTL` = `_IOWR(0xB4, 0x0E, struct gpio_v2_line_values)` = 0xC010B40E.
    public static let lineGetValues = ioctlNumber(.readWrite, number: 0x0E, size: lineValuesSize)
    /// `GPIO_V2_LINE_SET_VALUES_IOCTL` = `_IOWR(0xB4, 0x0F, struct gpio_v2_line_values)` = 0xC010B40F.
    public static let lineSetValues = ioctlNumber(.readWrite, number: 0x0F, size: lineValuesSize)

    /// `enum gpio_v2_line_flag` bits.
    public struct LineFlag: OptionSet, Sendable, Hashable {
        public let rawValue: UInt64
        public init(rawValue: UInt64) { self.rawValue = rawValue }

        /// Line is requested by someone (line info only).
        public static let used = LineFlag(rawValue: 1 << 0)
        /// Logical value is the inverse of the physical level.
        public static let activeLow = LineFlag(rawValue: 1 << 1)
        /// Input.
        public static let input = LineFlag(rawValue: 1 << 2)
        /// Output.
        public static let output = LineFlag(rawValue: 1 << 3)
        /// Report rising (inactive → active) edges.
        public static let edgeRising = LineFlag(rawValue: 1 << 4)
        /// Report falling (active → inactive) edges.
        public static let edgeFalling = LineFlag(rawValue: 1 << 5)
        /// Output drives low only.
        public static let openDrain = LineFlag(rawValue: 1 << 6)
        /// Output drives high only.
        public static let openSource = LineFlag(rawValue: 1 << 7)
        /// Internal pull-up.
        public static let biasPullUp = LineFlag(rawValue: 1 << 8)
        /// Internal pull-down.
        public static let biasPullDown = LineFlag(rawValue: 1 << 9)
        /// Bias explicitly off.
        public static let biasDisabled = LineFlag(rawValue: 1 << 10)
        /// Event timestamps on CLOCK_REALTIME instead of CLOCK_MONOTONIC.
        public static let eventClockRealtime = LineFlag(rawValue: 1 << 11)
        /// Event timestamps from a hardware timestamp engine.
        public static let eventClockHTE = LineFlag(rawValue: 1 << 12)
    }

    /// `enum gpio_v2_line_attr_id`.
    public enum AttributeID: UInt32, Sendable {
        /// Flags for the masked lines (override the config's flags).
        case flags = 1
        /// Output values (a bitmap over request positions) for the masked lines.
        case outputValues = 2
        /// Debounce period in microseconds for the masked lines.
        case debounce = 3
    }

    /// `enum gpio_v2_line_event_id`.
    public enum EventID: UInt32, Sendable {
        /// Inactive → active.
        case risingEdge = 1
        /// Active → inactive.
        case fallingEdge = 2
    }

    /// The uAPI flags for one line's settings.
    public static func flags(for settings: GPIOLineSettings) -> LineFlag {
        var flags: LineFlag = []
        switch settings.direction {
        case .input: flags.insert(.input)
        case .output: flags.insert(.output)
        }
        if settings.activeLow { flags.insert(.activeLow) }
        switch settings.bias {
        case .asIs: break
        case .pullUp: flags.insert(.biasPullUp)
        case .pullDown: flags.insert(.biasPullDown)
        case .disabled: flags.insert(.biasDisabled)
        }
        switch settings.edges {
        case .none: break
        case .rising: flags.insert(.edgeRising)
        case .falling: flags.insert(.edgeFalling)
        case .both: flags.formUnion([.edgeRising, .edgeFalling])
        }
        switch settings.drive {
        case .pushPull: break
        case .openDrain: flags.insert(.openDrain)
        case .openSource: flags.insert(.openSource)
        }
        return flags
    }
}

extension ByteWriter {
    /// Writes a NUL-padded fixed-size C string field (at most `size - 1` bytes of text; longer
    /// text is cut at a UTF-8 character boundary).
    mutating func writeCString(_ text: String, size: Int) {
        var bytes: [UInt8] = []
        for scalar in text.unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            if bytes.count + encoded.count > size - 1 { break }
            bytes.append(contentsOf: encoded)
        }
        write(bytes: bytes)
        pad(size - bytes.count)
    }
}

extension ByteReader {
    /// Reads a fixed-size C string field: text up to the first NUL (lenient UTF-8).
    mutating func readCString(size: Int, _ field: String) throws(DecodingError) -> String {
        let raw = try readBytes(size, field)
        let end = raw.firstIndex(of: 0) ?? raw.count
        return String(deviceBytes: Array(raw[..<end]))
    }
}
