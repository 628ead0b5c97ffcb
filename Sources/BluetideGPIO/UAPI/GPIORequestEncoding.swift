extension GPIOUAPI {
    /// Checks a request against the uAPI's rules and returns the `gpio_v2_line_request` for it.
    ///
    /// The config's base flags are those of the first line; each other distinct set of flags
    /// becomes a flags attribute masked to its lines, initial output values one output-values
    /// attribute, and each distinct non-zero debounce period one debounce attribute.
    /// `chip` only names the chip in errors.
    public static func lineRequest(for request: GPIORequest, chip: String) throws(GPIOError) -> LineRequest {
        func invalid(_ reason: String) -> GPIOError { .invalidRequest(chip: chip, reason: reason) }
        guard !request.lines.isEmpty else { throw invalid("no lines requested") }
        guard request.lines.count <= maxLines else {
            throw invalid("\(request.lines.count) lines requested, at most \(maxLines) fit in one request")
        }
        var seen: Set<UInt32> = []
        for line in request.lines {
            guard seen.insert(line.offset).inserted else { throw invalid("line \(line.offset) is requested twice") }
            let s = line.settings
            if s.isOutput {
                if s.edges != .none { throw invalid("line \(line.offset) is an output: edge detection needs an input") }
                if s.debounceMicroseconds != 0 { throw invalid("line \(line.offset) is an output: debounce needs an input") }
            } else if s.drive != .pushPull {
                throw invalid("line \(line.offset) is an input: drive mode \(s.drive.rawValue) needs an output")
            }
        }

        let lineFlags = request.lines.map { flags(for: $0.settings) }
        let base = lineFlags[0]
        var attributes: [ConfigAttribute] = []
        var groups: [(flags: LineFlag, mask: UInt64)] = []
        for (position, flags) in lineFlags.enumerated() where flags != base {
            let bit = UInt64(1) << UInt64(position)
            if let index = groups.firstIndex(where: { $0.flags == flags }) {
                groups[index].mask |= bit
            } else {
                groups.append((flags, bit))
            }
        }
        attributes += groups.map { ConfigAttribute(.flags($0.flags), mask: $0.mask) }

        var outputMask: UInt64 = 0
        var outputBits: UInt64 = 0
        var debounces: [(period: UInt32, mask: UInt64)] = []
        for (position, line) in request.lines.enumerated() {
            let bit = UInt64(1) << UInt64(position)
            if case let .output(initial) = line.settings.direction {
                outputMask |= bit
                if initial { outputBits |= bit }
            }
            let period = line.settings.debounceMicroseconds
            if period != 0 {
                if let index = debounces.firstIndex(where: { $0.period == period }) {
                    debounces[index].mask |= bit
                } else {
                    debounces.append((period, bit))
                }
            }
        }
        if outputMask != 0 { attributes.append(ConfigAttribute(.outputValues(outputBits), mask: outputMask)) }
        attributes += debounces.map { ConfigAttribute(.debounce(microseconds: $0.period), mask: $0.mask) }
        guard attributes.count <= maxConfigAttributes else {
            throw invalid("the lines need \(attributes.count) configuration attributes (distinct flag sets, "
                + "output values, debounce periods), at most \(maxConfigAttributes) fit: use fewer distinct settings "
                + "or split the request")
        }
        return LineRequest(
            offsets: request.offsets, consumer: request.consumer,
            config: LineConfig(flags: base, attributes: attributes), eventBufferSize: request.eventBufferSize)
    }
}
