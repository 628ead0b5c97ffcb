/// The colour of one target's LED, for buttons, charts and legends.
public struct TargetColour: Hashable, Sendable, Codable {
    /// Target index 0...5.
    public var target: UInt8
    /// The LED's colour name, e.g. `red`.
    public var name: String
    /// Fill colour as `#RRGGBB`.
    public var fill: String
    /// A darker outline as `#RRGGBB`, so light colours (white, yellow) stay visible on white.
    public var stroke: String
}

/// The six target colours, matching the LEDs (0 red, 1 blue, 2 green, 3 yellow, 4 white,
/// 5 orange). Public so a web page can use the same colours (see ``cssCustomProperties``).
public enum TargetPalette {
    /// One entry per target, in target order.
    public static let colours: [TargetColour] = [
        TargetColour(target: 0, name: "red", fill: "#D7263D", stroke: "#8C1020"),
        TargetColour(target: 1, name: "blue", fill: "#1F6FD1", stroke: "#0F3F7F"),
        TargetColour(target: 2, name: "green", fill: "#2FA84F", stroke: "#176B2E"),
        TargetColour(target: 3, name: "yellow", fill: "#F4C430", stroke: "#8A6A00"),
        TargetColour(target: 4, name: "white", fill: "#F4F4F4", stroke: "#5A5A5A"),
        TargetColour(target: 5, name: "orange", fill: "#F57C1F", stroke: "#9A4500"),
    ]

    /// The colour of `target`, or nil outside 0...5.
    public static func colour(of target: UInt8) -> TargetColour? {
        colours.indices.contains(Int(target)) ? colours[Int(target)] : nil
    }

    /// CSS custom properties for a `:root` rule: `--target-0: #D7263D;` and `--target-0-stroke: ...;`, one per line.
    public static var cssCustomProperties: String {
        colours.map { "--target-\($0.target): \($0.fill);\n--target-\($0.target)-stroke: \($0.stroke);\n" }.joined()
    }
}
