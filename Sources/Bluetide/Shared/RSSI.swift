import Foundation

/// Ordering devices by signal strength.
public enum RSSIRanking {
    /// `advertisements` strongest RSSI first; equal RSSI: seen earlier first, then by address.
    public static func ranked(_ advertisements: [Advertisement]) -> [Advertisement] {
        advertisements.sorted { a, b in
            if a.rssi != b.rssi { return a.rssi > b.rssi }
            if a.firstSeen != b.firstSeen { return a.firstSeen < b.firstSeen }
            return a.address < b.address
        }
    }
}

/// A colour for a signal strength, red (weak) through yellow to green (strong), for device
/// lists in terminals and UIs.
public struct RSSIColor: Sendable, Equatable, CustomStringConvertible {
    /// Weakest RSSI on the scale, dBm (pure red at and below).
    public static let weakest = -127
    /// Strongest RSSI on the scale, dBm (pure green at and above).
    public static let strongest = -20

    /// Red component, 0…255.
    public let red: UInt8
    /// Green component, 0…255.
    public let green: UInt8
    /// Blue component, 0…255 (always 0 on this scale).
    public let blue: UInt8
    /// Position on the scale, 0 (weakest) … 1 (strongest).
    public let level: Double

    /// The colour of `rssi` dBm, clamped to −127…−20.
    public init(rssi: Int) {
        let clamped = min(max(rssi, Self.weakest), Self.strongest)
        let level = Double(clamped - Self.weakest) / Double(Self.strongest - Self.weakest)
        self.level = level
        // Red → yellow over the lower half, yellow → green over the upper half.
        red = UInt8((min(1, 2 * (1 - level)) * 255).rounded())
        green = UInt8((min(1, 2 * level) * 255).rounded())
        blue = 0
    }

    /// The nearest colour of the xterm 256-colour cube (codes 16…231), for `ESC[38;5;Nm`.
    public var ansi256: UInt8 {
        func step(_ c: UInt8) -> Int { Int((Double(c) / 255 * 5).rounded()) }
        return UInt8(16 + 36 * step(red) + 6 * step(green) + step(blue))
    }

    /// `text` wrapped in the ANSI escape for this colour (foreground) and a reset.
    public func colorize(_ text: String) -> String { "\u{1B}[38;5;\(ansi256)m\(text)\u{1B}[0m" }

    /// `#RRGGBB`.
    public var hex: String { String(format: "#%02X%02X%02X", red, green, blue) }

    /// `#RRGGBB`.
    public var description: String { hex }
}

extension Advertisement {
    /// The colour of this advertisement's RSSI (red weak … green strong).
    public var signalColor: RSSIColor { RSSIColor(rssi: rssi) }
}
