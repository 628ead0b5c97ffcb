/// A GPIO chip: a set of numbered lines that can be requested as inputs or outputs.
///
/// Implemented by ``LinuxGPIOChip`` (the Linux character device, uAPI v2) and
/// ``SimulatedGPIOChip`` (an in-process chip driven by a simulated environment), so code
/// that lights LEDs and waits for sensors runs unchanged on a Raspberry Pi and in tests.
public protocol GPIOChip: Sendable {
    /// Human-readable identity used in error messages (e.g. `/dev/gpiochip0`).
    var chipDescription: String { get }
    /// Name, label and number of lines.
    func info() async throws(GPIOError) -> GPIOChipInfo
    /// Name and state of one line (who uses it).
    func lineInfo(_ offset: UInt32) async throws(GPIOError) -> GPIOLineInfo
    /// Requests lines; they stay held until the returned request is released.
    func request(_ request: GPIORequest) async throws(GPIOError) -> any GPIOLineRequest
}

/// Lines held by one request. Release it (or drop it) to give the lines back.
public protocol GPIOLineRequest: Sendable {
    /// The chip the lines belong to (for messages).
    var chipDescription: String { get }
    /// The requested offsets, in request order.
    var offsets: [UInt32] { get }
    /// Sets output lines to logical values (offset → value). Offsets not in the request, or
    /// inputs, throw ``GPIOError/notAnOutput(chip:line:)``.
    func setValues(_ values: [UInt32: Bool]) async throws(GPIOError)
    /// Reads the logical values of the given offsets (all requested offsets when empty).
    func values(_ offsets: [UInt32]) async throws(GPIOError) -> [UInt32: Bool]
    /// Edge events of the request's edge-detecting inputs, in order; the sequence ends when the
    /// request is released. Single consumer: iterate it from one task.
    var edges: AsyncStream<GPIOEdge> { get }
    /// Gives the lines back to the chip and ends ``edges``. Idempotent.
    func release() async
}

extension GPIOLineRequest {
    /// Sets one output line.
    public func setValue(_ value: Bool, for offset: UInt32) async throws(GPIOError) {
        try await setValues([offset: value])
    }

    /// Reads one line's logical value.
    public func value(of offset: UInt32) async throws(GPIOError) -> Bool {
        let read = try await values([offset])
        guard let value = read[offset] else { throw .notRequested(chip: chipDescription, line: offset) }
        return value
    }
}
