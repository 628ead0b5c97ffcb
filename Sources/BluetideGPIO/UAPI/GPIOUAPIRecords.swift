import BluetideBase

extension GPIOUAPI {
    /// `struct gpiochip_info` (68 bytes): `char name[32]; char label[32]; u32 lines;`.
    public static func decodeChipInfo(_ bytes: [UInt8]) throws(DecodingError) -> GPIOChipInfo {
        var r = ByteReader(bytes)
        let name = try r.readCString(size: maxNameSize, "gpiochip_info.name")
        let label = try r.readCString(size: maxNameSize, "gpiochip_info.label")
        let lines = try r.read(UInt32.self, "gpiochip_info.lines")
        return GPIOChipInfo(name: name, label: label, lines: lines)
    }

    /// A zeroed `struct gpio_v2_line_info` (256 bytes) asking for line `offset`: the kernel reads
    /// `offset` (at byte 64) and fills in the rest.
    public static func encodeLineInfoQuery(offset: UInt32) -> [UInt8] {
        var w = ByteWriter(capacity: lineInfoSize)
        w.pad(2 * maxNameSize)
        w.write(offset)
        w.pad(lineInfoSize - w.count)
        return w.bytes
    }

    /// `struct gpio_v2_line_info` (256 bytes): `char name[32] @0; char consumer[32] @32;
    /// u32 offset @64; u32 num_attrs @68; u64 flags @72; attrs[10] × 16 @80; u32 padding[4] @240`.
    public static func decodeLineInfo(_ bytes: [UInt8]) throws(DecodingError) -> GPIOLineInfo {
        var r = ByteReader(bytes)
        let name = try r.readCString(size: maxNameSize, "gpio_v2_line_info.name")
        let consumer = try r.readCString(size: maxNameSize, "gpio_v2_line_info.consumer")
        let offset = try r.read(UInt32.self, "gpio_v2_line_info.offset")
        _ = try r.read(UInt32.self, "gpio_v2_line_info.num_attrs")
        let raw = try r.read(UInt64.self, "gpio_v2_line_info.flags")
        try r.require(lineInfoSize - r.offset, "gpio_v2_line_info.attrs")
        let flags = LineFlag(rawValue: raw)
        return GPIOLineInfo(
            offset: offset, name: name, consumer: consumer, isUsed: flags.contains(.used),
            isOutput: flags.contains(.output), activeLow: flags.contains(.activeLow), flags: raw)
    }

    /// One `struct gpio_v2_line_config_attribute` (24 bytes): an attribute and the bitmap of
    /// request positions it applies to.
    public struct ConfigAttribute: Sendable, Equatable {
        /// What the attribute sets.
        public enum Value: Sendable, Equatable {
            /// Flags overriding the config's flags.
            case flags(LineFlag)
            /// Output values, a bitmap over request positions.
            case outputValues(UInt64)
            /// Debounce period, microseconds.
            case debounce(microseconds: UInt32)
        }
        /// The value.
        public var value: Value
        /// Bit i set = applies to the line at request position i.
        public var mask: UInt64

        public init(_ value: Value, mask: UInt64) {
            self.value = value
            self.mask = mask
        }

        /// `{u32 id; u32 padding; union {u64 flags; u64 values; u32 debounce_period_us;}; u64 mask;}`.
        func encode(to w: inout ByteWriter) {
            switch value {
            case let .flags(flags):
                w.write(AttributeID.flags.rawValue); w.write(UInt32(0)); w.write(flags.rawValue)
            case let .outputValues(bits):
                w.write(AttributeID.outputValues.rawValue); w.write(UInt32(0)); w.write(bits)
            case let .debounce(microseconds):
                w.write(AttributeID.debounce.rawValue); w.write(UInt32(0)); w.write(microseconds); w.write(UInt32(0))
            }
            w.write(mask)
        }

        static func decode(from r: inout ByteReader, index: Int) throws(DecodingError) -> ConfigAttribute {
            let field = "gpio_v2_line_config.attrs[\(index)]"
            let id = try r.read(UInt32.self, "\(field).id")
            _ = try r.read(UInt32.self, "\(field).padding")
            let start = r.offset
            let raw = try r.read(UInt64.self, "\(field).value")
            let mask = try r.read(UInt64.self, "\(field).mask")
            switch AttributeID(rawValue: id) {
            case .flags: return ConfigAttribute(.flags(LineFlag(rawValue: raw)), mask: mask)
            case .outputValues: return ConfigAttribute(.outputValues(raw), mask: mask)
            case .debounce:
                return ConfigAttribute(.debounce(microseconds: UInt32(truncatingIfNeeded: raw)), mask: mask)
            case nil:
                throw .invalid("\(field).id", expected: "1 (flags), 2 (output values) or 3 (debounce)", found: "\(id)", at: start - 8)
            }
        }
    }

