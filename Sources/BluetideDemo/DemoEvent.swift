/// Why the demo stopped: one line naming the device and what did not happen.
public struct DemoFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line.
    public var message: String
    /// A failure saying `message`.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// One thing the demo shows: a section heading, a scan row, a decoded value, an action.
public struct DemoEvent: Sendable {
    /// Which part of the demo: "world", "scan", or a device model name (`heart-rate`, …).
    public var device: String
    /// What happened: `section`, `started`, `found`, `connected`, `write`, `value`, `done`.
    public var kind: String
    /// The readable line (without the device label).
    public var summary: String
    /// Extra machine-readable fields for `--json`.
    public var fields: [String: String] = [:]
    /// Shown before the summary in text output (padded device name, with a bar for live data).
    public var label: String? = nil

    /// The text line: section headings stand alone, other lines are indented under them.
    /// An event of `device`'s part of kind `kind`.
    public init(device: String, kind: String, summary: String, fields: [String: String] = [:], label: String? = nil) {
        self.device = device
        self.kind = kind
        self.summary = summary
        self.fields = fields
        self.label = label
    }

    public var text: String { kind == "section" ? "\n== \(summary) ==" : "  " + (label ?? "") + summary }
}
