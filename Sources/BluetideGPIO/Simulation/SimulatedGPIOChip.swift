import BluetideSupport

/// One change of a simulated output line, as recorded by ``SimulatedGPIOChip``.
public struct SimulatedOutputChange: Sendable, Equatable {
    /// Line offset.
    public var offset: UInt32
    /// New logical value (true = active, e.g. LED on).
    public var value: Bool
    /// New physical level (true = high).
    public var level: Bool
    /// When, nanoseconds on the chip's time source.
    public var timestampNanoseconds: UInt64

    public init(offset: UInt32, value: Bool, level: Bool, timestampNanoseconds: UInt64) {
        self.offset = offset
        self.value = value
        self.level = level
        self.timestampNanoseconds = timestampNanoseconds
    }
}

/// An in-process GPIO chip with `lineCount` lines, standing in for `/dev/gpiochipN`.
///
/// It behaves like the kernel for what an application sees: requests hold lines exclusively
/// (a second request of a held line is ``GPIOError/lineBusy(chip:line:lineName:consumer:)``),
/// values and edges are logical (active-low inverts), edges carry sequence numbers, and
/// releasing a request ends its edge stream. The environment side (tests, ``SimulatedAthlete``)
/// drives input lines' physical levels with ``drive(_:level:)`` and watches outputs through
/// ``outputChanges()`` and ``outputHistory``. Bias decides an undriven input's level
/// (pull-up: high, pull-down: low). Debounce periods are accepted but not modelled: the
/// environment produces clean transitions.
public actor SimulatedGPIOChip: GPIOChip {
    /// Name used in messages, e.g. `sim:gpiochip0`.
    public nonisolated let chipDescription: String
    /// Number of lines.
    public nonisolated let lineCount: UInt32
    private let label: String
    private let timestamp: @Sendable () -> UInt64

    private struct Line {
        var name: String
        /// Current physical level.
        var level = false
        /// Level the environment drives, nil when it does not drive the line.
        var driven: Bool?
        /// The request holding the line.
        var owner: Int?
        var settings: GPIOLineSettings?
        var lineSequence: UInt32 = 0
    }

    private struct Held {
        var consumer: String
        var offsets: [UInt32]
        var continuation: AsyncStream<GPIOEdge>.Continuation
        var sequence: UInt32 = 0
    }

    private var lines: [Line]
    private var held: [Int: Held] = [:]
    private var nextRequestID = 1
    private var watchers: [Int: AsyncStream<SimulatedOutputChange>.Continuation] = [:]
    private var nextWatcherID = 1
    /// Every change of an output line's value since the chip was created, in order.
    public private(set) var outputHistory: [SimulatedOutputChange] = []

    /// A chip whose event timestamps come from `timestampNanoseconds` (monotonic nanoseconds).
    /// `names` names lines (default `GPIO0`, `GPIO1`, …).
    public init(
        lineCount: UInt32 = 54, name: String = "sim:gpiochip0", label: String = "bluetide-sim",
        names: [String]? = nil, timestampNanoseconds: @escaping @Sendable () -> UInt64
    ) {
        chipDescription = name
        self.lineCount = lineCount
        self.label = label
        timestamp = timestampNanoseconds
        lines = (0..<Int(lineCount)).map { index in
            Line(name: names.flatMap { index < $0.count ? $0[index] : nil } ?? "GPIO\(index)")
        }
    }

    /// A chip timestamping events with `clock`: nanoseconds since the chip was created.
    public init<C: Clock>(lineCount: UInt32 = 54, name: String = "sim:gpiochip0", clock: C) where C.Duration == Duration {
        let start = clock.now
        self.init(lineCount: lineCount, name: name) {
            start.duration(to: clock.now).wholeNanoseconds
        }
    }

    // MARK: GPIOChip

    /// Name, label and number of lines.
    public func info() -> GPIOChipInfo {
        GPIOChipInfo(name: chipDescription, label: label, lines: lineCount)
    }

    /// Name and state of one line.
    public func lineInfo(_ offset: UInt32) throws(GPIOError) -> GPIOLineInfo {
        let line = try existing(offset)
        var flags = line.settings.map { GPIOUAPI.flags(for: $0) } ?? []
        if line.owner != nil { flags.insert(.used) }
        let consumer = line.owner.flatMap { held[$0]?.consumer } ?? ""
        return GPIOLineInfo(
            offset: offset, name: line.name, consumer: consumer, isUsed: line.owner != nil,
            isOutput: flags.contains(.output), activeLow: flags.contains(.activeLow), flags: flags.rawValue)
    }

    /// Requests lines (same validation as the Linux backend, plus exclusivity).
    public func request(_ request: GPIORequest) throws(GPIOError) -> any GPIOLineRequest {
        try requestLines(request)
    }

    /// Same as ``request(_:)`` with the concrete type.
    public func requestLines(_ request: GPIORequest) throws(GPIOError) -> SimulatedLineRequest {
        for line in request.lines where line.offset >= lineCount {
            throw .lineOutOfRange(chip: chipDescription, line: line.offset, lineCount: lineCount)
        }
        _ = try GPIOUAPI.lineRequest(for: request, chip: chipDescription)
        for line in request.lines {
            let current = lines[Int(line.offset)]
            if let owner = current.owner {
                throw .lineBusy(chip: chipDescription, line: line.offset, lineName: current.name, consumer: held[owner]?.consumer ?? "")
            }
        }
        let id = nextRequestID
        nextRequestID += 1
        let (stream, continuation) = AsyncStream.makeStream(of: GPIOEdge.self, bufferingPolicy: .bufferingNewest(4096))
        held[id] = Held(consumer: request.consumer, offsets: request.offsets, continuation: continuation)
        for line in request.lines {
            let index = Int(line.offset)
            lines[index].owner = id
            lines[index].settings = line.settings
            lines[index].lineSequence = 0
            if case let .output(initial) = line.settings.direction {
                setOutput(index, initial, force: true)
            } else {
                lines[index].level = inputLevel(lines[index])
            }
        }
        return SimulatedLineRequest(chip: self, id: id, offsets: request.offsets, edges: stream)
    }

    // MARK: Request side

    func setValues(request id: Int, _ values: [UInt32: Bool]) throws(GPIOError) {
        for (offset, _) in values {
            let line = try owned(offset, by: id)
            guard line.settings?.isOutput == true else { throw .notAnOutput(chip: chipDescription, line: offset) }
        }
        for (offset, value) in values.sorted(by: { $0.key < $1.key }) {
            setOutput(Int(offset), value, force: false)
        }
    }

    func values(request id: Int, _ offsets: [UInt32]) throws(GPIOError) -> [UInt32: Bool] {
        guard let request = held[id] else { throw .released(chip: chipDescription) }
        var result: [UInt32: Bool] = [:]
        for offset in offsets.isEmpty ? request.offsets : offsets {
            let line = try owned(offset, by: id)
            result[offset] = line.level != (line.settings?.activeLow ?? false)
        }
        return result
    }

    func release(request id: Int) {
        guard let request = held.removeValue(forKey: id) else { return }
        for offset in request.offsets {
            lines[Int(offset)].owner = nil
        }
        request.continuation.finish()
    }

    // MARK: Environment side

    /// Drives an input line's physical level (`true` = high), or stops driving it (`nil`: the
    /// bias decides). A transition of an edge-detecting requested input yields a ``GPIOEdge``.
    /// Driving a line held as an output has no effect (the output wins).
    public func drive(_ offset: UInt32, level: Bool?) throws(GPIOError) {
        _ = try existing(offset)
        let index = Int(offset)
        lines[index].driven = level
        guard lines[index].settings?.isOutput != true || lines[index].owner == nil else { return }
        let newLevel = inputLevel(lines[index])
        guard newLevel != lines[index].level else { return }
        lines[index].level = newLevel
        guard let owner = lines[index].owner, let settings = lines[index].settings else { return }
        let active = newLevel != settings.activeLow
        let kind: GPIOEdge.Kind = active ? .rising : .falling
        switch (settings.edges, kind) {
        case (.both, _), (.rising, .rising), (.falling, .falling): break
        default: return
        }
        guard var request = held[owner] else { return }
        request.sequence &+= 1
        lines[index].lineSequence &+= 1
        held[owner] = request
        request.continuation.yield(GPIOEdge(
            offset: offset, kind: kind, timestampNanoseconds: timestamp(),
            sequenceNumber: request.sequence, lineSequenceNumber: lines[index].lineSequence))
    }

    /// The physical level of a line (true = high).
    public func level(of offset: UInt32) throws(GPIOError) -> Bool {
        try existing(offset).level
    }

    /// The logical value of a requested output line, nil when the line is not a held output.
    public func outputValue(of offset: UInt32) -> Bool? {
        guard offset < lineCount else { return nil }
        let line = lines[Int(offset)]
        guard line.owner != nil, let settings = line.settings, settings.isOutput else { return nil }
        return line.level != settings.activeLow
    }

    /// A stream of every later output change (each call gets its own stream; it ends when the
    /// consumer stops iterating).
    public func outputChanges() -> AsyncStream<SimulatedOutputChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: SimulatedOutputChange.self)
        let id = nextWatcherID
        nextWatcherID += 1
        watchers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeWatcher(id) }
        }
        return stream
    }

    private func removeWatcher(_ id: Int) {
        watchers[id] = nil
    }

    // MARK: Helpers

    private func existing(_ offset: UInt32) throws(GPIOError) -> Line {
        guard offset < lineCount else { throw .lineOutOfRange(chip: chipDescription, line: offset, lineCount: lineCount) }
        return lines[Int(offset)]
    }

    private func owned(_ offset: UInt32, by id: Int) throws(GPIOError) -> Line {
        guard held[id] != nil else { throw .released(chip: chipDescription) }
        guard offset < lineCount, lines[Int(offset)].owner == id else { throw .notRequested(chip: chipDescription, line: offset) }
        return lines[Int(offset)]
    }

    private func inputLevel(_ line: Line) -> Bool {
        if let driven = line.driven { return driven }
        switch line.settings?.bias {
        case .pullUp: return true
        case .pullDown: return false
        default: return line.level
        }
    }

    private func setOutput(_ index: Int, _ value: Bool, force: Bool) {
        let activeLow = lines[index].settings?.activeLow ?? false
        let level = value != activeLow
        let previous = lines[index].level
        lines[index].level = level
        guard force || previous != level else { return }
        let change = SimulatedOutputChange(offset: UInt32(index), value: value, level: level, timestampNanoseconds: timestamp())
        outputHistory.append(change)
        for continuation in watchers.values { continuation.yield(change) }
    }
}

/// Lines held on a ``SimulatedGPIOChip``.
public struct SimulatedLineRequest: GPIOLineRequest {
    /// The chip.
    public let chip: SimulatedGPIOChip
    let id: Int
    /// The requested offsets, in request order.
    public let offsets: [UInt32]
    /// Edge events; ends on release.
    public let edges: AsyncStream<GPIOEdge>

    /// The chip's name.
    public var chipDescription: String { chip.chipDescription }

    /// Sets output lines (logical values).
    public func setValues(_ values: [UInt32: Bool]) async throws(GPIOError) {
        try await chip.setValues(request: id, values)
    }

    /// Reads logical values (all requested lines when `offsets` is empty).
    public func values(_ offsets: [UInt32]) async throws(GPIOError) -> [UInt32: Bool] {
        try await chip.values(request: id, offsets)
    }

    /// Gives the lines back and ends ``edges``.
    public func release() async {
        await chip.release(request: id)
    }
}