    /// `struct gpio_v2_line_config` (272 bytes): `u64 flags @0; u32 num_attrs @8; u32 padding[5] @12;
    /// attrs[10] × 24 @32`.
    public struct LineConfig: Sendable, Equatable {
        /// Flags for every line not covered by a flags attribute.
        public var flags: LineFlag
        /// At most 10 attributes.
        public var attributes: [ConfigAttribute]

        public init(flags: LineFlag, attributes: [ConfigAttribute] = []) {
            self.flags = flags
            self.attributes = attributes
        }

        /// The 272 bytes (attributes past the tenth are dropped: ``GPIOUAPI/lineRequest(for:chip:)`` never builds more).
        public func encode(to w: inout ByteWriter) {
            let start = w.count
            let used = Array(attributes.prefix(maxConfigAttributes))
            w.write(flags.rawValue)
            w.write(UInt32(used.count))
            w.pad(5 * 4)
            for attribute in used { attribute.encode(to: &w) }
            w.pad(lineConfigSize - (w.count - start))
        }

        /// The encoded bytes.
        public var bytes: [UInt8] {
            var w = ByteWriter(capacity: lineConfigSize)
            encode(to: &w)
            return w.bytes
        }

        /// Decodes the 272 bytes (used by tests and by the simulated chip's self-checks).
        public static func decode(from r: inout ByteReader) throws(DecodingError) -> LineConfig {
            let start = r.offset
            let flags = try r.read(UInt64.self, "gpio_v2_line_config.flags")
            let count = try r.read(UInt32.self, "gpio_v2_line_config.num_attrs")
            guard count <= UInt32(maxConfigAttributes) else {
                throw .invalid("gpio_v2_line_config.num_attrs", expected: "0…10", found: "\(count)", at: r.offset - 4)
            }
            try r.skip(5 * 4, "gpio_v2_line_config.padding")
            var attributes: [ConfigAttribute] = []
            for index in 0..<Int(count) {
                attributes.append(try ConfigAttribute.decode(from: &r, index: index))
            }
            try r.skip(lineConfigSize - (r.offset - start), "gpio_v2_line_config.attrs")
            return LineConfig(flags: LineFlag(rawValue: flags), attributes: attributes)
        }
    }

    /// `struct gpio_v2_line_request` (592 bytes): `u32 offsets[64] @0; char consumer[32] @256;
    /// config @288; u32 num_lines @560; u32 event_buffer_size @564; u32 padding[5] @568; s32 fd @588`.
    public struct LineRequest: Sendable, Equatable {
        /// Offsets in request order (at most 64).
        public var offsets: [UInt32]
        /// Consumer label (at most 31 bytes are sent).
        public var consumer: String
        /// Line configuration.
        public var config: LineConfig
        /// Edge event buffer size (0 = kernel default).
        public var eventBufferSize: UInt32
        /// The request fd the kernel fills in (−1 before the ioctl).
        public var fd: Int32

        public init(offsets: [UInt32], consumer: String, config: LineConfig, eventBufferSize: UInt32 = 0, fd: Int32 = -1) {
            self.offsets = offsets
            self.consumer = consumer
            self.config = config
            self.eventBufferSize = eventBufferSize
            self.fd = fd
        }

        /// Byte offset of `fd` in the struct.
        public static let fdOffset = 588

        /// The 592 bytes.
        public var bytes: [UInt8] {
            var w = ByteWriter(capacity: lineRequestSize)
            let used = offsets.prefix(maxLines)
            for offset in used { w.write(offset) }
            w.pad((maxLines - used.count) * 4)
            w.writeCString(consumer, size: maxNameSize)
            config.encode(to: &w)
            w.write(UInt32(used.count))
            w.write(eventBufferSize)
            w.pad(5 * 4)
            w.write(fd)
            return w.bytes
        }

