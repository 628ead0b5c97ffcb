import BluetideBase

/// The first line of a value log: what the file is, which version of the format, and who wrote
/// it when. Readers refuse files whose header is missing or of a newer version.
public struct ValueLogHeader: Sendable, Hashable {
    /// The `format` value of every value log.
    public static let formatName = "bluetide-values"
    /// The format version this code writes and reads.
    public static let currentVersion = 1
    /// The Bluetide version written into headers by default.
    public static let bluetideVersion = BluetideVersion.current

    /// Format version of the file (``currentVersion`` when writing).
    public var version: Int
    /// Wall-clock time at which the recording started (timestamp 0), when known.
    public var startedAt: WallClockTime?
    /// Name of the program that wrote the file, e.g. `bluetide`.
    public var tool: String?
    /// Version of that program, e.g. `0.1.0`.
    public var toolVersion: String?

    /// A header for a new recording.
    public init(
        startedAt: WallClockTime?, tool: String? = "bluetide", toolVersion: String? = ValueLogHeader.bluetideVersion,
        version: Int = ValueLogHeader.currentVersion
    ) {
        self.version = version
        self.startedAt = startedAt
        self.tool = tool
        self.toolVersion = toolVersion
    }
}
