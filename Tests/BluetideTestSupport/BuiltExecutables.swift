import Foundation

/// Executables of this package that SwiftPM builds next to the test bundle (a test target that
/// depends on an executable target gets it built before the tests run).
public enum BuiltExecutables {
    /// The `bluetide` command-line tool, or `nil` when it is not built next to the tests.
    public static var bluetide: URL? {
        var directory = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("bluetide")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }
}