        /// Decodes the 592 bytes (after the ioctl: `fd` holds the request's file descriptor).
        public static func decode(_ bytes: [UInt8]) throws(DecodingError) -> LineRequest {
            var r = ByteReader(bytes)
            var all: [UInt32] = []
            for i in 0..<maxLines { all.append(try r.read(UInt32.self, "gpio_v2_line_request.offsets[\(i)]")) }
            let consumer = try r.readCString(size: maxNameSize, "gpio_v2_line_request.consumer")
            let config = try LineConfig.decode(from: &r)
            let count = try r.read(UInt32.self, "gpio_v2_line_request.num_lines")
            guard count <= UInt32(maxLines) else {
                throw .invalid("gpio_v2_line_request.num_lines", expected: "0…64", found: "\(count)", at: r.offset - 4)
            }
            let buffer = try r.read(UInt32.self, "gpio_v2_line_request.event_buffer_size")
            try r.skip(5 * 4, "gpio_v2_line_request.padding")
            let fd = try r.read(Int32.self, "gpio_v2_line_request.fd")
            return LineRequest(
                offsets: Array(all.prefix(Int(count))), consumer: consumer, config: config,
                eventBufferSize: buffer, fd: fd)
        }
    }

    /// `struct gpio_v2_line_values` (16 bytes): `u64 bits; u64 mask;` — bit i is request position i.
    public struct LineValues: Sendable, Equatable {
        /// Values (1 = active).
        public var bits: UInt64
        /// Which positions are read or written.
        public var mask: UInt64

        public init(bits: UInt64, mask: UInt64) {
            self.bits = bits
            self.mask = mask
        }

        /// The 16 bytes.
        public var bytes: [UInt8] {
            var w = ByteWriter(capacity: lineValuesSize)
            w.write(bits)
            w.write(mask)
            return w.bytes
        }

        /// Decodes the 16 bytes.
        public static func decode(_ bytes: [UInt8]) throws(DecodingError) -> LineValues {
            var r = ByteReader(bytes)
            let bits = try r.read(UInt64.self, "gpio_v2_line_values.bits")
            let mask = try r.read(UInt64.self, "gpio_v2_line_values.mask")
            return LineValues(bits: bits, mask: mask)
        }
    }

    /// Decodes one `struct gpio_v2_line_event` (48 bytes): `u64 timestamp_ns @0; u32 id @8;
    /// u32 offset @12; u32 seqno @16; u32 line_seqno @20; u32 padding[6] @24`.
    public static func decodeLineEvent(from r: inout ByteReader) throws(DecodingError) -> GPIOEdge {
        let start = r.offset
        let timestamp = try r.read(UInt64.self, "gpio_v2_line_event.timestamp_ns")
        let id = try r.read(UInt32.self, "gpio_v2_line_event.id")
        let offset = try r.read(UInt32.self, "gpio_v2_line_event.offset")
        let seqno = try r.read(UInt32.self, "gpio_v2_line_event.seqno")
        let lineSeqno = try r.read(UInt32.self, "gpio_v2_line_event.line_seqno")
        try r.skip(6 * 4, "gpio_v2_line_event.padding")
        let kind: GPIOEdge.Kind
        switch EventID(rawValue: id) {
        case .risingEdge: kind = .rising
        case .fallingEdge: kind = .falling
        case nil:
            throw .invalid("gpio_v2_line_event.id", expected: "1 (rising) or 2 (falling)", found: "\(id)", at: start + 8)
        }
        return GPIOEdge(offset: offset, kind: kind, timestampNanoseconds: timestamp, sequenceNumber: seqno, lineSequenceNumber: lineSeqno)
    }

    /// Decodes every whole 48-byte record in `bytes` (what one `read()` returned).
    public static func decodeLineEvents(_ bytes: [UInt8]) throws(DecodingError) -> [GPIOEdge] {
        var r = ByteReader(bytes)
        var edges: [GPIOEdge] = []
        while !r.isAtEnd { edges.append(try decodeLineEvent(from: &r)) }
        return edges
    }

    /// Encodes one event record (the simulated chip and tests produce the kernel's bytes).
    public static func encodeLineEvent(_ edge: GPIOEdge) -> [UInt8] {
        var w = ByteWriter(capacity: lineEventSize)
        w.write(edge.timestampNanoseconds)
        w.write(edge.kind == .rising ? EventID.risingEdge.rawValue : EventID.fallingEdge.rawValue)
        w.write(edge.offset)
        w.write(edge.sequenceNumber)
        w.write(edge.lineSequenceNumber)
        w.pad(6 * 4)
        return w.bytes
    }
}
